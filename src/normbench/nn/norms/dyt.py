"""``dyt``, Dynamic Tanh (Zhu et al. 2025): tanh(alpha x) elementwise, one learned scalar alpha (initial value:
option ``alpha``, default 0.5); no statistic over the features, so not of the shift-and-scale form.
"""

from __future__ import annotations

import torch
from torch import nn

from normbench.nn.norms.base import Norm


class DyT(Norm):
    """``dyt``, Dynamic Tanh (Zhu et al. 2025): tanh(alpha x), one learned alpha per norm (initial value: option
    ``alpha``); not of the shift-and-scale form."""

    name = "dyt"
    own_parameters = ("alpha",)

    def __init__(self, d: int, *, eps: float = 1e-5, affine: bool = True, alpha: float = 0.5) -> None:
        super().__init__(d, eps=eps, affine=affine, alpha=alpha)
        self.alpha = nn.Parameter(torch.tensor(float(alpha)))

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.alpha.to(x.dtype) * x)
