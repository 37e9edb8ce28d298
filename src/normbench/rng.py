"""The global random-number-generator states (torch, CUDA, numpy, Python): save and restore."""

from __future__ import annotations

import random
from typing import NotRequired, TypedDict

import numpy as np
import torch
from torch import Tensor


class RngStates(TypedDict):
    """The global RNG states, as :func:`rng_states` saves them (all loadable with ``weights_only=True``)."""

    torch: Tensor
    """torch's CPU generator state (``torch.get_rng_state()``)."""
    numpy: tuple[str, Tensor, int, int, float]
    """numpy's legacy global state: kind, the key words (as an int64 tensor), position, has-gauss flag, cached gauss."""
    python: tuple[int, tuple[int, ...], float | None]
    """Python's ``random.getstate()``: version, the internal state, the cached gauss."""
    cuda: NotRequired[list[Tensor]]
    """Each CUDA device's generator state (only where CUDA was available)."""


def rng_states() -> RngStates:
    """The global RNG states as tensors and plain tuples (loadable with ``weights_only=True``)."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    states: RngStates = {
        "torch": torch.get_rng_state(),
        "numpy": (kind, torch.from_numpy(keys.astype(np.int64)), int(pos), int(has_gauss), float(gauss)),
        "python": random.getstate(),
    }
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def set_rng_states(states: RngStates) -> None:
    """Restore what :func:`rng_states` returned (CUDA states only where CUDA is available)."""
    torch.set_rng_state(states["torch"])
    kind, keys, pos, has_gauss, gauss = states["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, gauss))
    version, internal, gauss_next = states["python"]
    random.setstate((version, tuple(internal), gauss_next))
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])
