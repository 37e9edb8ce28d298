"""Unselectable keys inside a trained model (Brody et al. 2023, Tables 1-2).

For every Transformer block, the keys of its attention are the rows of the attention input. We
read them with forward hooks during one forward pass in float64 (the model's own weights, held in
float64 for that pass, on the model's device), together with the block input,
which for ``pre`` placement is the input of the norm in front of attention ("before the norm")
while the attention input is its output ("after"). With ``post`` or ``none`` placement nothing
normalizes the keys inside the block, so before = after = the attention input.

Beside that input-space view (Brody et al.'s), the *key-space* view asks the same question per
head, of the keys the head actually scores: the rows of x W_k^T (+ bias) in that head's d_head
coordinates, after QK-norm where the attention has it (what the hook point ``L<i>.attn.keys`` sees,
recomputed in float64). A key
selectable in input space can be unselectable in a head's key space (W_k maps d to d_head < d
dimensions and can fold vertices inside), and under QK-norm every key of a head lies on a sphere,
so no distinct key is unselectable there.

Why float64: the verdict on a key that lies near the hull of the others (keys of a repeated
token, keys a LayerNorm put close together on its sphere) would otherwise follow float32
rounding, which differs between devices and between batch shapes (a GPU test stage and a CPU
re-analysis of the same sequences could disagree by a key). In float64 such differences are
~1e-16, far below the tolerance of :func:`normbench.analysis.unselectable.unselectable_mask`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict, cast

import numpy as np
import torch
from torch import nn
from torch.func import functional_call

from normbench.analysis.hooks import Capture
from normbench.analysis.unselectable import unselectable_mask
from normbench.nn.blocks import TransformerBlock, hook_points


def _float64(value: Any) -> Any:
    return value.double() if isinstance(value, torch.Tensor) and value.is_floating_point() else value


def float64_forward(model: nn.Module, *inputs: Any, **kwargs: Any) -> Any:
    """``model(*inputs, **kwargs)`` with every floating parameter, buffer and input in float64.

    The module itself is left untouched (:func:`torch.func.functional_call`; tied weights stay
    tied), its hooks fire as usual, and autocast is off for the pass: float32 weights are exact
    in float64, so this is the network as trained, evaluated without float32 rounding.
    """
    state = {name: _float64(t) for name, t in [*model.named_parameters(), *model.named_buffers()]}
    device = next((t.device.type for t in state.values()), "cpu")
    with torch.autocast(device_type=device, enabled=False):
        return functional_call(
            model,
            state,
            tuple(_float64(a) for a in inputs),
            {k: _float64(v) for k, v in kwargs.items()},
            tie_weights=True,
            strict=False,
        )


def attention_keys(model: nn.Module, *inputs: Any, **kwargs: Any) -> dict[str, dict[str, torch.Tensor]]:
    """Run ``model(*inputs, **kwargs)`` once in float64 (eval mode, no grad); each block's keys (B, T, d) by layer name.

    ``before``: the block input (for ``pre`` placement the input of the attention norm);
    ``after``: the attention input (the norm's output); ``heads``: each head's keys in its key
    space, (B, H, T, d_head), from the attention input (:meth:`Attention.head_keys`). All float64,
    on the model's device (:func:`float64_forward`).
    """
    points = hook_points(model)
    layers = [name for name, m in points.items() if isinstance(m, TransformerBlock)]  # L1, L2, ...
    model_was_training = model.training
    model.eval()
    try:
        with (
            torch.no_grad(),
            Capture(
                {name: points[name] for name in layers} | {f"{name}.attn": points[f"{name}.attn"] for name in layers}
            ) as seen,
        ):
            float64_forward(model, *inputs, **kwargs)
            heads = {name: points[f"{name}.attn"].head_keys(seen[f"{name}.attn"]["input"].double()) for name in layers}
    finally:
        model.train(model_was_training)
    return {
        name: {"before": seen[name]["input"], "after": seen[f"{name}.attn"]["input"], "heads": heads[name]}
        for name in layers
    }


def head_unselectable(heads: torch.Tensor, valid: np.ndarray | None = None, tol: float | None = None) -> np.ndarray:
    """(B, H, T) True where a key is unselectable among its sequence's keys in its head's key space.

    ``heads``: (B, H, T, d_head) per-head keys; ``valid``: (B, T) False at padding (left out of every set).
    """
    x = heads.detach().to("cpu", torch.float64).numpy()
    b, h, t, _ = x.shape
    kw = {} if tol is None else {"tol": tol}
    if valid is None or valid.all():
        return np.asarray(unselectable_mask(x.reshape(b * h, t, -1), **kw)).reshape(b, h, t)
    mask = np.zeros((b, h, t), dtype=bool)
    for i in range(b):
        idx = np.flatnonzero(valid[i])
        if len(idx):
            mask[i][:, idx] = unselectable_mask(x[i][:, idx], **kw)
    return mask


class UnselectableLayer(TypedDict):
    """One block's keys analysed (:func:`unselectable_per_layer`): the ``layer`` (its module name), the fraction of
    unselectable keys before and after its attention norm with their positions (B, T), and where heads are analysed,
    the fraction over each head's key space with its positions (B, H, T)."""

    layer: str
    fraction_heads: NotRequired[float]
    positions_heads: NotRequired[torch.Tensor]
    fraction_before: float
    positions_before: torch.Tensor
    fraction_after: float
    positions_after: torch.Tensor


def unselectable_per_layer(
    model: nn.Module,
    *inputs: Any,
    key_padding_mask: torch.Tensor | None = None,
    tol: float | None = None,
    heads: bool = True,
    **kwargs: Any,
) -> list[UnselectableLayer]:
    """Run ``model(*inputs, **kwargs)`` once and analyse each block's keys.

    Each sequence of the batch is one key set (its padding, True in ``key_padding_mask``, left
    out). Returns one entry per block, in forward order, with the fraction of unselectable keys
    before and after the block's attention norm and the unselectable positions (B, T) after it
    (input space), and ``fraction_heads``: the fraction of unselectable keys in each head's key
    space, over heads and keys (``positions_heads``: (B, H, T)); ``heads=False`` skips that view
    (one hull problem per head and sequence).
    """
    results = []
    for name, keys in attention_keys(model, *inputs, **kwargs).items():
        entry: dict[str, object] = {"layer": name}
        valid = None if key_padding_mask is None else ~key_padding_mask.cpu().numpy()
        if heads:
            per_head = head_unselectable(keys["heads"], valid, tol)
            per_key = per_head.transpose(0, 2, 1)  # (B, T, H)
            entry["fraction_heads"] = float(per_key[valid].mean()) if valid is not None else float(per_head.mean())
            entry["positions_heads"] = torch.from_numpy(per_head).to(keys["heads"].device)
        for where in ("before", "after"):
            x = keys[where].double()
            mask = np.zeros(x.shape[:2], dtype=bool)
            valid = np.ones(x.shape[:2], dtype=bool) if key_padding_mask is None else ~key_padding_mask.cpu().numpy()
            for b in range(x.shape[0]):
                idx = np.flatnonzero(valid[b])
                if len(idx):
                    kw = {} if tol is None else {"tol": tol}
                    mask[b, idx] = unselectable_mask(x[b, idx].cpu().numpy(), **kw)
            entry[f"fraction_{where}"] = float(mask[valid].mean()) if valid.any() else 0.0
            entry[f"positions_{where}"] = torch.from_numpy(mask).to(keys[where].device)
        results.append(cast(UnselectableLayer, entry))
    return results


def prefix_unselectable(keys: torch.Tensor, sizes: Sequence[int]) -> dict[int, tuple[int, int]]:
    """For each n in ``sizes``: (unselectable, total) over the key sets ``keys[b, :n]`` of every sequence b.

    In a causal decoder the first n keys are exactly the key set of the query at position n, so
    the fraction of unselectable keys is measured as a function of the key-set size n.
    """
    if not sizes or min(sizes) < 1 or max(sizes) > keys.shape[1]:
        raise ValueError(
            f"key_sets.sizes: each size must be in 1..{keys.shape[1]} (the sequence length), got {list(sizes)}"
        )
    x = keys.double().cpu().numpy()
    return {n: (int(unselectable_mask(x[:, :n]).sum()), x.shape[0] * n) for n in sizes}
