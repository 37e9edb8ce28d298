"""The seeds of one variant trained as one stacked model, each recorded as the run it stands for.

:func:`train_stack` builds each seed's run as a lone run does, locks each seed's run directory
(:mod:`normbench.training.run.runlock`: a seed another process is training is left out of the stack) and fits the
stack (:class:`~normbench.sweep.vectorized.seed_stack.SeedStack`) on the seeds' stacked batches
(:class:`~normbench.sweep.vectorized.batches.StackedData`). Supported tasks: a module with ``loss_and_targets(batch)``
and ``log_train_metrics(...)`` and a data module whose training loader is a
:class:`~normbench.data.batching.ResumableLoader` (the majority task). A stack interrupted mid-run (Ctrl-C: its records
say ``interrupted``) is retrained from its start; each seed still gets its own record (its metrics routed to it by
:class:`SeedRouter`), and a finished seed its own final checkpoint (the weights its analyses read:
:func:`save_seed_checkpoint`).
"""

from __future__ import annotations

import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import lightning as L
import torch
from lightning.pytorch.callbacks import Checkpoint
from lightning.pytorch.cli import SaveConfigCallback
from lightning.pytorch.loggers.logger import Logger, rank_zero_experiment
from tqdm.auto import tqdm

from normbench.io import atomic_write
from normbench.sweep.vectorized.batches import IGNORE_INDEX, StackedData
from normbench.sweep.vectorized.seed_stack import SeedStack, can_stack
from normbench.training.cli import NormbenchCLI
from normbench.training.run.checkpointing import STATE_KEY, RunState, clear_run_dir
from normbench.training.run.resume import finished_record
from normbench.training.run.rundir import LAST_CHECKPOINT
from normbench.training.run.runlock import RunBusy, run_lock
from normbench.training.stopping.interrupts import sigint_restored, was_interrupted


class SeedRouter(Logger):
    """Sends ``seed<k>/<name>`` metrics to seed k's own loggers (TensorBoard, run record) as ``<name>``, and
    what all seeds share (the learning rate, the epoch) to every seed's loggers."""

    def __init__(self, per_seed: list[list[Logger]]) -> None:
        super().__init__()
        self.per_seed = per_seed

    @property
    def name(self) -> str:
        return "seeds"

    @property
    def version(self) -> str:
        return "stack"

    @property
    @rank_zero_experiment
    def experiment(self) -> None:
        return None

    def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
        pass  # each seed's record holds its resolved config

    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        routed: dict[int, dict[str, float]] = {}
        for key, value in metrics.items():
            if key.startswith("seed") and "/" in key:
                head, rest = key.split("/", 1)
                routed.setdefault(int(head[4:]), {})[rest] = value
            else:
                for k in range(len(self.per_seed)):
                    routed.setdefault(k, {})[key] = value
        for k, values in routed.items():
            for logger in self.per_seed[k]:
                logger.log_metrics(values, step)

    def save(self) -> None:
        for loggers in self.per_seed:
            for logger in loggers:
                logger.save()

    def finalize(self, status: str) -> None:
        for loggers in self.per_seed:
            for logger in loggers:
                logger.finalize(status)


def train_stack(arg_lists: list[list[str]]) -> list[Path]:
    """Train the runs of ``arg_lists`` (one variant, K seeds) as one stacked model; returns the records of the
    seeds it trained (a seed another process is training, or has finished meanwhile, is left out, one line each).

    Ctrl-C records every seed of the stack as ``interrupted`` and raises ``KeyboardInterrupt``.
    """
    clis, generators = [], []
    for args in arg_lists:
        cli = NormbenchCLI(args=args)  # seeds, then builds this seed's model exactly as a lone run does
        generator = torch.Generator()
        generator.set_state(torch.get_rng_state())
        clis.append(cli)
        generators.append(generator)
    with ExitStack() as locks:
        kept = []
        for cli, generator in zip(clis, generators, strict=False):
            try:
                locks.enter_context(run_lock(cli.run_dir))
            except RunBusy as exc:
                tqdm.write(f"normbench: {exc}", file=sys.stderr)
                continue
            if finished_record(cli.recorder, report=False) is None:
                kept.append((cli, generator))
        if not kept:
            return []
        clis, generators = [c for c, _ in kept], [g for _, g in kept]
        return fit_stack(clis, generators)


