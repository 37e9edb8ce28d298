"""GPT-2-style causal decoder (Radford et al. 2019), the language model of Brody et al. (2023) §4.2.

Learned token and position embeddings, ``n_layers`` causal Transformer blocks with a GELU
feed-forward of width 4d, a final norm (pre-norm placement only) and the LM head tied to the
token embedding: logits = N_f(h) E^T. With GPT-2's vocabulary (50257), 1024 positions, d=8,
4 layers, q/k/v and output biases and affine LayerNorms it has 413,752 parameters (the paper's
"414K"). Weights follow GPT-2's initialization: N(0, 0.02), residual output projections
N(0, 0.02 / sqrt(2 n_layers)), zero biases.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from normbench.blocks import Activation, Placement, TransformerBlock
from normbench.norms import Norm, NormSpec

GPT2_NORM = NormSpec("both", affine=True, eps=1e-5)


class GPTDecoder(nn.Module):
    """tokens (B, T) -> next-token logits (B, T, vocab_size)."""

    def __init__(
        self,
        vocab_size: int = 50257,
        max_positions: int = 1024,
        d_model: int = 8,
        n_heads: int = 4,
        n_layers: int = 4,
        ffn_width: int | None = None,
        placement: Placement = "pre",
        attn_norm: NormSpec = GPT2_NORM,
        ffn_norm: NormSpec = GPT2_NORM,
        final_norm: NormSpec = GPT2_NORM,
        activation: Activation = "gelu_tanh",
        dropout: float = 0.1,
        init_std: float = 0.02,
    ) -> None:
        super().__init__()
        if vocab_size < 2 or max_positions < 1 or n_layers < 1:
            raise ValueError(f"model: vocab_size must be >= 2, max_positions and n_layers >= 1 "
                             f"(got {vocab_size}, {max_positions}, {n_layers})")
        self.max_positions = max_positions
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(max_positions, d_model)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            TransformerBlock(
                d_model, n_heads, ffn_width or 4 * d_model, placement, attn_norm=attn_norm, ffn_norm=ffn_norm,
                activation=activation, dropout=dropout, qkv_bias=True, out_bias=True, causal=True,
            )
            for _ in range(n_layers)
        )
        self.final_norm = Norm(d_model, final_norm) if placement == "pre" else nn.Identity()
        self.init_weights(init_std)

    def init_weights(self, std: float) -> None:
        """GPT-2 initialization (see the module docstring)."""
        residual_std = std / math.sqrt(2 * len(self.blocks))
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif "norm" in name:
                nn.init.ones_(p)
            elif name.endswith(("attn.out_proj.weight", "ffn.2.weight")):
                nn.init.normal_(p, 0.0, residual_std)
            else:
                nn.init.normal_(p, 0.0, std)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        t = tokens.shape[-1]
        if t > self.max_positions:
            raise ValueError(f"model.max_positions: sequences of {t} tokens exceed the {self.max_positions} positions")
        positions = torch.arange(t, device=tokens.device)
        h = self.drop(self.token_embedding(tokens) + self.position_embedding(positions))
        for block in self.blocks:
            h = block(h)
        return self.final_norm(h) @ self.token_embedding.weight.T
