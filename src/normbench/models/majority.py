"""The "majority" encoder of Brody et al. (2023), Section 4.1 and Appendix E.1.

One Transformer block over token embeddings E (no positional encoding), logits = h E^T.
With d=8, 1 head, FFN width 8, 20 classes, no q/k/v bias, output-projection bias, no affine on
the attention norm and an affine FFN norm it has 584 trainable parameters.
"""

from __future__ import annotations

import torch
from torch import nn

from normbench.blocks import Activation, Placement, TransformerBlock
from normbench.norms import NormSpec


class MajorityEncoder(nn.Module):
    """Token embedding -> ``n_layers`` blocks -> tied read-out ``h @ E^T`` (one logit per class)."""

    def __init__(
        self,
        num_classes: int = 20,
        d_model: int = 8,
        n_heads: int = 1,
        ffn_width: int = 8,
        n_layers: int = 1,
        placement: Placement = "pre",
        attn_norm: NormSpec | None = None,
        ffn_norm: NormSpec | None = None,
        activation: Activation = "relu",
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        if num_classes < 2 or n_layers < 1 or ffn_width < 1:
            raise ValueError(
                f"model: num_classes must be >= 2, n_layers and ffn_width >= 1 (got {num_classes}, {n_layers}, {ffn_width})"
            )
        self.embedding = nn.Embedding(num_classes, d_model)
        self.blocks = nn.ModuleList(
            TransformerBlock(
                d_model, n_heads, ffn_width, placement,
                attn_norm=attn_norm, ffn_norm=ffn_norm, activation=activation, dropout=dropout,
            )
            for _ in range(n_layers)
        )

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, T) int -> logits (B, T, num_classes)."""
        h = self.embedding(tokens)
        for block in self.blocks:
            h = block(h)
        return h @ self.embedding.weight.T
