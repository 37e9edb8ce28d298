"""Two norms that do not work, to see what a report card says of them (``normbench card``).

* :class:`NaNNorm` returns NaN for every input: the card's probe finds it broken before any run, and the card
  says so without training it::

      normbench card examples.broken_norms:NaNNorm

* :class:`RunawayNorm` is LayerNorm whose output scale doubles every 100 training steps: the probe finds it
  a fine norm (it projects and scales), but training diverges at any learning rate once its outputs overflow.
  Its card trains it and shows each seed's step of divergence::

      normbench card examples.broken_norms:RunawayNorm --tasks majority
"""

from __future__ import annotations

import torch

from normbench.nn.norms import Norm


class NaNNorm(Norm):
    """N(x) = NaN (every entry): a norm whose output is never finite."""

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.nan


class RunawayNorm(Norm):
    """N(x) = 2^(t / 100) (x - mean(x)) / std(x), t the training steps (forward passes in training mode) so far:
    LayerNorm whose output scale doubles every 100 steps, whatever the learning rate."""

    def __init__(self, d: int, *, eps: float = 1e-5, affine: bool = True) -> None:
        super().__init__(d, eps=eps, affine=affine)
        self.register_buffer("steps", torch.zeros((), dtype=torch.float64))

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            self.steps += 1
        gain = torch.exp2(self.steps / 100).to(x.dtype)
        return gain * (x - x.mean(dim=-1, keepdim=True)) / x.std(dim=-1, keepdim=True, correction=0)
