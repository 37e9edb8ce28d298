"""The shared LightningModule: optimizer, learning-rate schedule and the divergence guard.

Task modules (:mod:`normbench.tasks`) subclass :class:`NormbenchModule`, build their network from
their architecture config in ``__init__`` and implement ``training_step`` / ``validation_step``
with torchmetrics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

import lightning as L
import torch
from torchmetrics import MeanMetric, Metric

from normbench.nn.blocks import Attention
from normbench.nn.config import ArchConfig
from normbench.nn.norms import Norm
from normbench.tasks.series import LEARNING_RATE, TRAIN_LOSS_EPOCH, TRAIN_LOSS_STEP, TaskSeries

if TYPE_CHECKING:
    from typing import Unpack  # Python 3.11; only the type checker reads it


@dataclass(frozen=True)
class OptimConfig:
    """Adam(W) with linear warm-up and linear decay: lr_t = lr * max(0, 1 - t / lr_decay_steps).

    Args:
        lr: peak learning rate.
        lr_decay_steps: steps over which the rate decays linearly to zero (may exceed the
            trained steps: the majority protocol decays over 10x its training length).
        warmup_steps: linear warm-up from 0 to ``lr`` before the decay.
        weight_decay: decoupled weight decay (0 gives plain Adam).
    """

    lr: float = 1e-3
    lr_decay_steps: int = 140_000
    warmup_steps: int = 0
    weight_decay: float = 0.0

    def __post_init__(self) -> None:
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"model.optim.lr: must be a positive number, got {self.lr!r}")
        if self.lr_decay_steps <= 0 or self.warmup_steps < 0:
            raise ValueError(
                f"model.optim.lr_decay_steps must be positive and model.optim.warmup_steps >= 0, "
                f"got {self.lr_decay_steps} and {self.warmup_steps}"
            )
        if not (self.weight_decay >= 0 and math.isfinite(self.weight_decay)):
            raise ValueError(f"model.optim.weight_decay: must be a finite number >= 0, got {self.weight_decay!r}")


class LogOptions(TypedDict, total=False):
    """The keywords of ``LightningModule.log`` a training step's values are logged with
    (:meth:`NormbenchModule.log_training`; a stacked seed's add ``add_dataloader_idx``)."""

    on_step: bool
    on_epoch: bool
    prog_bar: bool
    batch_size: int | None
    sync_dist: bool
    add_dataloader_idx: bool


class NormbenchModule(L.LightningModule):
    """A task's LightningModule: the network ``self.model`` built from ``arch``, trained with ``optim``.

    Subclasses take ``(arch: <Architecture>Config, optim: OptimConfig)``, build ``self.model`` and
    implement the steps with torchmetrics, logging only the series they declare in ``SERIES``
    (:mod:`normbench.tasks.series`).
    """

    SERIES: ClassVar[TaskSeries]

    def __init__(self, arch: ArchConfig, optim: OptimConfig) -> None:
        super().__init__()
        self.arch, self.optim = arch, optim
        self.train_loss_mean = RunningMean()
        self._registered_epoch: dict[str, int] = {}  # epoch-level metrics registered with Lightning, by epoch
        self._held_step_logs: dict[str, tuple[Any, LogOptions]] = {}  # step values of a non-logging step
        self._compiled: tuple[Any, ...] = ()  # (the compiled network,) once compile_network is called
        self.diverged_at: int | None = None  # the first step with a NaN or infinite loss
        self.first_nonfinite: torch.Tensor | None = None  # the same, on the device (see check_finite)

    def compile_network(self, mode: str) -> None:
        """Train through ``torch.compile(self.model, mode=mode)``: fused kernels (``default``), and CUDA graphs
        that replay a whole step's launches at once (``reduce-overhead``). The compiled network shares the
        parameters of ``self.model``; evaluation and every analysis run ``self.model`` itself, so their hooks
        see each module as written. Results agree with eager training within the cross-platform tolerance,
        not bit for bit: the run's provenance names the mode."""
        self._compiled = (torch.compile(self.model, mode=mode, dynamic=False),)  # one static graph per batch shape

    def network(self) -> torch.nn.Module:
        """The network a forward pass runs: compiled while training (if :meth:`compile_network` was called), else
        ``self.model``."""
        return self._compiled[0] if self._compiled and self.training else self.model

    @property
    def lr(self) -> float:
        return self.optim.lr

    @property
    def weight_decay(self) -> float:
        return self.optim.weight_decay

    def log_train_loss(self, loss: torch.Tensor, batch_size: int) -> None:
        """Log the loss as ``train/loss_step`` and its epoch mean (weighted by batch size) as ``train/loss_epoch``."""
        # sync_dist: under DDP the logged step loss is the mean over all ranks' batches
        # prog_bar: Lightning then converts the kept value at every step's end (a host read): on the CPU only
        self.log_training(
            TRAIN_LOSS_STEP,
            loss,
            on_step=True,
            on_epoch=False,
            prog_bar=host_reads_are_free(loss.device),
            batch_size=batch_size,
            sync_dist=True,
        )
        self.train_loss_mean.update(loss.detach(), weight=batch_size)  # epoch only: no per-batch value
        self.log_training(TRAIN_LOSS_EPOCH, self.train_loss_mean, on_step=False, on_epoch=True, batch_size=batch_size)

    def log_training(self, name: str, value: Any, **kwargs: Unpack[LogOptions]) -> None:
        """``self.log`` from a training step, minus the calls Lightning would not act on (each costs
        about 0.6 ms, a few percent of a small model's step).

        * An epoch-level metric object (``on_epoch``, not ``on_step``) is registered once per epoch:
          Lightning keeps the reference and computes it at the epoch's end.
        * A step-only value is logged on the steps Lightning sends to the loggers (every
          ``log_every_n_steps``, a step that stops training, every step of ``fast_dev_run``); on the
          other steps it is held, and logged after the callbacks only if one of them stops training
          there (:meth:`on_train_batch_end`). The progress bar shows the last logged value.
        * Under DDP every call goes through (``sync_dist`` collectives must match on every rank).
        """
        trainer = self.trainer
        on_step, on_epoch = kwargs.get("on_step", True), kwargs.get("on_epoch", False)  # Lightning's training defaults
        if not trainer.training or trainer.world_size > 1 or (on_step and on_epoch):
            self.log(name, value, **kwargs)
        elif isinstance(value, Metric) and on_epoch:
            if self._registered_epoch.get(name) != self.current_epoch:
                self._registered_epoch[name] = self.current_epoch
                self.log(name, value, **kwargs)
        elif on_step and not self.logs_this_step():
            self._held_step_logs[name] = (value.detach() if isinstance(value, torch.Tensor) else value, kwargs)
        else:
            self.log(name, value, **kwargs)

    def logs_this_step(self) -> bool:
        """Whether Lightning sends this training step's values to the loggers, as far as known during the
        step (a callback may still stop training at its end: see :meth:`on_train_batch_end`)."""
        trainer = self.trainer
        every = trainer.log_every_n_steps
        return bool(trainer.fast_dev_run) or trainer.should_stop or (every > 0 and (self.global_step + 1) % every == 0)

    def on_train_start(self) -> None:
        self._registered_epoch.clear()  # a second fit of the same module registers its metrics again
        self._held_step_logs.clear()

    def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
        """Log the held step values if a callback stopped training at this step (Lightning then logs it)."""
        held, self._held_step_logs = self._held_step_logs, {}
        if held and self.trainer.should_stop:
            for name, (value, kwargs) in held.items():
                self.log(name, value, **kwargs)

    def lr_factor(self, step: int) -> float:
        """Multiplier of ``lr`` at optimizer step ``step``."""
        if step < self.optim.warmup_steps:
            return (step + 1) / self.optim.warmup_steps
        return max(0.0, 1.0 - step / self.optim.lr_decay_steps)

    def configure_optimizers(self):  # noqa: ANN201 - Lightning's return type
        params: Any = self.parameters()
        if self.weight_decay:
            exempt = {id(p) for p in undecayed_parameters(self)}
            params = [
                {"params": [p for p in self.parameters() if id(p) not in exempt]},
                {"params": [p for p in self.parameters() if id(p) in exempt], "weight_decay": 0.0},
            ]
        optimizer = torch.optim.AdamW(params, lr=self.lr, weight_decay=self.weight_decay)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, self.lr_factor)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": schedule, "interval": "step", "name": LEARNING_RATE},
        }

    def check_data_fits(self, tokenizer_vocab: int, longest: int, length_field: str) -> None:
        """One-line errors when the data's tokens or sequences do not fit the embeddings
        (``arch.vocab_size`` rows, ``arch.max_positions`` positions)."""
        if tokenizer_vocab > self.arch.vocab_size:
            raise ValueError(
                f"model.arch.vocab_size: {self.arch.vocab_size} is smaller than the "
                f"tokenizer's {tokenizer_vocab} tokens (data.vocab_size)"
            )
        if longest > self.arch.max_positions:
            raise ValueError(
                f"model.arch.max_positions: {self.arch.max_positions} is shorter than {length_field}={longest}"
            )

    def model_inputs(self, batch: Any) -> tuple[tuple[torch.Tensor, ...], torch.Tensor | None]:
        """(arguments of ``self.model`` for an evaluation batch, padding mask (B, T) True at padding or None).

        Analyses that run the bare network (the embedding decomposition) read batches through this.
        """
        raise NotImplementedError(f"{type(self).__name__} does not say how its batches feed its model")

    def check_finite(self, loss: torch.Tensor) -> None:
        """Stop training (the record says "diverged", at the first step whose loss is NaN or infinite).

        On the CPU every step is checked. On an accelerator, reading the loss would make the host wait
        for the device at every step, so the first bad step is kept on the device and read on the steps
        that are logged anyway (``log_every_n_steps``), at each evaluation, at each epoch's end and when
        training ends: training may run a few steps past the divergence before it stops, and
        ``diverged_at`` still names the first bad step.
        """
        self.first_nonfinite = first_nonfinite_step(loss.detach().reshape(1), self.global_step, self.first_nonfinite)
        if host_reads_are_free(loss.device) or self.logs_this_step():
            self.read_divergence()

    def read_divergence(self) -> None:
        """Copy the first non-finite step from the device (once known, training stops)."""
        if self.first_nonfinite is not None and self.diverged_at is None:
            first = int(self.first_nonfinite[0])
            if first >= 0:
                self.diverged_at = first
                self.trainer.should_stop = True

    def on_validation_start(self) -> None:
        self.read_divergence()  # validation reads the device anyway: a diverged run's stop is not put off further

    def on_train_epoch_end(self) -> None:
        self.read_divergence()

    def on_train_end(self) -> None:
        self.read_divergence()


