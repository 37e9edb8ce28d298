"""LayerNorm and its parts (both, project, scale, none) against their definitions and torch's fused ops."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from hypothesis import given, settings

from normbench.nn.norms import Norm, NormSpec
from tests.nn.norms.samples import epsilons, sample, seeds, shapes


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


def test_none_is_identity_and_has_no_parameters() -> None:
    x = torch.randn(3, 5, 8)
    norm = Norm(8, NormSpec("none", affine=True))
    assert torch.equal(norm(x), x)
    assert not list(norm.parameters())


def test_fused_kernels_compute_the_affine_norms_exactly() -> None:
    x = torch.randn(4, 7, 8)
    w, b = torch.rand(8) + 0.5, torch.randn(8)
    both, scale = Norm(8, NormSpec("both", eps=1e-5)), Norm(8, NormSpec("scale", eps=1e-5))
    with torch.no_grad():
        for norm in (both, scale):
            norm.weight.copy_(w)
            norm.bias.copy_(b)
    assert torch.equal(both(x), F.layer_norm(x, (8,), w, b, eps=1e-5))
    assert torch.equal(scale(x), torch.addcmul(b, F.rms_norm(x, (8,), eps=1e-5), w))
