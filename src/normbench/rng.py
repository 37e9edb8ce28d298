"""The global random-number-generator states (torch, CUDA, numpy, Python): save and restore."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch


def rng_states() -> dict[str, Any]:
    """The global RNG states as tensors and plain tuples (loadable with ``weights_only=True``)."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    states: dict[str, Any] = {
        "torch": torch.get_rng_state(),
        "numpy": (kind, torch.from_numpy(keys.astype(np.int64)), int(pos), int(has_gauss), float(gauss)),
        "python": random.getstate(),
    }
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def set_rng_states(states: dict[str, Any]) -> None:
    """Restore what :func:`rng_states` returned (CUDA states only where CUDA is available)."""
    torch.set_rng_state(states["torch"])
    kind, keys, pos, has_gauss, gauss = states["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, gauss))
    version, internal, gauss_next = states["python"]
    random.setstate((version, tuple(internal), gauss_next))
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])