def host_reads_are_free(device: torch.device) -> bool:
    """Whether reading a tensor of ``device`` on the host costs no wait for the device (true of the CPU only)."""
    return device.type == "cpu"


def first_nonfinite_step(losses: torch.Tensor, step: int, first: torch.Tensor | None) -> torch.Tensor:
    """Per loss, the first step at which it was NaN or infinite (-1: none yet), updated on the device.

    ``losses``: (K,) this step's losses; ``first``: the previous result (``None`` at the first step).
    """
    if first is None:
        first = torch.full(losses.shape, -1, dtype=torch.long, device=losses.device)
    return torch.where(~torch.isfinite(losses) & (first < 0), step, first)


class RunningMean(MeanMetric):
    """``MeanMetric`` whose ``update`` never reads a value on the host, so a step does not wait for the device.

    mean = sum(w_i x_i) / sum(w_i) over the finite values, accumulated on the metric's device: a NaN value (or
    weight) is left out, as torchmetrics' default does, but selected on the device instead of tested on the
    host at every call. For finite values the sums are torchmetrics' own, bit for bit.
    """

    def update(self, value: torch.Tensor, weight: float | torch.Tensor = 1.0) -> None:  # type: ignore[override]
        value = torch.as_tensor(value, dtype=self.dtype, device=self.device)
        weights = (
            torch.full_like(value, weight)
            if not isinstance(weight, torch.Tensor)
            else torch.broadcast_to(weight.to(self.dtype), value.shape)
        )
        keep = ~(value.isnan() | weights.isnan())
        self.mean_value += torch.where(keep, value * weights, 0.0).sum()
        self.weight += torch.where(keep, weights, 0.0).sum()


def undecayed_parameters(module: torch.nn.Module) -> list[torch.nn.Parameter]:
    """Parameters weight decay must not shrink: a learned normal v enters only through v/|v| (decay would
    just shrink it); DyT's alpha, ScaleNorm's g, QK-norm's temperatures and a learned embedding scale are scales
    whose size is their meaning."""
    out = []
    for m in module.modules():
        if isinstance(getattr(m, "embedding_scale", None), torch.nn.Parameter):
            out.append(m.embedding_scale)
        if isinstance(m, Norm):
            out += [getattr(m, name) for name in m.own_parameters]
            out += [m.direction] if m.direction is not None else []
        elif isinstance(m, Attention) and m.qk_norm_scale is not None:
            out.append(m.qk_norm_scale)
    return out
