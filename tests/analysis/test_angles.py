"""Query angle to the ones vector (Figure 2b)."""

from __future__ import annotations

import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.analysis import query_angle_to_ones


def test_known_angles() -> None:
    d = 8
    ones = torch.ones(d)
    orth = torch.tensor([1.0, -1.0] * 4)
    angles = query_angle_to_ones(torch.stack([ones, -ones, orth, 2 * ones + 0 * orth]))
    torch.testing.assert_close(angles, torch.tensor([0.0, 0.0, 90.0, 0.0]), atol=1e-3, rtol=0)
    unfolded = query_angle_to_ones(-ones, fold=False)
    assert math.isclose(unfolded.item(), 180.0, abs_tol=1e-3)


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 32), st.integers(0, 10_000))
def test_folded_range_and_sign_invariance(d: int, seed: int) -> None:
    v = torch.randn(10, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    a = query_angle_to_ones(v)
    assert ((a >= 0) & (a <= 90)).all()
    torch.testing.assert_close(a, query_angle_to_ones(-v))
    cos = torch.cos(torch.deg2rad(a))
    expected = v.sum(-1).abs() / (v.norm(dim=-1) * math.sqrt(d))
    torch.testing.assert_close(cos, expected)
