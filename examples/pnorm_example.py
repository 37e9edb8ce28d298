"""An example normbench plug-in norm: the p-norm scaling N(x) = x / (mean(|x|^p) + eps)^(1/p).

With eps = 0 that is d^(1/p) x / ||x||_p. For p = 2 it is RMSNorm (every output has Euclidean norm
sqrt(d)); for other p every output lies on the sphere of the p-norm, radius d^(1/p), which for p != 2
is not a Euclidean sphere. Whether that keeps every key selectable is the kind of question a plug-in
lets you ask without touching normbench.

It is written as normbench's own components are (``normbench.nn.norms``): a subclass of
:class:`~normbench.nn.norms.Norm` built as ``PNorm(d, *, eps, affine, p=4.0)`` (the width, the spec's
eps and affine, then its own keyword options with their defaults), its facts as class attributes, its
option rule in ``check_options`` and its map in ``normalize``; normbench applies the affine map after it.
Use it by import path (its options go in the spec's ``options``):

    PYTHONPATH=examples normbench fit --config majority --preset quick \\
        --model.arch.attn_norm.component pnorm_example:PNorm \\
        --model.arch.attn_norm.options '{p: 4}'
    # or, from the repository root:
    python -m normbench fit --config majority --model.arch.attn_norm.component examples.pnorm_example:PNorm

or give it a short name in your package's ``normbench.norms`` entry-point group, then
``--model.arch.attn_norm.component pnorm``:

    [project.entry-points."normbench.norms"]
    pnorm = "mypkg.pnorm_example:PNorm"

Any ``nn.Module`` whose constructor takes the width ``d`` first (and keyword options) and that maps
(..., d) to (..., d) works too: normbench wraps it (``normbench.nn.norms.module_component``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

from normbench.nn.norms import Norm


class PNorm(Norm):
    """N(x) = x / (mean(|x|^p) + eps)^(1/p) over the last dimension; option ``p`` >= 1 (default 4)."""

    uses_eps = True  # eps is part of the map (``scales`` stays False: its outputs share a p-norm, not a Euclidean one)

    def __init__(self, d: int, *, eps: float = 1e-5, affine: bool = True, p: float = 4.0) -> None:
        super().__init__(d, eps=eps, affine=affine, p=p)
        self.p = float(p)

    @classmethod
    def check_options(cls, options: Mapping[str, Any], d: int | None = None) -> None:
        super().check_options(options, d)
        p = options.get("p", 4.0)
        if p < 1:
            raise ValueError(f"options.p: must be >= 1, got {p!r}")

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x * (x.abs().pow(self.p).mean(dim=-1, keepdim=True) + self.eps).pow(-1 / self.p)
