"""The "majority" encoder of Brody et al. (2023), Section 4.1 and Appendix E.1.

One Transformer block over token embeddings E (no positional encoding), logits = h E^T.
With d=8, 1 head, FFN width 8, 20 classes, no q/k/v bias, output-projection bias, no affine on
the attention norm and an affine FFN norm it has 584 trainable parameters.
"""

from __future__ import annotations

import torch
from torch import nn

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from normbench.nn.blocks import TransformerBlock
from normbench.nn.config import Activation, ArchConfig, check_positive
from normbench.nn.norms import NormSpec
from normbench.nn.placement import NormRole, Placement


@dataclass(frozen=True)
class MajorityConfig(ArchConfig):
    """The majority encoder; the defaults are the authors' 584-parameter model.

    Args:
        num_classes: token classes (= output classes; must equal the data's).
        d_model: width d of the embeddings and the residual stream.
        n_heads: attention heads.
        ffn_width: hidden width of the feed-forward layer.
        n_layers: Transformer blocks.
        placement: ``pre`` | ``post`` | ``none`` | ``peri`` (see :mod:`normbench.nn.placement`).
        attn_norm: the norm in front of attention (the paper ablates this one; no affine, eps 0).
        ffn_norm: the norm in front of the feed-forward layer (affine LayerNorm, eps 0).
        attn_out_norm, ffn_out_norm: the sublayer output norms of ``peri`` placement.
        qk_norm: RMS-normalize each head's queries and keys (learned temperature per head).
        activation: ``relu`` | ``gelu`` | ``gelu_tanh``.
        dropout: dropout after each sublayer and inside attention.
    """

    NORM_ROLES: ClassVar[dict[str, NormRole]] = {"attn_norm": "block", "ffn_norm": "block",
                                                 "attn_out_norm": "output", "ffn_out_norm": "output"}
    num_classes: int = 20
    d_model: int = 8
    n_heads: int = 1
    ffn_width: int = 8
    n_layers: int = 1
    placement: Placement = "pre"
    attn_norm: NormSpec = NormSpec("both", affine=False, eps=0.0)
    ffn_norm: NormSpec = NormSpec("both", affine=True, eps=0.0)
    attn_out_norm: NormSpec = NormSpec("both", affine=True, eps=0.0)
    ffn_out_norm: NormSpec = NormSpec("both", affine=True, eps=0.0)
    activation: Activation = "relu"
    dropout: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive(self, "ffn_width")
        if self.num_classes < 2:
            raise ValueError(f"model.arch.num_classes: must be >= 2, got {self.num_classes}")


class MajorityEncoder(nn.Module):
    """Token embedding -> ``n_layers`` blocks -> tied read-out ``h @ E^T`` (one logit per class).

    ``MajorityEncoder()`` is the paper's model; ``MajorityEncoder(config, d_model=3)`` changes fields.
    """

    def __init__(self, config: MajorityConfig | None = None, **changes: Any) -> None:
        super().__init__()
        self.config = c = replace(config or MajorityConfig(), **changes)
        self.embedding = nn.Embedding(c.num_classes, c.d_model)
        self.blocks = nn.ModuleList(
            TransformerBlock(c.d_model, c.n_heads, c.ffn_width, c.placement, attn_norm=c.attn_norm,
                             ffn_norm=c.ffn_norm, attn_out_norm=c.attn_out_norm, ffn_out_norm=c.ffn_out_norm,
                             qk_norm=c.qk_norm, activation=c.activation, dropout=c.dropout)
            for _ in range(c.n_layers)
        )

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, T) int -> logits (B, T, num_classes)."""
        h = self.embedding(tokens)
        for block in self.blocks:
            h = block(h)
        return h @ self.embedding.weight.T
