"""A norm that trains alone but not as a stack of seeds: it reads a value to the host in every forward pass, which
``torch.func.vmap`` cannot map (tests/sweep/test_bake.py: a bake trains the seeds of such a norm alone)."""

from __future__ import annotations

import torch

from normbench.nn.norms import Norm


class HostReadNorm(Norm):
    """LayerNorm, N(x) = (x - mean(x)) / std(x), that reads the largest |x| to the host first (a Python float)."""

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        if float(x.detach().abs().max()) > 1e30:  # a host read: data-dependent, so not vmappable
            raise FloatingPointError("input overflow")
        centred = x - x.mean(-1, keepdim=True)
        return centred / torch.sqrt(centred.pow(2).mean(-1, keepdim=True) + self.eps)
