"""Vectorized seeds: K seeds of one variant trained as one stacked model.

Each seed keeps what it has when trained alone: its own initialisation (the task module built
under ``seed_everything(seed)``), its own data order (its own RNG, advanced exactly as the global
RNG of a lone run is: a base-seed draw per loader iterator, an epoch-seed draw per epoch) and its
own Adam state. The parameters are stacked along a new leading dimension and one step runs
``vmap(functional_call(task module, params_k, batch_k))`` over the K seeds, so the forward and
backward passes are K-batched kernels instead of K small ones.

Seeds with their own data (``data.data_seed: seed``, the authors' protocol) each draw their batches
from their own data set and are evaluated on their own held-out set. Their training sets may differ
by a few rows, so a batch shorter than the others (an epoch's last) is padded to the longest with
the task module's ``STACK_PADDING`` (one value per batch tensor): padded labels are the loss's
ignore index, so each seed's loss and metrics are those of its real rows.

Supported tasks: a module with ``loss_and_targets(batch)`` and ``log_train_metrics(...)`` and a
data module whose training loader is a :class:`~normbench.data.batching.ResumableLoader` (the
majority task). Dropout masks are not those of a lone run (vmap draws them per seed).
A stack interrupted mid-run (Ctrl-C: its records say ``interrupted``) is retrained from its start;
each seed still gets its own record, and a finished seed its own final checkpoint (the weights its
analyses read: :func:`save_seed_checkpoint`). Each seed's run directory is locked while the stack trains
(:mod:`normbench.training.run.runlock`): a seed another process is training is left out of the stack.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.pytorch.callbacks import Checkpoint
from lightning.pytorch.cli import SaveConfigCallback
from lightning.pytorch.loggers.logger import Logger, rank_zero_experiment
from torch import nn
from torch.func import functional_call, vmap
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.utils.data import DataLoader, IterableDataset
from tqdm.auto import tqdm

from normbench.data.batching import EpochBatchSampler, ResumableLoader, draw_epoch_seed
from normbench.io import atomic_write
from normbench.tasks.base import NormbenchModule, first_nonfinite_step, host_reads_are_free
from normbench.tasks.series import LEARNING_RATE
from normbench.training.cli import NormbenchCLI
from normbench.training.run.checkpointing import STATE_KEY, RunState, clear_run_dir
from normbench.training.run.resume import finished_record
from normbench.training.run.rundir import LAST_CHECKPOINT
from normbench.training.run.runlock import RunBusy, run_lock
from normbench.training.stopping.interrupts import sigint_restored, was_interrupted


def vmappable_attention(device: torch.device) -> contextlib.AbstractContextManager[None]:
    """Attention kernels that ``vmap`` can differentiate on ``device``.

    CUDA's fused SDPA kernels (flash, memory-efficient, cuDNN) have no batching rule for their
    backward (the memory-efficient one fails with "LSE is not correctly aligned"); the math kernel,
    softmax(q k^T / sqrt(d) + mask) v written with ordinary ops, batches like any other op. On the
    CPU every kernel batches, so nothing changes there.
    """
    if device.type != "cuda":
        return contextlib.nullcontext()
    return sdpa_kernel([SDPBackend.MATH])


IGNORE_INDEX = -100
"""The target ``F.cross_entropy`` ignores by default: what a padded row's label must become."""


class StackedBatches(IterableDataset):
    """Per step, one batch of each seed's own epoch order over its own data set, stacked: ``(tensors, rows)``
    with tensors of shape (K, B, ...) and ``rows[k]`` the real rows of seed k's batch (B unless padded).

    ``datasets``: one per seed (the same object when the seeds share their data). Seeds must take the
    same number of steps per epoch; a shorter batch is padded with ``padding`` (one value per tensor).
    """

    def __init__(
        self,
        datasets: list[Any],
        batch_size: int,
        generators: list[torch.Generator],
        padding: tuple[int, ...] | None = None,
    ) -> None:
        self.datasets, self.generators, self.padding = datasets, generators, padding
        # batches indexed where each data set lives (index tensors there, as a lone run's loader yields)
        self.samplers = [
            EpochBatchSampler(len(d), batch_size, True, g, device=getattr(d, "device", None))
            for d, g in zip(datasets, generators, strict=False)
        ]
        steps = {len(s) for s in self.samplers}
        if len(steps) != 1:
            raise ValueError(
                f"vectorize: the seeds' training sets ({', '.join(str(len(d)) for d in datasets)} rows) "
                f"give {sorted(steps)} batches of {batch_size} per epoch; stack seeds with as many "
                f"steps per epoch, or use --vectorize 1"
            )

    def __len__(self) -> int:
        return len(self.samplers[0])

    def __iter__(self) -> Iterator[tuple[tuple[torch.Tensor, ...], list[int]]]:
        for g in self.generators:  # a lone run's loader draws a base seed when its iterator is made
            draw_epoch_seed(g)
        return self._batches([iter(s) for s in self.samplers])

    def _batches(self, iterators: list[Iterator[list[int]]]) -> Iterator[tuple[tuple[torch.Tensor, ...], list[int]]]:
        for indices in zip(*iterators, strict=False):
            parts = [d.__getitems__(idx) for d, idx in zip(self.datasets, indices, strict=False)]
            rows = [len(idx) for idx in indices]
            if len(set(rows)) > 1:
                parts = [self._padded(part, max(rows)) for part in parts]
            yield tuple(torch.stack(column) for column in zip(*parts, strict=False)), rows

    def _padded(self, part: tuple[torch.Tensor, ...], rows: int) -> tuple[torch.Tensor, ...]:
        """``part`` with rows of ``padding`` appended up to ``rows``."""
        if self.padding is None or len(self.padding) != len(part):
            raise ValueError(
                "vectorize: these seeds' batches differ in size and the task module declares no "
                "STACK_PADDING for its batch tensors; use --vectorize 1"
            )
        return tuple(
            torch.cat([t, t.new_full((rows - len(t), *t.shape[1:]), value)])
            for t, value in zip(part, self.padding, strict=False)
        )


