"""The paper's "without projection" norm: F.normalize(x) / sqrt(d), of norm 1/sqrt(d)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from hypothesis import given, settings

from normbench.nn.norms import Norm, NormSpec
from tests.nn.norms.samples import sample, seeds, shapes


@settings(max_examples=60, deadline=None)
@given(shapes, seeds)
def test_paper_variant_has_norm_inv_sqrt_d(shape: tuple[int, ...], seed: int) -> None:
    x = sample(shape, seed)
    d = shape[-1]
    y = Norm(d, NormSpec("paper_no_projection", affine=False))(x)
    torch.testing.assert_close(y.norm(dim=-1), torch.full(shape[:-1], 1 / math.sqrt(d), dtype=x.dtype))
    torch.testing.assert_close(y, F.normalize(x, dim=-1) / math.sqrt(d))
    # same direction as the scale-matched variant, d times shorter
    torch.testing.assert_close(y * d, Norm(d, NormSpec("scale", affine=False, eps=0.0))(x))
