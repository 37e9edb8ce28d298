"""The shared LightningModule: optimizer, learning-rate schedule and the divergence guard.

Task modules (:mod:`normbench.tasks`) subclass :class:`NormbenchModule`, build their network in
``__init__`` and implement ``training_step`` / ``validation_step`` with torchmetrics.
"""

from __future__ import annotations

import math
from typing import Any

import lightning as L
import torch
from torchmetrics import Metric, MeanMetric


class NormbenchModule(L.LightningModule):
    """Adam(W) with a linear learning-rate decay lr_t = lr * max(0, 1 - t / lr_decay_steps).

    Args:
        lr: peak learning rate.
        lr_decay_steps: steps over which the rate decays linearly to zero (may exceed the
            trained steps: the majority protocol decays over 10x its training length).
        warmup_steps: linear warm-up from 0 to ``lr`` before the decay.
        weight_decay: decoupled weight decay (0 gives plain Adam).
    """

    def __init__(
        self, lr: float = 1e-3, lr_decay_steps: int = 140_000, warmup_steps: int = 0, weight_decay: float = 0.0
    ) -> None:
        super().__init__()
        if not (lr > 0 and math.isfinite(lr)):
            raise ValueError(f"model.lr: must be a positive number, got {lr!r}")
        if lr_decay_steps <= 0 or warmup_steps < 0:
            raise ValueError(
                f"model.lr_decay_steps must be positive and model.warmup_steps >= 0, got {lr_decay_steps} and {warmup_steps}"
            )
        self.lr, self.lr_decay_steps, self.warmup_steps, self.weight_decay = lr, lr_decay_steps, warmup_steps, weight_decay
        self.train_loss_mean = MeanMetric()

    def log_train_loss(self, loss: torch.Tensor, batch_size: int) -> None:
        """Log the loss as ``train/loss_step`` and its epoch mean (weighted by batch size) as ``train/loss_epoch``."""
        # sync_dist: under DDP the logged step loss is the mean over all ranks' batches
        self.log("train/loss_step", loss, on_step=True, on_epoch=False, prog_bar=True, batch_size=batch_size,
                 sync_dist=True)
        self.train_loss_mean.update(loss.detach(), weight=batch_size)  # epoch only: no per-batch value
        self.log("train/loss_epoch", self.train_loss_mean, on_step=False, on_epoch=True, batch_size=batch_size)

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Checkpoint every torchmetrics accumulator, so epoch means survive a mid-epoch resume.

        At an epoch's last step they are left out: the resumed run starts the next epoch, with
        the accumulators reset as after an epoch end (the finished epoch's means are already in
        the stored series, see :class:`normbench.checkpointing.RunState`).
        """
        from normbench.checkpointing import epoch_ends

        if self._trainer is not None and epoch_ends(self.trainer):
            checkpoint["metric_states"] = {}
            return
        checkpoint["metric_states"] = {
            name: {"state": dict(m.metric_state), "updates": m._update_count}
            for name, m in self.named_modules() if isinstance(m, Metric) and m._update_count
        }

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        modules = dict(self.named_modules())
        for name, saved in (checkpoint.get("metric_states") or {}).items():
            metric = modules[name]
            for key, value in saved["state"].items():
                setattr(metric, key, value)
            metric._update_count, metric._computed = saved["updates"], None

    def lr_factor(self, step: int) -> float:
        """Multiplier of ``lr`` at optimizer step ``step``."""
        if step < self.warmup_steps:
            return (step + 1) / self.warmup_steps
        return max(0.0, 1.0 - step / self.lr_decay_steps)

    def configure_optimizers(self):  # noqa: ANN201 - Lightning's return type
        params: Any = self.parameters()
        if self.weight_decay:  # a learned normal v enters only through v/|v|: decay would just shrink it
            named = list(self.named_parameters())
            params = [{"params": [p for n, p in named if not n.endswith(".direction")]},
                      {"params": [p for n, p in named if n.endswith(".direction")], "weight_decay": 0.0}]
        optimizer = torch.optim.AdamW(params, lr=self.lr, weight_decay=self.weight_decay)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, self.lr_factor)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}

    def check_data_fits(self, tokenizer_vocab: int, longest: int, length_field: str) -> None:
        """One-line errors when the data's tokens or sequences do not fit the embeddings
        (``hparams.vocab_size`` rows, ``hparams.max_positions`` positions)."""
        if tokenizer_vocab > self.hparams.vocab_size:
            raise ValueError(f"model.init_args.vocab_size: {self.hparams.vocab_size} is smaller than the "
                             f"tokenizer's {tokenizer_vocab} tokens (data.init_args.vocab_size)")
        if longest > self.hparams.max_positions:
            raise ValueError(f"model.init_args.max_positions: {self.hparams.max_positions} is shorter than "
                             f"{length_field}={longest}")

    def model_inputs(self, batch: Any) -> tuple[tuple[torch.Tensor, ...], torch.Tensor | None]:
        """(arguments of ``self.model`` for an evaluation batch, padding mask (B, T) True at padding or None).

        Analyses that run the bare network (the embedding decomposition) read batches through this.
        """
        raise NotImplementedError(f"{type(self).__name__} does not say how its batches feed its model")

    def check_finite(self, loss: torch.Tensor) -> None:
        """Stop training (the record says "diverged") when the loss is NaN or infinite."""
        if not torch.isfinite(loss):
            self.diverged_at = self.global_step
            self.trainer.should_stop = True
