"""Training one run: :func:`train` fits a run of :class:`~normbench.training.cli.NormbenchCLI` and writes its record.

A finished run of the same config is left as it is and an interrupted one resumes from its last checkpoint
(:mod:`normbench.training.run.resume`); the record, next to the run's TensorBoard logs in the run's own directory
(:mod:`normbench.training.run.rundir`), says how the fit ended: ``done``, ``diverged``, ``interrupted`` or ``failed``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from lightning.pytorch.utilities import rank_zero_only
from lightning.pytorch.utilities.model_helpers import is_overridden

from normbench.archive.record import Outcome
from normbench.data.preflight import check_data
from normbench.io import Config, check_writable
from normbench.training.cli import NormbenchCLI
from normbench.training.config import preset_args
from normbench.training.run.records import RunRecordLogger
from normbench.training.run.resume import finished_record, start_point
from normbench.training.run.rundir import checkpoint_path
from normbench.training.run.runlock import run_lock
from normbench.training.stopping.interrupts import interruption, sigint_restored, was_interrupted

if TYPE_CHECKING:
    from typing import Unpack  # Python 3.11; only the type checker reads it


def train(args: list[str] | Config) -> Path:
    """Parse ``args``, fit, and write the run record; returns the record's path.

    Before the record is written: the runs directory must be writable, and the data module is prepared
    for the fit stage (:func:`normbench.data.preflight.check_data`), so bad data is one ``ValueError``
    and nothing is written. The run directory is then locked (:mod:`normbench.training.run.runlock`): a run
    another process is training raises :class:`~normbench.training.run.runlock.RunBusy`.

    The record's status is ``done``, ``diverged`` (non-finite loss; training stopped),
    ``interrupted`` (Ctrl-C or SIGTERM; ``KeyboardInterrupt``, or its kind ``Terminated``, is raised
    again, and the same command resumes the run from its last checkpoint) or ``failed`` (an exception,
    re-raised after the record is written). An interrupted run of the same config resumes from its last checkpoint
    (:func:`~normbench.training.run.resume.start_point`); a finished one is left as it is. A task whose module has a
    ``test_step`` (its analysis of the trained model) gets a test pass after a finished fit.
    """
    cli = NormbenchCLI(args=preset_args(args) if isinstance(args, list) else args)
    recorder: RunRecordLogger = cli.recorder
    check_writable(cli.config.runs_dir, "runs_dir")
    done = finished_record(recorder)
    if done is not None:
        print(
            f"normbench: {recorder.path.parent} already holds a finished run of this configuration "
            f"({done}); nothing to train",
            file=sys.stderr,
        )
        return recorder.path
    if rank_zero_only.rank != 0:  # rank 0 checked the data, holds the lock and writes the record
        return fit_run(cli)
    check_data(cli.datamodule)
    with run_lock(recorder.path.parent):
        done = finished_record(recorder, report=False)  # finished by another process meanwhile
        if done is not None:
            print(
                f"normbench: {recorder.path.parent} was finished by another process ({done}); nothing to train",
                file=sys.stderr,
            )
            return recorder.path
        return fit_run(cli)


def fit_run(cli: NormbenchCLI) -> Path:
    """Fit (resuming where an earlier attempt stopped), test, and write the record: the body of :func:`train`."""
    recorder: RunRecordLogger = cli.recorder
    checkpoint = start_point(recorder)
    recorder.write("running")
    cli.write_layout()
    start = time.perf_counter()
    with sigint_restored():
        try:
            cli.trainer.fit(cli.model, datamodule=cli.datamodule, ckpt_path=checkpoint)
        except BaseException as exc:
            stopped(cli, exc, final_step=cli.trainer.global_step)
            raise
        diverged_at = getattr(cli.model, "diverged_at", None)
        status = "diverged" if diverged_at is not None else "done"
        extra: Outcome = {"final_step": cli.trainer.global_step}
        try:
            if status == "done" and cli.run_state.validation_after_fit:
                # resumed from the final step's checkpoint, written before the final validation
                cli.trainer.validate(cli.model, datamodule=cli.datamodule, verbose=False)
        except BaseException as exc:
            stopped(cli, exc, **extra)
            raise
        extra["fit_time_s"] = round(time.perf_counter() - start, 3)
        if diverged_at is not None:  # as on the CPU: the bad step completes, then training stops (a GPU reads
            # the flag later, so it may have trained a few steps more; the record counts to the bad step)
            extra["final_step"], extra["diverged_at_step"] = diverged_at + 1, diverged_at
        if checkpoint is not None:
            extra["resumed_from"] = str(checkpoint)
        ckpt = cli.trainer.checkpoint_callback
        if ckpt is not None and cli.run_state.saved_step != cli.trainer.global_step and status == "done":
            # the final step's weights, so every analysis of the run (test stage, token report,
            # decomposition) reads the model the record describes, not an earlier checkpoint
            final = Path(ckpt.last_model_path or checkpoint_path(cli.run_dir))
            cli.trainer.save_checkpoint(final)
            extra["checkpoint"] = str(final)
        elif ckpt is not None and ckpt.last_model_path:
            extra["checkpoint"] = ckpt.last_model_path
        elif checkpoint is not None:  # resumed at the final step: no checkpoint written since
            extra["checkpoint"] = str(checkpoint)
        if status == "done" and is_overridden("test_step", cli.model):
            # the task's analysis of the trained model (e.g. unselectable keys on held-out text)
            start = time.perf_counter()
            try:
                cli.trainer.test(cli.model, datamodule=cli.datamodule, verbose=False)
            except BaseException as exc:
                stopped(cli, exc, prefix="test stage: ", **extra)
                raise
            extra["test_time_s"] = round(time.perf_counter() - start, 3)
    recorder.write(status, **extra)
    try:
        cli.write_hparams(cli.trainer.global_step)
    except Exception as exc:  # noqa: BLE001 - the run is finished and recorded; only its HParams entry is missing
        print(f"normbench: warning: TensorBoard HParams not written: {type(exc).__name__}: {exc}", file=sys.stderr)
    return recorder.path


def stopped(cli: NormbenchCLI, exc: BaseException, prefix: str = "", **extra: Unpack[Outcome]) -> None:
    """Record why the run stopped: ``interrupted`` for Ctrl-C or SIGTERM (then ``KeyboardInterrupt``, or
    :class:`~normbench.training.stopping.interrupts.Terminated` after a SIGTERM, is raised in place of Lightning's
    ``SystemExit``), else ``failed`` with the error (the caller re-raises it)."""
    if was_interrupted(exc, cli.interrupt_flag):
        cli.recorder.write("interrupted", **extra)
        raise interruption(exc) from None
    failed: Outcome = {"error": f"{prefix}{type(exc).__name__}: {exc}", **extra}
    cli.recorder.write("failed", **failed)
