"""Follow LayerNorm's geometry during training (TensorBoard, and the run record).

At every evaluation :class:`GeometryMonitor` reads, through forward hooks on the ordinary
validation forward pass (nothing runs twice):

* per norm, the mean over tokens of its input's per-token mean mu(x) = 1^T x / d and standard
  deviation sigma(x) = ||x - mu 1|| / sqrt(d) (``geometry/<norm>/input_mean``, ``.../input_std``),
  padding positions left out;
* per attention, the fraction of unselectable keys (rows of the attention input inside the
  convex hull of the other rows) over the first ``key_sets`` sequences of the first batch
  (``geometry/<block>/unselectable``; under DDP those of global rank 0, i.e. the same
  sequences as one process);
* per attention, the histogram of the angles between each query q Q K^T / sqrt(d_head) and the
  normal of the hyperplane its keys lie on (:func:`attention_normals`) in TensorBoard, and for
  a learned normal u its angle to 1 (``geometry/<norm>/normal_angle_to_ones``).

Only global rank 0 checks keys and angles. Vectorized seed stacks (no ``model`` attribute) log
nothing.

Names: ``L1.attn_norm`` is the attention norm of the first block, ``final_norm``/``embed_norm``
the model-level norms. The values are epoch means over the validation set (Lightning weights
them by the number of tokens).
"""

from __future__ import annotations

from typing import Any

import lightning as L
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from normbench.analysis.angles import query_angle_to_ones
from normbench.analysis.unselectable import unselectable_mask
from normbench.blocks import Attention, TransformerBlock
from normbench.norms import Norm

ANGLE_BINS = np.linspace(0.0, 90.0, 46)  # 2-degree bins of the folded query angle
PROJECTING = ("both", "project", "learned")  # components whose output lies on a hyperplane


def short_name(qualified: str) -> str:
    """``model.blocks.0.attn_norm`` -> ``L1.attn_norm``; ``model.final_norm`` -> ``final_norm``."""
    parts = qualified.split(".")
    if "blocks" in parts:
        i = parts.index("blocks")
        return ".".join([f"L{int(parts[i + 1]) + 1}", *parts[i + 2:]])
    return ".".join(p for p in parts if p != "model")


def attention_normals(model: nn.Module) -> dict[str, torch.Tensor]:
    """Per attention (qualified name), the unit normal of the hyperplane its keys lie on.

    Pre-norm blocks whose attention norm projects (``both``, ``project``, ``learned``): the keys
    g * n + b with n orthogonal to u (1/sqrt(d) 1, or the learned u) lie on the affine hyperplane
    with normal u / g, and a query parallel to it scores every key alike. Elsewhere (no
    projection, or keys not produced by a pre-norm) the reference is 1/sqrt(d) 1, as in the
    paper's query angle.
    """
    normals = {}
    for name, block in model.named_modules():
        if isinstance(block, TransformerBlock):
            norm = block.attn_norm
            d = block.attn.q_proj.in_features
            direction = torch.full((d,), d**-0.5)
            if isinstance(norm, Norm) and block.placement == "pre" and norm.spec.component in PROJECTING:
                direction = norm.unit_direction().detach()
                if norm.weight is not None and bool((norm.weight != 0).all()):
                    direction = F.normalize(direction / norm.weight.detach(), dim=0)
            normals[f"{name}.attn" if name else "attn"] = direction.detach()
    return normals


