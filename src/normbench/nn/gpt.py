"""GPT-2-style causal decoder (Radford et al. 2019), the language model of Brody et al. (2023) §4.2.

Learned token and position embeddings, ``n_layers`` causal Transformer blocks with a GELU
feed-forward of width 4d, a final norm (pre-norm placement only) and the LM head tied to the
token embedding: logits = N_f(h) E^T. With GPT-2's vocabulary (50257), 1024 positions, d=8,
4 layers, q/k/v and output biases and affine LayerNorms it has 413,752 parameters (the paper's
"414K"). The block input is h_0 = s E[x_t] + P[t], with s = 1 unless ``embedding_scale`` sets it
(Zhu et al. 2025 scale the embedding of their DyT LLaMA by a learned scalar initialised to sqrt(d)).
Weights follow GPT-2's initialization: N(0, 0.02), residual output projections
N(0, 0.02 / sqrt(2 n_layers)), zero biases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

import torch
from torch import nn

from normbench.nn.blocks import TransformerBlock
from normbench.nn.config import Activation, ArchConfig, BlockKwargs, EffectiveArch, check_positive
from normbench.nn.norms import NormSpec, create_norm
from normbench.nn.placement import NormRole, norm_exists

GPT2_NORM = NormSpec("both", affine=True, eps=1e-5)
EmbeddingScale = float | Literal["none", "sqrt_d"]


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
            Each norm has its own spec, so each position takes its own options: DyT's initial
            alpha per position, e.g. ``attn_norm: {component: dyt, options: {alpha: 0.8}}`` beside
            ``ffn_norm``/``final_norm`` with ``alpha: 0.2`` (Zhu et al. 2025's LLaMA recipe).
        qk_norm: RMS-normalize each head's queries and keys (learned temperature per head).
        activation: GPT-2's ``gelu_tanh``.
        qkv_bias: learn biases of the query/key/value projections (GPT-2's ``c_attn`` bias). The
            paper's LM froze them at their initial 0, which is this option off.
        dropout: embedding, attention and residual dropout (GPT-2: 0.1).
        init_std: std of the normal initialisation (GPT-2: 0.02).
        embedding_scale: s in h_0 = s E[x_t] + P[t]: ``none`` (s = 1, GPT-2), ``sqrt_d`` (s = sqrt(d_model),
            as Zhu et al. 2025 scale the embedding of their DyT LLaMA) or a positive number.
        learn_embedding_scale: learn s as one scalar initialised to ``embedding_scale`` (Zhu et al.'s
            is learned), instead of a fixed multiplier.
    """

    NORM_ROLES: ClassVar[dict[str, NormRole]] = {
        "attn_norm": "block",
        "ffn_norm": "block",
        "final_norm": "final",
        "attn_out_norm": "output",
        "ffn_out_norm": "output",
    }
    OPTIONAL: ClassVar[dict[str, object]] = {
        **ArchConfig.OPTIONAL,
        "embedding_scale": "none",
        "learn_embedding_scale": False,
    }
    vocab_size: int = 50257
    max_positions: int = 1024
    d_model: int = 8
    n_heads: int = 4
    n_layers: int = 4
    ffn_width: int | None = None
    attn_norm: NormSpec = GPT2_NORM
    ffn_norm: NormSpec = GPT2_NORM
    attn_out_norm: NormSpec = GPT2_NORM
    ffn_out_norm: NormSpec = GPT2_NORM
    final_norm: NormSpec = GPT2_NORM
    activation: Activation = "gelu_tanh"
    qkv_bias: bool = True
    dropout: float = 0.1
    init_std: float = 0.02
    embedding_scale: EmbeddingScale = "none"
    learn_embedding_scale: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive(self, "max_positions", *(("ffn_width",) if self.ffn_width is not None else ()))
        if self.vocab_size < 2:
            raise ValueError(f"model.arch.vocab_size: must be >= 2, got {self.vocab_size}")
        scale = self.embedding_scale
        if not (
            scale in ("none", "sqrt_d")
            or (isinstance(scale, (int, float)) and not isinstance(scale, bool) and math.isfinite(scale) and scale > 0)
        ):
            raise ValueError(f"model.arch.embedding_scale: must be none, sqrt_d or a positive number, got {scale!r}")
        if not isinstance(self.learn_embedding_scale, bool):
            raise ValueError(
                f"model.arch.learn_embedding_scale: must be true or false, got {self.learn_embedding_scale!r}"
            )

    def block_kwargs(self) -> BlockKwargs:
        """As :meth:`ArchConfig.block_kwargs`, with causal attention, the q/k/v biases of ``qkv_bias`` and the
        feed-forward width 4 d_model unless ``ffn_width`` is set."""
        ffn_width = self.ffn_width or 4 * self.d_model
        return {**super().block_kwargs(), "ffn_width": ffn_width, "qkv_bias": self.qkv_bias, "causal": True}

    def embedding_multiplier(self) -> float:
        """s in h_0 = s E[x_t] + P[t] (its initial value when learned): 1, sqrt(d_model) or the number given."""
        if self.embedding_scale == "none":
            return 1.0
        return math.sqrt(self.d_model) if self.embedding_scale == "sqrt_d" else float(self.embedding_scale)

    def effective(self) -> EffectiveArch:
        """As :meth:`ArchConfig.effective`, with the embedding scale as the number s it multiplies by, left out when
        the input is GPT-2's (s = 1, not learned): ``sqrt_d`` and its value at this width name one network."""
        out = super().effective()
        s = self.embedding_multiplier()
        out.pop("embedding_scale", None)
        if s != 1.0 or self.learn_embedding_scale:
            out["embedding_scale"] = s
        return out


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
        scale = c.embedding_multiplier()
        # s of h_0 = s E[x_t] + P[t]: a learned scalar, a fixed number, or None (s = 1, GPT-2's input)
        self.embedding_scale: nn.Parameter | float | None = (
            nn.Parameter(torch.tensor(scale)) if c.learn_embedding_scale else None if scale == 1.0 else scale
        )
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(TransformerBlock(**c.block_kwargs()) for _ in range(c.n_layers))
        self.final_norm = create_norm(c.d_model, c.final_norm) if norm_exists("final", c.placement) else nn.Identity()
        self.init_weights(c.init_std)

    def init_weights(self, std: float) -> None:
        """GPT-2 initialization (see the module docstring)."""
        residual_std = std / math.sqrt(2 * len(self.blocks))
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif "norm" in name or name == "embedding_scale":  # a norm's gain is 1; scalars keep their initial values
                continue
            elif name.endswith(("attn.out_proj.weight", "ffn.2.weight")):
                nn.init.normal_(p, 0.0, residual_std)
            else:
                nn.init.normal_(p, 0.0, std)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        t = tokens.shape[-1]
        if t > self.max_positions:
            raise ValueError(
                f"model.arch.max_positions: sequences of {t} tokens exceed the {self.max_positions} positions"
            )
        positions = torch.arange(t, device=tokens.device)
        embedded = self.token_embedding(tokens)
        if self.embedding_scale is not None:
            embedded = embedded * self.embedding_scale
        h = self.drop(embedded + self.position_embedding(positions))
        for block in self.blocks:
            h = block(h)
        return self.final_norm(h) @ self.token_embedding.weight.T