def fit_stack(clis: list[NormbenchCLI], generators: list[torch.Generator]) -> list[Path]:
    """The body of :func:`train_stack`: the seeds' CLIs (their run directories locked) and data-order generators."""
    members = [cli.model for cli in clis]
    if not all(map(can_stack, members)):
        raise ValueError(
            f"vectorize: task module {type(members[0]).__name__} does not support vectorized seeds "
            f"(needs loss_and_targets and log_train_metrics); use --vectorize 1"
        )
    if any(getattr(m, "_compiled", ()) for m in members):
        raise ValueError("compile: stacked seeds train uncompiled; drop --compile or use --vectorize 1")
    hashes = {cli.recorder.meta["config_hash"] for cli in clis}
    if len(hashes) != 1:
        raise ValueError("vectorize: a stack must hold seeds of one variant (one config hash)")
    shared = len({repr(getattr(cli.datamodule, "spec", None)) for cli in clis}) == 1
    padding = getattr(members[0], "STACK_PADDING", None)
    if padding is not None and IGNORE_INDEX not in padding:
        raise ValueError(
            f"vectorize: {type(members[0]).__name__}.STACK_PADDING must pad its labels with "
            f"{IGNORE_INDEX}, the target the loss ignores, got {padding}"
        )
    stack = SeedStack(members, generators)
    data = StackedData([clis[0].datamodule] if shared else [cli.datamodule for cli in clis], generators, padding)
    if not shared:  # seeds that cannot share a stack (other steps per epoch) fail here, before a record is touched
        data.prepare_data()
        data.setup("fit")
        data.train_dataloader()
    trainer: L.Trainer = clis[0].trainer
    trainer.loggers = [SeedRouter([cli.trainer.loggers for cli in clis])]
    # no checkpoints or saved config for the stack itself: every seed's record holds its config
    # Lightning's callback connector sets ``callbacks`` on the Trainer (its class does not declare it)
    callbacks = trainer.callbacks  # type: ignore[attr-defined]
    trainer.callbacks = [c for c in callbacks if not isinstance(c, (Checkpoint, SaveConfigCallback, RunState))]  # type: ignore[attr-defined]
    recorders = [cli.recorder for cli in clis]
    for r in recorders:
        clear_run_dir(r.path.parent)  # a stack restarts from its first step
        r.meta["vectorized"] = {"stack_size": len(clis), "seeds": [c.recorder.meta["seed"] for c in clis]}
        r.write("running")
    for cli in clis:
        cli.write_layout()
    start = time.perf_counter()
    with sigint_restored():
        try:
            trainer.fit(stack, datamodule=data)
        except BaseException as exc:
            if was_interrupted(exc, clis[0].interrupt_flag):
                for r in recorders:
                    r.write("interrupted", final_step=trainer.global_step)
                raise KeyboardInterrupt from None
            for r in recorders:
                r.write("failed", error=f"{type(exc).__name__}: {exc}", final_step=trainer.global_step)
            raise
    fit_time = round(time.perf_counter() - start, 3)
    stack.to_members()
    for k, r in enumerate(recorders):
        extra: SeedEnd = {"final_step": trainer.global_step, "fit_time_s": fit_time}
        if stack.diverged_at[k] is None:
            extra["checkpoint"] = str(save_seed_checkpoint(clis[k], trainer))
        diverged_at = stack.diverged_at[k]
        if diverged_at is not None:
            # as a lone run: the step whose loss is not finite still completes, then training stops
            extra["final_step"] = diverged_at + 1
            extra["diverged_at_step"] = diverged_at
        clis[k].write_hparams(extra["final_step"])
        r.write("diverged" if stack.diverged_at[k] is not None else "done", **extra)
    return [r.path for r in recorders]


class SeedEnd(TypedDict):
    """What a stacked seed's record gets when the stack has trained (beside its status): the ``final_step`` it
    reached, the stack's ``fit_time_s``, its final ``checkpoint`` (a seed that did not diverge) or the step its loss
    was not finite at (``diverged_at_step``; ``final_step`` is then the step after)."""

    final_step: int
    fit_time_s: float
    checkpoint: NotRequired[str]
    diverged_at_step: NotRequired[int]


def save_seed_checkpoint(cli: NormbenchCLI, trainer: L.Trainer) -> Path:
    """A seed's final weights as the checkpoint its lone run would leave (``<run>/checkpoints/last.ckpt``, written
    atomically), so every analysis of a finished run (the decomposition, the token reports) reads stacked seeds too.

    It holds what loading a run needs: the module's weights and hyperparameters and the run's config hash; not the
    optimizer or loop state (a stack restarts from its first step; it is never resumed from here).
    """
    member = cli.model
    checkpoint = {
        "epoch": trainer.current_epoch,
        "global_step": trainer.global_step,
        "pytorch-lightning_version": L.__version__,
        "state_dict": member.state_dict(),
        "hparams_name": "kwargs",
        "hyper_parameters": dict(member.hparams),
        STATE_KEY: {"config_hash": cli.recorder.meta["config_hash"], "stacked": True},
    }
    path = cli.run_dir / LAST_CHECKPOINT
    atomic_write(path, lambda tmp: torch.save(checkpoint, tmp))
    return path