class StackedData(L.LightningDataModule):
    """The seeds' data modules as one: training batches from :class:`StackedBatches`; for validation
    the one shared loader, or (each seed with its own data) one loader per seed, seed k's at index k."""

    def __init__(
        self,
        inners: list[L.LightningDataModule],
        generators: list[torch.Generator],
        padding: tuple[int, ...] | None = None,
    ) -> None:
        super().__init__()
        self.inners, self.generators, self.padding = inners, generators, padding

    def prepare_data(self) -> None:
        for inner in self.inners:
            inner.prepare_data()

    def setup(self, stage: str) -> None:
        for inner in self.inners:  # attached to the stack's trainer: their data sets go to its device
            inner.trainer = self.trainer
            inner.setup(stage)

    def train_dataloader(self) -> DataLoader:
        loaders = [inner.train_dataloader() for inner in self.inners]
        if not all(isinstance(loader, ResumableLoader) for loader in loaders):
            raise ValueError("vectorize: the task's training loader must be a normbench ResumableLoader")
        datasets = [loader.dataset for loader in loaders]
        if len(loaders) == 1:
            datasets = datasets * len(self.generators)
        return DataLoader(
            StackedBatches(datasets, loaders[0].batch_sampler.batch_size, self.generators, self.padding),
            batch_size=None,
        )

    def val_dataloader(self) -> DataLoader | list[DataLoader]:
        if len(self.inners) == 1:
            return self.inners[0].val_dataloader()
        return [inner.val_dataloader() for inner in self.inners]