class GeometryMonitor(L.Callback):
    """Log the norms' input statistics, unselectable keys and query angles at each evaluation.

    Args:
        key_sets: sequences of the first validation batch whose keys are checked for unselectability.
    """

    def __init__(self, key_sets: int = 8) -> None:
        self.key_sets = key_sets
        self._handles: list[Any] = []
        self._norm_stats: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
        self._attn: dict[str, tuple[torch.Tensor, torch.Tensor | None]] = {}

    def remove_hooks(self) -> None:
        """Detach every hook and drop the activations held since the last batch."""
        for h in self._handles:
            h.remove()
        self._handles, self._norm_stats, self._attn = [], {}, {}

    def on_validation_batch_start(self, trainer: L.Trainer, pl_module: L.LightningModule, batch: Any,
                                  batch_idx: int, dataloader_idx: int = 0) -> None:
        self.remove_hooks()
        network = getattr(pl_module, "model", None)  # the task's network (vectorized seed stacks have none)
        if trainer.sanity_checking or not isinstance(network, nn.Module):
            return
        for name, module in network.named_modules(prefix="model"):
            if isinstance(module, Norm):
                def norm_hook(mod: nn.Module, args: tuple, name: str = short_name(name)) -> None:
                    x = args[0].detach().float()
                    self._norm_stats[name] = (x.mean(-1), x.std(-1, correction=0))
                self._handles.append(module.register_forward_pre_hook(norm_hook))
            elif isinstance(module, Attention):
                def attn_hook(mod: nn.Module, args: tuple, kwargs: dict, name: str = name) -> None:
                    mask = kwargs.get("key_padding_mask", args[1] if len(args) > 1 else None)
                    self._attn[name] = (args[0].detach(), mask)
                self._handles.append(module.register_forward_pre_hook(attn_hook, with_kwargs=True))

    def on_validation_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any,
                                batch_idx: int, dataloader_idx: int = 0) -> None:
        if trainer.sanity_checking or not self._attn:
            self.remove_hooks()
            return
        padding = next((m for _, m in self._attn.values() if m is not None), None)
        for name, (mean, std) in self._norm_stats.items():
            valid = torch.ones_like(mean, dtype=torch.bool) if padding is None or padding.shape != mean.shape \
                else ~padding
            n = int(valid.sum())
            if n:
                pl_module.log(f"geometry/{name}/input_mean", mean[valid].mean(), batch_size=n, sync_dist=True)
                pl_module.log(f"geometry/{name}/input_std", std[valid].mean(), batch_size=n, sync_dist=True)
        if batch_idx == 0 and dataloader_idx == 0 and trainer.is_global_zero:
            self.log_first_batch(trainer, pl_module)
        self.remove_hooks()

    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.remove_hooks()

    def on_exception(self, trainer: L.Trainer, pl_module: L.LightningModule, exception: BaseException) -> None:
        self.remove_hooks()

    def teardown(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        self.remove_hooks()

    def log_first_batch(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        """Unselectable keys and query angles on the first ``key_sets`` sequences."""
        normals = attention_normals(pl_module.model)
        tensorboard = next((lg for lg in trainer.loggers if isinstance(lg, L.pytorch.loggers.TensorBoardLogger)), None)
        for name, (keys, mask) in self._attn.items():
            label = short_name(name.removesuffix(".attn"))
            keys = keys[: self.key_sets]
            if not torch.isfinite(keys).all():  # a diverged model: no geometry to speak of
                continue
            valid = np.ones(keys.shape[:2], dtype=bool) if mask is None else ~mask[: self.key_sets].cpu().numpy()
            flags = [unselectable_mask(keys[b, valid[b]].double().cpu().numpy()) for b in range(len(keys))]
            total = int(valid.sum())
            if total:
                fraction = sum(int(f.sum()) for f in flags) / total
                pl_module.log(f"geometry/{label}/unselectable", float(fraction), batch_size=total, rank_zero_only=True)
            attn = pl_module.model.get_submodule(name.removeprefix("model."))
            normal = normals.get(name.removeprefix("model."))
            if tensorboard is not None and normal is not None and total:
                queries = attn.effective_queries(keys)  # (B, H, T, d)
                angles = query_angle_to_ones(queries, direction=normal.to(queries))
                angles = angles.transpose(1, 2)[torch.as_tensor(valid)].flatten()
                tensorboard.experiment.add_histogram(f"geometry/{label}/query_angle", angles, trainer.global_step,
                                                     bins=ANGLE_BINS)
        for name, module in pl_module.model.named_modules(prefix="model"):
            if isinstance(module, Norm) and module.direction is not None:
                u = module.unit_direction().detach()
                angle = query_angle_to_ones(u[None], fold=False)[0]  # in [0, 180]: u starts at 0
                pl_module.log(f"geometry/{short_name(name)}/normal_angle_to_ones", angle, batch_size=1,
                              rank_zero_only=True)

