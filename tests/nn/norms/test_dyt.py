"""DyT against its definition (modern-norms-facts.md): gamma tanh(alpha x) + beta, not of the shift-and-scale form."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.nn.norms import Norm, NormSpec, NotShiftAndScale
from tests.nn.norms.samples import sample_centred, scalar_norm_shapes, seeds


@settings(max_examples=60, deadline=None)
@given(scalar_norm_shapes, seeds, st.floats(-3, 3), st.booleans())
def test_dyt_is_gamma_tanh_alpha_x_plus_beta(shape: tuple[int, ...], seed: int, alpha: float, affine: bool) -> None:
    x, d = sample_centred(shape, seed), shape[-1]
    norm = Norm(d, NormSpec("dyt", affine=affine, options={"alpha": alpha})).double()
    assert norm.alpha.item() == pytest.approx(alpha)
    expected = torch.tanh(alpha * x)
    if affine:
        with torch.no_grad():
            norm.weight.normal_()
            norm.bias.normal_()
        expected = norm.weight * expected + norm.bias
    torch.testing.assert_close(norm(x), expected)


def test_dyt_alpha_defaults_to_one_half_and_the_default_is_not_part_of_the_identity() -> None:
    assert Norm(8, NormSpec("dyt")).alpha.item() == 0.5
    assert NormSpec("dyt", options={"alpha": 0.5}).canonical() == NormSpec("dyt").canonical()
    assert NormSpec("dyt", options={"alpha": 1.0}).canonical().as_dict()["options"] == {"alpha": 1.0}
    assert "options" not in NormSpec("both").canonical().as_dict()  # specs without options keep their identity


def test_dyt_is_not_of_the_shift_and_scale_form() -> None:
    norm = Norm(8, NormSpec("dyt"))
    with pytest.raises(NotShiftAndScale, match="^component: dyt is not of the shift-and-scale form"):
        norm.shift_and_scale(torch.randn(2, 8))