class SeedStack(NormbenchModule):
    """K task modules trained as one: stacked parameters, one vmapped loss, per-seed metrics.

    The members keep their metrics and serve as the functional template; before validation the
    stacked parameters are copied into them and each runs its own ``validation_step``. Everything
    a member logs goes out as ``seed<k>/<name>`` (see :class:`SeedRouter`).
    """

    def __init__(self, members: list[NormbenchModule], generators: list[torch.Generator]) -> None:
        first = members[0]
        super().__init__(first.arch, first.optim)
        self.members = nn.ModuleList(members)
        self.generators = generators
        self.names = [n for n, _ in first.named_parameters()]
        self.stacked = nn.ParameterList(
            [nn.Parameter(torch.stack([dict(m.named_parameters())[n].detach() for m in members])) for n in self.names]
        )
        for m in members:
            m.requires_grad_(False)
        self.diverged_at: list[int | None] = [None] * len(members)
        self._loss_of = (_LossOf(first),)  # a tuple: not a registered submodule
        for k, m in enumerate(members):  # members log through the stack, under their seed
            m.log = m.log_training = partial(self._log_as, k)

    def _log_as(self, k: int, name: str, value: Any, **kwargs: Any) -> None:
        # K members log every step: only what Lightning acts on goes through (NormbenchModule.log_training);
        # a seed's name is its own under one validation loader per seed too (no "/dataloader_idx_k")
        self.log_training(f"seed{k}/{name}", value, **{**kwargs, "prog_bar": False, "add_dataloader_idx": False})

    def configure_optimizers(self):  # noqa: ANN201 - Lightning's return type
        # Adam is elementwise: one AdamW over the stacked tensors is K independent AdamWs.
        optimizer = torch.optim.AdamW(self.stacked.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, self.lr_factor)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": schedule, "interval": "step", "name": LEARNING_RATE},
        }

    def seed_losses(self, batch: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``loss_and_targets`` of every seed on its own batch, vmapped: shapes (K,), (K, ...), (K, ...)."""
        (loss_of,) = self._loss_of

        def one(params: tuple[torch.Tensor, ...], seed_batch: tuple[torch.Tensor, ...]) -> Any:
            return functional_call(
                loss_of, {f"module.{n}": p for n, p in zip(self.names, params, strict=False)}, (seed_batch,)
            )

        with vmappable_attention(self.stacked[0].device):
            return vmap(one, randomness="different")(tuple(self.stacked), batch)

    def training_step(self, batch: tuple[tuple[torch.Tensor, ...], list[int]], batch_idx: int) -> torch.Tensor:
        tensors, rows = batch
        losses, logits, targets = self.seed_losses(tensors)
        # each seed's first non-finite step, kept on the device and read as NormbenchModule.check_finite reads it
        self.first_nonfinite = first_nonfinite_step(losses.detach(), self.global_step, self.first_nonfinite)
        if host_reads_are_free(losses.device) or self.logs_this_step():
            self.read_divergence()
        alive = [k for k, step in enumerate(self.diverged_at) if step is None]
        for k in alive:
            member = self.members[k]
            seed_logits, seed_targets = logits[k], targets[k]
            if rows[k] < len(tensors[0][k]):  # a padded batch: its real rows only
                real = seed_targets != IGNORE_INDEX
                seed_logits, seed_targets = seed_logits[real], seed_targets[real]
            member.log_train_metrics(losses[k], seed_logits, seed_targets, batch_size=rows[k])
        if not alive:
            self.trainer.should_stop = True
        # a seed whose loss went bad since the last read adds nothing (nor any gradient) from that step on
        return torch.where(self.first_nonfinite < 0, losses, 0.0).sum()

    def on_validation_start(self) -> None:
        for g in self.generators:  # a lone run's validation loader draws a base seed too
            draw_epoch_seed(g)
        self.read_divergence()  # validation reads the device anyway; a diverged seed is not evaluated
        self.to_members()

    def read_divergence(self) -> None:
        """Copy each seed's first non-finite step from the device (``diverged_at``); the base class's hooks call
        this at each epoch's end and when training ends."""
        if self.first_nonfinite is not None:
            self.diverged_at = [None if s < 0 else s for s in self.first_nonfinite.tolist()]

    def to_members(self) -> None:
        """Copy each seed's slice of the stacked parameters into its own module."""
        with torch.no_grad():
            for k, member in enumerate(self.members):
                params = dict(member.named_parameters())
                for name, stacked in zip(self.names, self.stacked, strict=False):
                    params[name].copy_(stacked[k])

    def validation_step(self, batch: Any, batch_idx: int, dataloader_idx: int | None = None) -> None:
        # one shared loader: every seed evaluates each batch; one loader per seed: seed k evaluates loader k
        seeds = range(len(self.members)) if dataloader_idx is None else [dataloader_idx]
        for k in seeds:
            if self.diverged_at[k] is None:  # a lone run stops at divergence: no more evaluations
                self.members[k].validation_step(batch, batch_idx)


class _LossOf(nn.Module):
    def __init__(self, module: NormbenchModule) -> None:
        super().__init__()
        self.module = module

    def forward(self, batch: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.module.loss_and_targets(batch)


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


def stack_traits(config: dict[str, Any]) -> tuple[int | None, bool]:
    """A run config's batch size (``None`` where it names none) and whether its task module stacks
    (:func:`can_stack`): what decides whether stacking its seeds pays."""
    batch = ((config.get("data") or {}).get("init_args") or {}).get("batch_size")
    module, _, name = str((config.get("model") or {}).get("class_path", "")).rpartition(".")
    cls = getattr(importlib.import_module(module), name, None) if module else None
    return (int(batch) if batch else None), can_stack(cls)


def can_stack(module: Any) -> bool:
    """Whether a task module (class or instance) supports stacked seeds: it has ``loss_and_targets`` and
    ``log_train_metrics``."""
    return all(hasattr(module, name) for name in ("loss_and_targets", "log_train_metrics"))


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
    trainer.callbacks = [c for c in trainer.callbacks if not isinstance(c, (Checkpoint, SaveConfigCallback, RunState))]
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
        extra: dict[str, Any] = {"final_step": trainer.global_step, "fit_time_s": fit_time}
        if stack.diverged_at[k] is None:
            extra["checkpoint"] = str(save_seed_checkpoint(clis[k], trainer))
        if stack.diverged_at[k] is not None:
            # as a lone run: the step whose loss is not finite still completes, then training stops
            extra.update(final_step=stack.diverged_at[k] + 1, diverged_at_step=stack.diverged_at[k])
        clis[k].write_hparams(extra["final_step"])
        r.write("diverged" if stack.diverged_at[k] is not None else "done", **extra)
    return [r.path for r in recorders]


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
