"""Property tests of the norm components against the definitions and torch's fused ops."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.nn.norms import COMPONENTS, Norm, NormSpec

shapes = st.tuples(st.integers(1, 4), st.integers(1, 7), st.integers(2, 64))
epsilons = st.sampled_from([0.0, 1e-12, 1e-6, 1e-5, 1e-3])
seeds = st.integers(0, 2**31 - 1)


def sample(shape: tuple[int, ...], seed: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    scale = torch.exp(torch.randn((), generator=g, dtype=dtype) * 2)  # magnitudes from ~e^-4 to ~e^4
    return (torch.randn(shape, generator=g, dtype=dtype) + torch.randn((), generator=g, dtype=dtype)) * scale


@settings(max_examples=60, deadline=None)
@given(shapes, epsilons, seeds)
def test_both_is_layer_norm(shape: tuple[int, ...], eps: float, seed: int) -> None:
    x = sample(shape, seed, torch.float32)
    d = shape[-1]
    out = Norm(d, NormSpec("both", affine=False, eps=eps))(x)
    torch.testing.assert_close(out, F.layer_norm(x, (d,), eps=eps), atol=1e-6, rtol=1e-5)
    mu, var = x.mean(-1, keepdim=True), x.var(-1, unbiased=False, keepdim=True)
    torch.testing.assert_close(out, (x - mu) / torch.sqrt(var + eps), atol=1e-5, rtol=1e-4)


@settings(max_examples=60, deadline=None)
@given(shapes, epsilons, seeds)
def test_scale_is_rms_norm(shape: tuple[int, ...], eps: float, seed: int) -> None:
    x = sample(shape, seed, torch.float32)
    d = shape[-1]
    out = Norm(d, NormSpec("scale", affine=False, eps=eps))(x)
    torch.testing.assert_close(out, F.rms_norm(x, (d,), eps=eps), atol=1e-6, rtol=1e-5)
    expected = x * math.sqrt(d) / torch.sqrt((x * x).sum(-1, keepdim=True) + d * eps)
    torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-4)


@settings(max_examples=60, deadline=None)
@given(shapes, seeds)
def test_project_is_orthogonal_to_ones(shape: tuple[int, ...], seed: int) -> None:
    x = sample(shape, seed)
    y = Norm(shape[-1], NormSpec("project", affine=False))(x)
    ones = torch.ones(shape[-1], dtype=x.dtype)
    assert (y @ ones).abs().max().item() <= 1e-12 * (1 + x.abs().max().item()) * shape[-1]
    # idempotent: projecting twice changes nothing; and x - P(x) is parallel to 1
    torch.testing.assert_close(Norm(shape[-1], NormSpec("project", affine=False))(y), y)
    diff = x - y
    torch.testing.assert_close(diff, diff[..., :1].expand_as(diff))


@settings(max_examples=60, deadline=None)
@given(shapes, seeds)
def test_scale_gives_norm_sqrt_d(shape: tuple[int, ...], seed: int) -> None:
    x = sample(shape, seed)
    d = shape[-1]
    y = Norm(d, NormSpec("scale", affine=False, eps=0.0))(x)
    torch.testing.assert_close(y.norm(dim=-1), torch.full(shape[:-1], math.sqrt(d), dtype=x.dtype))


@settings(max_examples=60, deadline=None)
@given(shapes, epsilons, seeds)
def test_both_is_scale_after_project(shape: tuple[int, ...], eps: float, seed: int) -> None:
    x = sample(shape, seed)
    d = shape[-1]
    both = Norm(d, NormSpec("both", affine=False, eps=eps))(x)
    composed = Norm(d, NormSpec("scale", affine=False, eps=eps))(Norm(d, NormSpec("project", affine=False))(x))
    torch.testing.assert_close(both, composed, atol=1e-9, rtol=1e-7)


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


def test_none_is_identity_and_has_no_parameters() -> None:
    x = torch.randn(3, 5, 8)
    norm = Norm(8, NormSpec("none", affine=True))
    assert torch.equal(norm(x), x)
    assert not list(norm.parameters())


@pytest.mark.parametrize("component", [c for c in COMPONENTS if c != "none"])
def test_affine_applies_gain_and_bias(component: str) -> None:
    x = torch.randn(4, 6, 8, dtype=torch.float64)
    plain = Norm(8, NormSpec(component, affine=False)).double()
    affine = Norm(8, NormSpec(component, affine=True)).double()
    with torch.no_grad():
        affine.weight.uniform_(0.5, 2.0)
        affine.bias.normal_()
    torch.testing.assert_close(affine(x), plain(x) * affine.weight + affine.bias)
    extra = {"learned": 8, "scalenorm": 1, "dyt": 1}.get(component, 0)  # the learned normal, g, alpha
    assert sum(p.numel() for p in affine.parameters()) == 16 + extra


@pytest.mark.parametrize("component", COMPONENTS)
def test_gradients_are_finite(component: str) -> None:
    x = torch.randn(2, 9, 8, requires_grad=True)
    Norm(8, NormSpec(component, affine=True, eps=1e-5))(x).square().sum().backward()
    assert torch.isfinite(x.grad).all()


@settings(max_examples=60, deadline=None)
@given(shapes, epsilons, seeds)
def test_learned_starts_as_layer_norm(shape: tuple[int, ...], eps: float, seed: int) -> None:
    """u initialised to 1/sqrt(d): the learned-direction norm is LayerNorm before training."""
    x = sample(shape, seed)
    learned = Norm(shape[-1], NormSpec("learned", affine=False, eps=eps)).double()
    both = Norm(shape[-1], NormSpec("both", affine=False, eps=eps)).double()
    torch.testing.assert_close(learned(x), both(x), atol=1e-9, rtol=1e-9)


@settings(max_examples=60, deadline=None)
@given(shapes, seeds, st.floats(0.1, 10.0))
def test_learned_projects_orthogonal_to_its_unit_normal_and_scales_to_sqrt_d(
    shape: tuple[int, ...], seed: int, length: float
) -> None:
    """y = sqrt(d) P_u(x) / ||P_u(x)||, P_u(x) = x - (u.x) u, u = v/||v||: y.u = 0, ||y|| = sqrt(d), any ||v||."""
    d = shape[-1]
    x = sample(shape, seed)
    norm = Norm(d, NormSpec("learned", affine=False, eps=0.0)).double()
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        norm.direction.copy_(torch.randn(d, generator=g, dtype=torch.float64))
    u = norm.direction / norm.direction.norm()
    y = norm(x)
    residual = x - (x @ u)[..., None] * u
    keep = residual.norm(dim=-1) > 1e-6 * x.norm(dim=-1).clamp_min(1e-300)  # x parallel to u has no direction left
    torch.testing.assert_close((y @ u)[keep], torch.zeros_like(y @ u)[keep], atol=1e-9, rtol=0)
    torch.testing.assert_close(y.norm(dim=-1)[keep], torch.full_like(y.norm(dim=-1), math.sqrt(d))[keep])
    with torch.no_grad():
        norm.direction.mul_(length)  # only the direction of v matters
    torch.testing.assert_close(norm(x)[keep], y[keep])


def test_learned_direction_receives_gradients() -> None:
    norm = Norm(8, NormSpec("learned", affine=True, eps=1e-5))
    x = torch.randn(4, 6, 8) + 2.0  # a mean component, so the projection matters
    (norm(x) * torch.randn(4, 6, 8)).sum().backward()
    assert norm.direction.grad is not None and norm.direction.grad.abs().sum() > 0


def test_bad_spec_is_a_clear_error_naming_its_field() -> None:
    from normbench.nn.majority import MajorityConfig

    with pytest.raises(ValueError, match="^component: 'layer' is not allowed; choose one of both, project"):
        Norm(8, NormSpec("layer"))
    with pytest.raises(ValueError, match="^model.arch.attn_norm.component: 'layer' is not allowed"):
        MajorityConfig(attn_norm=NormSpec("layer"))
    with pytest.raises(ValueError, match="^model.arch.ffn_norm.eps: must be a finite number >= 0"):
        MajorityConfig(ffn_norm=NormSpec("both", eps=-1.0))
