"""``learned``: S(P_u(x)) with P_u(x) = x - (u^T x) u, the projection onto the hyperplane orthogonal to a learned unit
vector u = v / ||v|| (v initialised to 1, so it starts as LayerNorm): the open question of Brody et al. (2023),
Section 5.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from normbench.nn.norms.base import Norm
from normbench.nn.norms.layer_norm import rsqrt_mean_square


class LearnedNorm(Norm):
    """``learned``: S(P_u(x)), P_u(x) = x - (u^T x) u with u = v / ||v|| learned (``direction`` v, initialised to 1).

    m = (u^T x) u, s = sqrt(d / (||x - m||^2 + d eps)).
    """

    name = "learned"
    projects = uses_eps = learned_direction = scales = True

    def shift(self, x: torch.Tensor) -> torch.Tensor:
        u = self.unit_direction().to(x.dtype)
        return (x @ u)[..., None] * u

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        # projected in at least float32: a bfloat16 x @ u leaves ~1e-2 of x along u
        xf = x if x.dtype in (torch.float32, torch.float64) else x.float()
        return F.rms_norm(xf - self.shift(xf), self.shape, eps=self.eps).to(x.dtype)

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shift = self.shift(x)
        return shift, rsqrt_mean_square(x - shift, self.eps)
