"""Normalization components: LayerNorm split into projection and scaling.

For x in R^d with mean mu and ones vector 1:

* ``project``: P(x) = x - mu * 1, the orthogonal projection onto the hyperplane 1^T y = 0.
* ``scale``: S(x) = x * sqrt(d) / sqrt(||x||^2 + d * eps), norm sqrt(d) (= RMSNorm).
* ``both``: S(P(x)) = (x - mu) / sqrt(var(x) + eps) (= LayerNorm).
* ``none``: identity.
* ``paper_no_projection``: the "without projection" norm of Brody et al. (2023) exactly as
  their code computes it, ``F.normalize(x, dim=-1) / sqrt(d)``: norm 1/sqrt(d), not sqrt(d).
* ``learned``: S(P_u(x)) with P_u(x) = x - (u^T x) u, the projection onto the hyperplane
  orthogonal to a learned unit vector u = v / ||v|| (v initialised to 1, so it starts as
  LayerNorm): the open question of Brody et al. (2023), Section 5.

Each may be followed by a learned affine map y -> gain * y + bias.

Every component is N(x) = s(x) * (x - m(x)) with a scalar s(x) > 0 per vector and a shift
m(x) along a fixed direction (:meth:`Norm.shift_and_scale`): the embedding decomposition of
:mod:`normbench.analysis.decompose` reads a norm through exactly these two quantities.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

import torch
import torch.nn.functional as F
from torch import nn

Component = Literal["both", "project", "scale", "none", "paper_no_projection", "learned"]
COMPONENTS: tuple[str, ...] = get_args(Component)
PAPER_NORMALIZE_EPS = 1e-12  # F.normalize's default clamp, as in the authors' code


@dataclass(frozen=True)
class NormSpec:
    """Which parts of LayerNorm to apply, and how.

    Args:
        component: ``both`` (LayerNorm), ``project`` (subtract the mean), ``scale`` (RMSNorm),
            ``none`` (identity), ``paper_no_projection`` (``F.normalize(x)/sqrt(d)``) or
            ``learned`` (LayerNorm with the ones vector replaced by a learned unit vector).
        affine: learn a per-feature gain and bias after the normalization.
        eps: added to the variance (``both``, ``learned``) or mean square (``scale``); unused otherwise.
    """

    component: Component = "both"
    affine: bool = True
    eps: float = 1e-5

    def __post_init__(self) -> None:
        if self.component not in COMPONENTS:
            raise ValueError(
                f"component: {self.component!r} is not allowed; choose one of {', '.join(COMPONENTS)}"
            )
        if not (self.eps >= 0 and math.isfinite(self.eps)):
            raise ValueError(f"eps: must be a finite number >= 0, got {self.eps!r}")


class Norm(nn.Module):
    """The normalization described by a :class:`NormSpec` over the last dimension of size ``d``.

    ``both`` and ``scale`` dispatch to the fused ``F.layer_norm`` / ``F.rms_norm`` kernels, which
    compute exactly S(P(x)) and S(x); the tests check them against the definitions.
    """

    def __init__(self, d: int, spec: NormSpec | None = None) -> None:
        super().__init__()
        self.spec = spec if spec is not None else NormSpec()
        self.d = d
        self.shape = (d,)
        affine = self.spec.affine and self.spec.component != "none"
        self.weight = nn.Parameter(torch.ones(d)) if affine else None
        self.bias = nn.Parameter(torch.zeros(d)) if affine else None
        # learned: the normal v of the projection hyperplane (unnormalised; u = v / ||v||)
        self.direction = nn.Parameter(torch.ones(d)) if self.spec.component == "learned" else None

    def extra_repr(self) -> str:
        return f"d={self.d}, component={self.spec.component}, affine={self.weight is not None}, eps={self.spec.eps}"

    def unit_direction(self) -> torch.Tensor:
        """The normal u of the projection hyperplane: 1/sqrt(d) for LayerNorm's projection, v/||v|| when learned."""
        if self.direction is not None:
            return F.normalize(self.direction, dim=0)
        return torch.full((self.d,), self.d**-0.5)

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(m, s) with normalize(x) = s * (x - m): the shift m (..., d) and scalar scale s (..., 1).

        both: m = mean(x) 1, s = 1/sqrt(var + eps); project: m = mean(x) 1, s = 1; scale:
        m = 0, s = sqrt(d / (||x||^2 + d eps)); paper_no_projection: m = 0, s = 1/(sqrt(d) ||x||);
        learned: m = (u^T x) u, s = sqrt(d / (||x - m||^2 + d eps)); none: m = 0, s = 1.
        """
        component, eps, d = self.spec.component, self.spec.eps, self.d
        zeros, ones = torch.zeros_like(x), torch.ones_like(x[..., :1])
        if component in ("both", "project"):
            shift = x.mean(dim=-1, keepdim=True).expand_as(x)
            if component == "project":
                return shift, ones
            return shift, torch.rsqrt((x - shift).pow(2).mean(dim=-1, keepdim=True) + eps)
        if component == "scale":
            return zeros, torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)
        if component == "paper_no_projection":
            norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(PAPER_NORMALIZE_EPS)
            return zeros, 1.0 / (norm * math.sqrt(d))
        if component == "learned":
            u = self.unit_direction().to(x.dtype)
            shift = (x @ u)[..., None] * u
            return shift, torch.rsqrt((x - shift).pow(2).mean(dim=-1, keepdim=True) + eps)
        return zeros, ones

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        """The normalization without the affine map."""
        component, eps = self.spec.component, self.spec.eps
        if component == "both":
            return F.layer_norm(x, self.shape, eps=eps)
        if component == "scale":
            return F.rms_norm(x, self.shape, eps=eps)
        if component == "project":
            return x - x.mean(dim=-1, keepdim=True)
        if component == "paper_no_projection":
            # = F.normalize(x, dim=-1) / sqrt(d), with the 1/sqrt(d) folded into the per-row divisor
            norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(PAPER_NORMALIZE_EPS)
            return x / (norm * math.sqrt(self.d))
        if component == "learned":
            # projected in at least float32: a bfloat16 x @ u leaves ~1e-2 of x along u
            xf = x if x.dtype in (torch.float32, torch.float64) else x.float()
            u = self.unit_direction().to(xf.dtype)
            return F.rms_norm(xf - (xf @ u)[..., None] * u, self.shape, eps=eps).to(x.dtype)
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.weight is None:
            return self.normalize(x)
        if self.spec.component == "both":  # fused affine
            return F.layer_norm(x, self.shape, self.weight, self.bias, eps=self.spec.eps)
        return torch.addcmul(self.bias, self.normalize(x), self.weight)
