"""``paper_no_projection``: the "without projection" norm of Brody et al. (2023) exactly as their code computes it,
``F.normalize(x, dim=-1) / sqrt(d)``: norm 1/sqrt(d), not sqrt(d) as RMSNorm's.
"""

from __future__ import annotations

import math

import torch

from normbench.nn.norms.base import Norm
from normbench.nn.norms.layer_norm import no_shift

PAPER_NORMALIZE_EPS = 1e-12  # F.normalize's default clamp, as in the authors' code


class PaperNoProjection(Norm):
    """``paper_no_projection``: ``F.normalize(x, dim=-1) / sqrt(d)``; m = 0, s = 1/(sqrt(d) ||x||).

    The 1/sqrt(d) is folded into the per-row divisor.
    """

    name = "paper_no_projection"
    scales = True

    def divisor(self, x: torch.Tensor) -> torch.Tensor:
        """sqrt(d) ||x||, the per-row divisor of ``F.normalize(x) / sqrt(d)``."""
        return torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(PAPER_NORMALIZE_EPS) * math.sqrt(self.d)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x / self.divisor(x)

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return no_shift(x, 1.0 / self.divisor(x))
