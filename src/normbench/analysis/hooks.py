"""The one hook utility of every analysis: read named hook points during an ordinary forward pass.

Hook points are the names of :func:`normbench.nn.blocks.hook_points` (``L1.attn``,
``L2.attn_norm``, ``final_norm``, ...). :class:`Capture` registers forward hooks on the points it
is given and keeps, per point, its input (the first positional argument), the attention's
``key_padding_mask`` where one is passed, and its output; nothing runs twice.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypedDict

import torch
from torch import nn

from normbench.nn.blocks import Attention, hook_points


class Captured(TypedDict, total=False):
    """What a :class:`Capture` has seen at one hook point, each field once the point has run."""

    input: torch.Tensor
    """The point's last input (detached)."""
    mask: torch.Tensor | None
    """The key padding mask an attention was called with (``None`` without one)."""
    output: torch.Tensor
    """The point's last output (detached; only when capturing outputs)."""


class Capture:
    """Forward hooks on ``modules`` (name -> module); ``seen[name]`` holds ``input``, ``mask``, ``output``.

    Use as a context manager, or call :meth:`remove` when done (e.g. from callbacks).

    Args:
        modules: the hook points to read.
        inputs: keep each point's input (and an attention's padding mask).
        outputs: keep each point's output.
    """

    def __init__(self, modules: Mapping[str, nn.Module], inputs: bool = True, outputs: bool = False) -> None:
        self.seen: dict[str, Captured] = {name: {} for name in modules}
        self.handles: list[Any] = []
        for name, module in modules.items():
            slot = self.seen[name]
            if inputs:

                def pre_hook(mod: nn.Module, args: tuple, kwargs: dict, slot: Captured = slot) -> None:
                    slot["input"] = args[0].detach()
                    mask = kwargs.get("key_padding_mask", args[1] if len(args) > 1 else None)
                    slot["mask"] = mask

                self.handles.append(module.register_forward_pre_hook(pre_hook, with_kwargs=True))
            if outputs:

                def hook(mod: nn.Module, args: tuple, out: torch.Tensor, slot: Captured = slot) -> None:
                    slot["output"] = out.detach()

                self.handles.append(module.register_forward_hook(hook))

    def remove(self) -> None:
        """Detach every hook (what was captured stays in ``seen``)."""
        for h in self.handles:
            h.remove()
        self.handles = []

    def __enter__(self) -> dict[str, Captured]:
        return self.seen

    def __exit__(self, *exc: Any) -> None:
        self.remove()


def attention_modules(model: nn.Module) -> dict[str, Attention]:
    """The model's attention hook points (``L1.attn``, ...), in forward order."""
    return {name: m for name, m in hook_points(model).items() if isinstance(m, Attention)}


@contextmanager
def capture_attention_inputs(model: nn.Module) -> Iterator[dict[str, torch.Tensor]]:
    """Within the context, ``captured[name]`` is the last input x (B, T, d) of each attention (``L1.attn``, ...).

    These rows are the attention's keys (and its query inputs), i.e. the norm's output under
    pre-norm placement.
    """
    with Capture(attention_modules(model)) as seen:
        yield Inputs(seen)


class Inputs(Mapping[str, torch.Tensor]):
    """A live view ``name -> input`` of what a :class:`Capture` has seen so far."""

    def __init__(self, seen: dict[str, Captured]) -> None:
        self.seen = seen

    def __getitem__(self, name: str) -> torch.Tensor:
        return self.seen[name]["input"]

    def __iter__(self) -> Iterator[str]:
        return (name for name, slot in self.seen.items() if "input" in slot)

    def __len__(self) -> int:
        return sum(1 for _ in self)
