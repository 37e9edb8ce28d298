"""Normalization components: LayerNorm split into projection and scaling.

For x in R^d with mean mu and ones vector 1:

* ``project``: P(x) = x - mu * 1, the orthogonal projection onto the hyperplane 1^T y = 0.
* ``scale``: S(x) = x * sqrt(d) / sqrt(||x||^2 + d * eps), norm sqrt(d) (= RMSNorm).
* ``both``: S(P(x)) = (x - mu) / sqrt(var(x) + eps) (= LayerNorm).
* ``none``: identity.
* ``paper_no_projection``: the "without projection" norm of Brody et al. (2023) exactly as
  their code computes it, ``F.normalize(x, dim=-1) / sqrt(d)``: norm 1/sqrt(d), not sqrt(d).

Each may be followed by a learned affine map y -> gain * y + bias.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

import torch
import torch.nn.functional as F
from torch import nn

Component = Literal["both", "project", "scale", "none", "paper_no_projection"]
COMPONENTS: tuple[str, ...] = get_args(Component)
PAPER_NORMALIZE_EPS = 1e-12  # F.normalize's default clamp, as in the authors' code


@dataclass(frozen=True)
class NormSpec:
    """Which parts of LayerNorm to apply, and how.

    Args:
        component: ``both`` (LayerNorm), ``project`` (subtract the mean), ``scale`` (RMSNorm),
            ``none`` (identity) or ``paper_no_projection`` (``F.normalize(x)/sqrt(d)``).
        affine: learn a per-feature gain and bias after the normalization.
        eps: added to the variance (``both``) or mean square (``scale``); unused otherwise.
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

    def extra_repr(self) -> str:
        return f"d={self.d}, component={self.spec.component}, affine={self.weight is not None}, eps={self.spec.eps}"

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
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.weight is None:
            return self.normalize(x)
        if self.spec.component == "both":  # fused affine
            return F.layer_norm(x, self.shape, self.weight, self.bias, eps=self.spec.eps)
        return torch.addcmul(self.bias, self.normalize(x), self.weight)
