"""The learned-direction norm: LayerNorm's projection onto the hyperplane orthogonal to a learned unit vector."""

from __future__ import annotations

import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.nn.norms import Norm, NormSpec
from tests.nn.norms.samples import epsilons, sample, seeds, shapes


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
