"""Follow LayerNorm's geometry during training (TensorBoard, and the run record).

At every evaluation :class:`GeometryMonitor` reads, through the named hook points of the
ordinary validation forward pass (:class:`normbench.analysis.hooks.Capture`; nothing runs twice):

* per norm, the mean over tokens of its input's per-token mean mu(x) = 1^T x / d and standard
  deviation sigma(x) = ||x - mu 1|| / sqrt(d) (``geometry/<norm>/input_mean``, ``.../input_std``),
  padding positions left out;
* per attention, the fraction of unselectable keys (rows of the attention input inside the
  convex hull of the other rows) over the first ``key_sets`` sequences of the first batch
  (``geometry/L<i>/unselectable``; under DDP those of global rank 0, i.e. the same
  sequences as one process);
* per attention, the histogram of the angles between each query q Q K^T / sqrt(d_head) and the
  normal of the hyperplane its keys lie on (:func:`normbench.analysis.angles.attention_normals`)
  in TensorBoard, and for a learned normal u its angle to 1 (``geometry/<norm>/normal_angle_to_ones``);
* the learned scalars of the newer norms: DyT's alpha and ScaleNorm's g (``geometry/<norm>/alpha``,
  ``.../g``), each trained parameter of a plug-in norm (its value, or its mean; :func:`learned_scalars`), and
  QK-norm's temperature, the mean over heads (``geometry/L<i>.attn/qk_temperature``).

Only global rank 0 checks keys and angles. Vectorized seed stacks (no ``model`` attribute) log
nothing. Norms are named by their hook points (``L1.attn_norm``, ``final_norm``, ``embed_norm``);
the series names are those of :mod:`normbench.tasks.series`. The values are epoch means over the
validation set (Lightning weights them by the number of tokens).
"""

from __future__ import annotations

from typing import Any

import lightning as L
import numpy as np
import torch
from torch import nn

import normbench.tasks.series as S
from normbench.analysis.angles import attention_normals, query_angle_to_ones
from normbench.analysis.hooks import Capture, Captured
from normbench.analysis.unselectable import unselectable_mask
from normbench.nn.blocks import Attention, hook_points
from normbench.nn.norms import Norm, PluginNorm

ANGLE_BINS = np.linspace(0.0, 90.0, 46)  # 2-degree bins of the folded query angle


