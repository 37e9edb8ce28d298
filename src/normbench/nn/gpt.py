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

from dataclasses import dataclass, replace
from typing import Any, ClassVar

from normbench.nn.blocks import TransformerBlock
from normbench.nn.config import Activation, ArchConfig, check_positive
from normbench.nn.norms import Norm, NormSpec
from normbench.nn.placement import NormRole, Placement, norm_exists

GPT2_NORM = NormSpec("both", affine=True, eps=1e-5)


@dataclass(frozen=True)
class GPTConfig(ArchConfig):
    """The GPT-2-style decoder; the defaults are the paper's 413,752-parameter model.

    Args:
        vocab_size: embedding rows (>= the tokenizer's vocabulary; GPT-2: 50257).
        max_positions: learned positions (>= the data's context and analysis length).
        d_model, n_heads, n_layers: width, heads, blocks.
        ffn_width: feed-forward width (default 4 d_model).
        placement: ``pre`` | ``post`` | ``none`` | ``peri``; the final norm exists under ``pre`` and ``peri``.
        attn_norm: the norm in front of attention ("w/o scaling" = ``project`` without affine).
        ffn_norm, final_norm: the other norms (GPT-2: affine LayerNorm, eps 1e-5).
        attn_out_norm, ffn_out_norm: the sublayer output norms of ``peri`` placement.
        qk_norm: RMS-normalize each head's queries and keys (learned temperature per head).
        activation: GPT-2's ``gelu_tanh``.
        qkv_bias: learn biases of the query/key/value projections (GPT-2's ``c_attn`` bias). The
            paper's LM froze them at their initial 0, which is this option off.
        dropout: embedding, attention and residual dropout (GPT-2: 0.1).
        init_std: std of the normal initialisation (GPT-2: 0.02).
    """

    NORM_ROLES: ClassVar[dict[str, NormRole]] = {"attn_norm": "block", "ffn_norm": "block", "final_norm": "final",
                                                 "attn_out_norm": "output", "ffn_out_norm": "output"}
    vocab_size: int = 50257
    max_positions: int = 1024
    d_model: int = 8
    n_heads: int = 4
    n_layers: int = 4
    ffn_width: int | None = None
    placement: Placement = "pre"
    attn_norm: NormSpec = GPT2_NORM
    ffn_norm: NormSpec = GPT2_NORM
    attn_out_norm: NormSpec = GPT2_NORM
    ffn_out_norm: NormSpec = GPT2_NORM
    final_norm: NormSpec = GPT2_NORM
    activation: Activation = "gelu_tanh"
    qkv_bias: bool = True
    dropout: float = 0.1
    init_std: float = 0.02

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive(self, "max_positions", *(("ffn_width",) if self.ffn_width is not None else ()))
        if self.vocab_size < 2:
            raise ValueError(f"model.arch.vocab_size: must be >= 2, got {self.vocab_size}")


class GPTDecoder(nn.Module):
    """tokens (B, T) -> next-token logits (B, T, vocab_size).

    ``GPTDecoder()`` is the paper's model; ``GPTDecoder(config, n_layers=2)`` changes fields.
    """

    def __init__(self, config: GPTConfig | None = None, **changes: Any) -> None:
        super().__init__()
        self.config = c = replace(config or GPTConfig(), **changes)
        self.max_positions = c.max_positions
        self.token_embedding = nn.Embedding(c.vocab_size, c.d_model)
        self.position_embedding = nn.Embedding(c.max_positions, c.d_model)
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(
            TransformerBlock(
                c.d_model, c.n_heads, c.ffn_width or 4 * c.d_model, c.placement, attn_norm=c.attn_norm,
                ffn_norm=c.ffn_norm, attn_out_norm=c.attn_out_norm, ffn_out_norm=c.ffn_out_norm,
                qk_norm=c.qk_norm, activation=c.activation, dropout=c.dropout, qkv_bias=c.qkv_bias, out_bias=True,
                causal=True,
            )
            for _ in range(c.n_layers)
        )
        self.final_norm = Norm(c.d_model, c.final_norm) if norm_exists("final", c.placement) else nn.Identity()
        self.init_weights(c.init_std)

    def init_weights(self, std: float) -> None:
        """GPT-2 initialization (see the module docstring)."""
        residual_std = std / math.sqrt(2 * len(self.blocks))
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif "norm" in name:  # a norm's gain is 1, its own scalars (alpha, g, t_h) keep their initial values
                continue
            elif name.endswith(("attn.out_proj.weight", "ffn.2.weight")):
                nn.init.normal_(p, 0.0, residual_std)
            else:
                nn.init.normal_(p, 0.0, std)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        t = tokens.shape[-1]
        if t > self.max_positions:
            raise ValueError(f"model.arch.max_positions: sequences of {t} tokens exceed the {self.max_positions} positions")
        positions = torch.arange(t, device=tokens.device)
        h = self.drop(self.token_embedding(tokens) + self.position_embedding(positions))
        for block in self.blocks:
            h = block(h)
        return self.final_norm(h) @ self.token_embedding.weight.T
