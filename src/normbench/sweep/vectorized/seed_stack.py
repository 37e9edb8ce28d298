"""K task modules trained as one: stacked parameters, one vmapped loss, per-seed metrics.

Each seed keeps its own initialisation (the task module built under ``seed_everything(seed)``) and its own Adam
state. The parameters are stacked along a new leading dimension and one step runs
``vmap(functional_call(task module, params_k, batch_k))`` over the K seeds, so the forward and backward passes are
K-batched kernels instead of K small ones. A task module stacks when it has ``loss_and_targets(batch)`` and
``log_train_metrics(...)`` (:func:`can_stack`). Dropout masks are not those of a lone run (vmap draws them per seed).
"""

from __future__ import annotations

import contextlib
import importlib
from functools import partial
from typing import Any

import torch
from torch import nn
from torch.func import functional_call, vmap
from torch.nn.attention import SDPBackend, sdpa_kernel

from normbench.data.batching import draw_epoch_seed
from normbench.io import Config
from normbench.sweep.vectorized.batches import IGNORE_INDEX
from normbench.tasks.base import NormbenchModule, first_nonfinite_step, host_reads_are_free
from normbench.tasks.series import LEARNING_RATE


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


class SeedStack(NormbenchModule):
    """K task modules trained as one: stacked parameters, one vmapped loss, per-seed metrics.

    The members keep their metrics and serve as the functional template; before validation the
    stacked parameters are copied into them and each runs its own ``validation_step``. Everything
    a member logs goes out as ``seed<k>/<name>`` (see :class:`~normbench.sweep.vectorized.fit.SeedRouter`).
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
        self.diverged_at: list[int | None] = [None] * len(members)  # type: ignore[assignment]  # one per seed
        self._loss_of = (_LossOf(first),)  # a tuple: not a registered submodule
        for k, m in enumerate(members):  # members log through the stack, under their seed
            m.log = m.log_training = partial(self._log_as, k)  # type: ignore[method-assign]

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
            member.log_train_metrics(losses[k], seed_logits, seed_targets, batch_size=rows[k])  # type: ignore[operator]
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
                self.members[k].validation_step(batch, batch_idx)  # type: ignore[operator]


class _LossOf(nn.Module):
    def __init__(self, module: NormbenchModule) -> None:
        super().__init__()
        self.module = module

    def forward(self, batch: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.module.loss_and_targets(batch)  # type: ignore[operator]


def stack_traits(config: Config) -> tuple[int | None, bool]:
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
