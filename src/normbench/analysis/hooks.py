"""Named forward hooks that read attention inputs (the keys) during an ordinary forward pass."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

from normbench.blocks import Attention


@contextmanager
def capture_attention_inputs(model: nn.Module) -> Iterator[dict[str, torch.Tensor]]:
    """Within the context, ``captured[name]`` is the last input x (B, T, d) of each Attention module.

    These rows are the attention's keys (and its query inputs), i.e. the norm's output under
    pre-norm placement. Names are the modules' qualified names, e.g. ``blocks.0.attn``.
    """
    captured: dict[str, torch.Tensor] = {}
    handles = []
    for name, module in model.named_modules():
        if isinstance(module, Attention):
            def hook(mod: nn.Module, args: tuple, name: str = name) -> None:
                captured[name] = args[0].detach()
            handles.append(module.register_forward_pre_hook(hook))
    try:
        yield captured
    finally:
        for h in handles:
            h.remove()


def attention_modules(model: nn.Module) -> dict[str, Attention]:
    """The model's Attention modules by qualified name, in forward order."""
    return {name: m for name, m in model.named_modules() if isinstance(m, Attention)}
