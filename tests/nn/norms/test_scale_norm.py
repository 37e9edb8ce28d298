"""ScaleNorm against its definition (modern-norms-facts.md): g x / ||x||, g initialised to sqrt(d)."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.nn.norms import Norm, NormSpec
from tests.nn.norms.samples import sample_centred, scalar_norm_shapes, seeds


@settings(max_examples=60, deadline=None)
@given(scalar_norm_shapes, seeds, st.floats(0.1, 10))
def test_scalenorm_is_g_x_over_its_norm(shape: tuple[int, ...], seed: int, g: float) -> None:
    x, d = sample_centred(shape, seed), shape[-1]
    default = Norm(d, NormSpec("scalenorm", affine=False, eps=0.0)).double()
    assert default.g.item() == pytest.approx(math.sqrt(d))  # initialised to sqrt(d)
    norm = Norm(d, NormSpec("scalenorm", affine=False, eps=0.0, options={"g": g})).double()
    out = norm(x)
    torch.testing.assert_close(out, g * x / torch.linalg.vector_norm(x, dim=-1, keepdim=True))
    torch.testing.assert_close(torch.linalg.vector_norm(out, dim=-1), torch.full(shape[:-1], g, dtype=x.dtype))
