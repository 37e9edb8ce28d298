"""``scalenorm`` (Nguyen & Salazar 2019): g x / sqrt(||x||^2 + eps), one learned scalar g initialised to sqrt(d)
(option ``g``); every output has norm g (eps = 0).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from normbench.nn.norms.base import Norm
from normbench.nn.norms.layer_norm import no_shift


class ScaleNorm(Norm):
    """``scalenorm`` (Nguyen & Salazar 2019): g x / sqrt(||x||^2 + eps), one learned g per norm (initial value:
    option ``g``, default sqrt(d)); m = 0, s = g / sqrt(||x||^2 + eps)."""

    name = "scalenorm"
    uses_eps = scales = True
    own_parameters = ("g",)

    def __init__(self, d: int, *, eps: float = 1e-5, affine: bool = True, g: float | None = None) -> None:
        super().__init__(d, eps=eps, affine=affine, g=g)
        self.g = nn.Parameter(torch.tensor(float(math.sqrt(d) if g is None else g)))

    @classmethod
    def check_options(cls, options: Mapping[str, Any], d: int | None = None) -> None:
        super().check_options(options, d)
        g = options.get("g")
        if g is not None and g <= 0:
            raise ValueError(f"options.g: must be > 0, got {g!r}")

    def scale(self, x: torch.Tensor) -> torch.Tensor:
        """g / sqrt(||x||^2 + eps), per row (..., 1)."""
        return self.g.to(x.dtype) * torch.rsqrt(x.pow(2).sum(dim=-1, keepdim=True) + self.eps)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale(x)

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return no_shift(x, self.scale(x))
