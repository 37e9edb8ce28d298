"""Where a run of a config starts: a finished run is not trained again, an interrupted one continues where it stopped.

The record in the run's directory decides. A finished run (``done`` or ``diverged``, its record and final checkpoint
its own) is left as it is (:func:`finished_record`); a ``running``, ``failed`` or ``interrupted`` one of the same
config resumes from its ``last.ckpt`` (:func:`start_point`); any other starts afresh, its directory cleared first.
"""

from __future__ import annotations

import sys
from pathlib import Path

from lightning.pytorch.utilities import rank_zero_only

from normbench.archive.files.writing import checkpoint_step
from normbench.training.run.checkpointing import clear_run_dir, resume_checkpoint
from normbench.training.run.records import RESUMABLE, RunRecordLogger, read_record
from normbench.training.run.rundir import record_config_hash
from normbench.training.run.verify import finished_status


def start_point(recorder: RunRecordLogger) -> Path | None:
    """The checkpoint an interrupted run of the same config continues from, or ``None``.

    A run resumes when its record says ``running``, ``failed`` or ``interrupted``, is its run's (the
    config hash recomputed from the record's config is this run's and the record's own) and its
    ``last.ckpt`` belongs to that config. Otherwise it starts afresh, and what an earlier attempt
    left in the run directory (checkpoints, TensorBoard events) is removed first. A corrupt or
    edited record is reported and its run redone from the start; a consistent record of another
    config is refused, and nothing is changed.
    """
    run_dir, wanted = recorder.path.parent, recorder.meta["config_hash"]
    previous = None
    if recorder.path.exists():
        try:
            previous = read_record(recorder.path)
            found = record_config_hash(previous)
        except ValueError as exc:
            print(f"normbench: {exc}; the run is redone from the start", file=sys.stderr)
            previous = None
        else:
            if found != wanted and previous.get("config_hash") == found:
                raise ValueError(
                    f"runs_dir: {run_dir} holds a run of config {found}, not {wanted}; nothing was changed"
                )
            if found != wanted or previous.get("config_hash") != found:
                print(
                    f"normbench: run record {recorder.path}: config_hash {previous.get('config_hash')!r} is not the "
                    f"hash of its config ({found}); the run is redone from the start",
                    file=sys.stderr,
                )
                previous = None
    checkpoint = None
    if previous and previous.get("status") in RESUMABLE:
        checkpoint = resume_checkpoint(run_dir, wanted)
    if checkpoint is not None:
        print(f"normbench: resuming {run_dir} from {checkpoint}", file=sys.stderr)
        recorder.continue_from(previous, checkpoint_step(checkpoint))
    elif rank_zero_only.rank == 0:
        clear_run_dir(run_dir)
    return checkpoint


def finished_record(recorder: RunRecordLogger, report: bool = True) -> str | None:
    """The status of a finished run of the same config already in the run's directory, else ``None``.

    A finished run is never trained again (its record, checkpoints and events stay as they are). A
    finished run whose record or final checkpoint is broken (:func:`normbench.training.run.verify.finished_status`)
    is reported (``report``) and redone.
    """
    try:
        return finished_status(recorder.path, recorder.meta["config_hash"])
    except ValueError as exc:
        if report:
            print(f"normbench: {exc}; the run is redone", file=sys.stderr)
        return None
