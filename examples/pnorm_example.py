"""An example normbench plug-in norm: the p-norm scaling N(x) = d^(1/p) x / ||x||_p.

For p = 2 it is RMSNorm without eps (every output has Euclidean norm sqrt(d)); for other p every
output lies on the sphere of the p-norm, radius d^(1/p), which for p != 2 is not a Euclidean
sphere. Whether that keeps every key selectable is the kind of question a plug-in lets you ask
without touching normbench:

    PYTHONPATH=examples normbench fit --config majority --preset quick \\
        --model.init_args.arch.attn_norm.component pnorm_example:PNorm \\
        --model.init_args.arch.attn_norm.options '{p: 4}'

Any ``nn.Module`` whose constructor takes the width ``d`` first (and optional keyword options,
given as ``options`` in the norm spec) and that maps (..., d) to (..., d) works the same way.
"""

from __future__ import annotations

import torch
from torch import nn


class PNorm(nn.Module):
    """N(x) = d^(1/p) x / (||x||_p + eps), over the last dimension; ``p`` >= 1."""

    def __init__(self, d: int, p: float = 4.0, eps: float = 1e-6) -> None:
        super().__init__()
        if p < 1:
            raise ValueError(f"options.p: must be >= 1, got {p}")
        self.d, self.p, self.eps = d, float(p), float(eps)

    def extra_repr(self) -> str:
        return f"d={self.d}, p={self.p}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.d ** (1 / self.p) / (torch.linalg.vector_norm(x, ord=self.p, dim=-1, keepdim=True) + self.eps)
