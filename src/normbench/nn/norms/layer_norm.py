"""LayerNorm and its parts: for x in R^d with mean mu, ``both`` is S(P(x)) = (x - mu) / sqrt(var(x) + eps),
``project`` P(x) = x - mu 1 (the orthogonal projection onto the hyperplane 1^T y = 0), ``scale``
S(x) = x sqrt(d) / sqrt(||x||^2 + d eps) (RMSNorm, norm sqrt(d)), ``none`` the identity; and the shifts and scales
that write the statistics-based norms as N(x) = s(x) (x - m(x)).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from normbench.nn.norms.base import Norm


def mean_shift(x: torch.Tensor) -> torch.Tensor:
    """m = mean(x) 1, LayerNorm's shift, per row (..., d)."""
    return x.mean(dim=-1, keepdim=True).expand_as(x)


def rsqrt_mean_square(x: torch.Tensor, eps: float) -> torch.Tensor:
    """1 / sqrt(mean(x^2) + eps), per row (..., 1): RMSNorm's scale s (LayerNorm's, of x - mean(x) 1)."""
    return torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)


def no_shift(x: torch.Tensor, scale: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(m, s) = (0, ``scale``): the shift-and-scale form of a norm that only scales."""
    return torch.zeros_like(x), scale


class LayerNorm(Norm):
    """``both``: S(P(x)) = (x - mu) / sqrt(var(x) + eps); m = mean(x) 1, s = 1/sqrt(var + eps).

    The fused ``F.layer_norm`` computes it, with the affine map.
    """

    name = "both"
    projects = uses_eps = scales = True

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, self.shape, eps=self.eps)

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shift = mean_shift(x)
        return shift, rsqrt_mean_square(x - shift, self.eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, self.shape, self.weight, self.bias, eps=self.eps)


class Projection(Norm):
    """``project``: P(x) = x - mean(x) 1; m = mean(x) 1, s = 1."""

    name = "project"
    projects = True

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x - x.mean(dim=-1, keepdim=True)

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return mean_shift(x), torch.ones_like(x[..., :1])


class RMSNorm(Norm):
    """``scale``: S(x) = x sqrt(d) / sqrt(||x||^2 + d eps) (``F.rms_norm``); m = 0, s = sqrt(d / (||x||^2 + d eps))."""

    name = "scale"
    uses_eps = scales = True

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, self.shape, eps=self.eps)

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return no_shift(x, rsqrt_mean_square(x, self.eps))


class NoNorm(Norm):
    """``none``: N(x) = x, without an affine map; m = 0, s = 1."""

    name = "none"
    identity = True

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return no_shift(x, torch.ones_like(x[..., :1]))
