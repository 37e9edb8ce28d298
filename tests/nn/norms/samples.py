"""Inputs for the property tests of the norm components: shapes, eps values, seeds, and vectors of any magnitude."""

from __future__ import annotations

import torch
from hypothesis import strategies as st

shapes = st.tuples(st.integers(1, 4), st.integers(1, 7), st.integers(2, 64))
epsilons = st.sampled_from([0.0, 1e-12, 1e-6, 1e-5, 1e-3])
seeds = st.integers(0, 2**31 - 1)
# the smaller shapes of the learned-scalar norms (DyT, ScaleNorm)
scalar_norm_shapes = st.tuples(st.integers(1, 3), st.integers(1, 5), st.integers(2, 48))


def sample(shape: tuple[int, ...], seed: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Rows with a common offset, of magnitudes from ~e^-4 to ~e^4."""
    g = torch.Generator().manual_seed(seed)
    scale = torch.exp(torch.randn((), generator=g, dtype=dtype) * 2)  # magnitudes from ~e^-4 to ~e^4
    return (torch.randn(shape, generator=g, dtype=dtype) + torch.randn((), generator=g, dtype=dtype)) * scale


def sample_centred(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Rows without a common offset, in float64, of magnitudes from ~e^-4 to ~e^4."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64) * torch.exp(
        torch.randn((), generator=g, dtype=torch.float64) * 2
    )