class GeometryMonitor(L.Callback):
    """Log the norms' input statistics, unselectable keys and query angles at each evaluation.

    Args:
        key_sets: sequences of the first validation batch whose keys are checked for unselectability.
    """

    def __init__(self, key_sets: int = 8) -> None:
        self.key_sets = key_sets
        self._capture: Capture | None = None

    def remove_hooks(self) -> None:
        """Detach every hook and drop the activations held since the last batch."""
        if self._capture is not None:
            self._capture.remove()
        self._capture = None

    def on_validation_batch_start(
        self, trainer: L.Trainer, pl_module: L.LightningModule, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self.remove_hooks()
        network = getattr(pl_module, "model", None)  # the task's network (vectorized seed stacks have none)
        if trainer.sanity_checking or not isinstance(network, nn.Module):
            return
        points = {name: m for name, m in hook_points(network).items() if isinstance(m, (Norm, Attention))}
        self._capture = Capture(points)

    def on_validation_batch_end(
        self,
        trainer: L.Trainer,
        pl_module: L.LightningModule,
        outputs: Any,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None:
        seen = self._capture.seen if self._capture is not None else {}
        attention = {name: slot for name, slot in seen.items() if name.endswith(".attn") and "input" in slot}
        if trainer.sanity_checking or not attention:
            self.remove_hooks()
            return
        padding = next((slot["mask"] for slot in attention.values() if slot.get("mask") is not None), None)
        for name, slot in seen.items():
            if name.endswith(".attn") or "input" not in slot:
                continue
            x = slot["input"].float()
            mean, std = x.mean(-1), x.std(-1, correction=0)
            valid = (
                ~padding
                if padding is not None and padding.shape == mean.shape
                else torch.ones_like(mean, dtype=torch.bool)
            )
            n = int(valid.sum())
            if n:
                pl_module.log(S.NORM_INPUT_MEAN.format(point=name), mean[valid].mean(), batch_size=n, sync_dist=True)
                pl_module.log(S.NORM_INPUT_STD.format(point=name), std[valid].mean(), batch_size=n, sync_dist=True)
        if batch_idx == 0 and dataloader_idx == 0 and trainer.is_global_zero:
            self.log_first_batch(trainer, pl_module, attention)
        self.remove_hooks()

    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.remove_hooks()

    def on_exception(self, trainer: L.Trainer, pl_module: L.LightningModule, exception: BaseException) -> None:
        self.remove_hooks()

    def teardown(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        self.remove_hooks()

    def log_first_batch(self, trainer: L.Trainer, pl_module: L.LightningModule, attention: dict[str, Captured]) -> None:
        """Unselectable keys and query angles on the first ``key_sets`` sequences."""
        network = pl_module.model
        points = hook_points(network)
        normals = attention_normals(network)
        tensorboard = next((lg for lg in trainer.loggers if isinstance(lg, L.pytorch.loggers.TensorBoardLogger)), None)
        for name, slot in attention.items():
            layer = int(name.removesuffix(".attn").removeprefix("L"))
            keys, mask = slot["input"][: self.key_sets], slot.get("mask")
            if not torch.isfinite(keys).all():  # a diverged model: no geometry to speak of
                continue
            valid = np.ones(keys.shape[:2], dtype=bool) if mask is None else ~mask[: self.key_sets].cpu().numpy()
            flags = [unselectable_mask(keys[b, valid[b]].double().cpu().numpy()) for b in range(len(keys))]
            total = int(valid.sum())
            if total:
                fraction = sum(int(f.sum()) for f in flags) / total
                pl_module.log(
                    S.layer_series(S.UNSELECTABLE_KEYS, layer), float(fraction), batch_size=total, rank_zero_only=True
                )
            normal = normals.get(name)
            # under QK-norm the scores are not q Q K^T k: the effective queries describe no score attention computes
            if tensorboard is not None and normal is not None and total and points[name].qk_norm_scale is None:
                queries = points[name].effective_queries(keys)  # (B, H, T, d)
                angles = query_angle_to_ones(queries, direction=normal.to(queries))
                angles = angles.transpose(1, 2)[torch.as_tensor(valid, device=angles.device)].flatten()
                tensorboard.experiment.add_histogram(
                    S.layer_series(S.QUERY_ANGLE_HISTOGRAM, layer), angles.cpu(), trainer.global_step, bins=ANGLE_BINS
                )
        for name, module in points.items():
            if isinstance(module, Norm):
                for parameter, value in learned_scalars(module).items():
                    pl_module.log(
                        S.NORM_SCALAR.format(point=name, parameter=parameter), value, batch_size=1, rank_zero_only=True
                    )
            if isinstance(module, Attention) and module.qk_norm_scale is not None:
                pl_module.log(
                    S.QK_TEMPERATURE.format(point=name),
                    float(module.qk_norm_scale.detach().mean()),
                    batch_size=1,
                    rank_zero_only=True,
                )
            if isinstance(module, Norm) and module.direction is not None:
                u = module.unit_direction().detach()
                angle = query_angle_to_ones(u[None], fold=False)[0]  # in [0, 180]: u starts at 0
                pl_module.log(S.NORMAL_ANGLE_TO_ONES.format(point=name), angle, batch_size=1, rank_zero_only=True)


def learned_scalars(module: Norm) -> dict[str, float]:
    """A norm's own learned parameters as numbers: those it declares (``own_parameters``: DyT's alpha), and every
    parameter a plug-in module still trains (its per-feature ones are frozen: :class:`~normbench.nn.norms.PluginNorm`),
    a scalar's value or a larger one's mean."""
    out = {parameter: float(getattr(module, parameter).detach()) for parameter in module.own_parameters}
    if isinstance(module, PluginNorm):
        for parameter, value in module.plugin.named_parameters():
            if value.requires_grad:
                out[parameter] = float(value.detach().float().mean())
    return out
