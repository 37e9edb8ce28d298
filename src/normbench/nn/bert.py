"""BERT-style encoder (Devlin et al. 2019), the sentiment classifier of Brody et al. (2023), App. D.

Token + position + segment embeddings, an embedding norm, ``n_layers`` bidirectional blocks
(BERT: post-norm, GELU FFN), then the pooler tanh(W h_[CLS] + b) and a linear classifier. With
BERT-base-cased's vocabulary (28996), 512 positions, 2 segments, d=8, 4 layers, 4 heads and FFN
width 3072 (BERT-base's) it has 446,394 parameters (the paper's "446K"). Initialization as
BERT: weights N(0, 0.02), zero biases, unit norm gains.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

import torch
from torch import nn

from normbench.nn.blocks import TransformerBlock
from normbench.nn.config import Activation, ArchConfig, BlockKwargs, check_positive
from normbench.nn.norms import NormSpec, create_norm
from normbench.nn.placement import NormRole, Placement

BERT_NORM = NormSpec("both", affine=True, eps=1e-12)


@dataclass(frozen=True)
class BertConfig(ArchConfig):
    """The BERT-style encoder; the defaults are the paper's 446,394-parameter model.

    Args:
        vocab_size: embedding rows (>= the tokenizer's vocabulary; BERT-base cased: 28996).
        max_positions: learned positions (>= the data's max_length).
        type_vocab_size: segment embeddings.
        d_model, n_heads, n_layers: width, heads, blocks.
        ffn_width: feed-forward width (BERT-base: 3072).
        placement: ``pre`` | ``post`` | ``none`` | ``peri`` (BERT: post).
        embed_norm: the norm on the input embedding (the paper's LayerNorm-free model removes it too).
        attn_norm, ffn_norm: the block norms (BERT: affine LayerNorm, eps 1e-12).
        attn_out_norm, ffn_out_norm: the sublayer output norms of ``peri`` placement.
        qk_norm: RMS-normalize each head's queries and keys (learned temperature per head).
        activation: BERT's ``gelu``.
        dropout: embedding, attention, residual and classifier dropout (BERT: 0.1).
        num_labels: output classes.
        init_std: std of the normal initialisation (BERT: 0.02).
    """

    NORM_ROLES: ClassVar[dict[str, NormRole]] = {
        "embed_norm": "embedding",
        "attn_norm": "block",
        "ffn_norm": "block",
        "attn_out_norm": "output",
        "ffn_out_norm": "output",
    }
    vocab_size: int = 28996
    max_positions: int = 512
    type_vocab_size: int = 2
    d_model: int = 8
    n_heads: int = 4
    n_layers: int = 4
    ffn_width: int = 3072
    placement: Placement = "post"
    embed_norm: NormSpec = BERT_NORM
    attn_norm: NormSpec = BERT_NORM
    ffn_norm: NormSpec = BERT_NORM
    attn_out_norm: NormSpec = BERT_NORM
    ffn_out_norm: NormSpec = BERT_NORM
    activation: Activation = "gelu"
    dropout: float = 0.1
    num_labels: int = 2
    init_std: float = 0.02

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive(self, "max_positions", "type_vocab_size", "ffn_width")
        for name in ("vocab_size", "num_labels"):
            if getattr(self, name) < 2:
                raise ValueError(f"model.arch.{name}: must be >= 2, got {getattr(self, name)}")

    def block_kwargs(self) -> BlockKwargs:
        """As :meth:`ArchConfig.block_kwargs`, with BERT's q/k/v biases."""
        return {**super().block_kwargs(), "qkv_bias": True}


class BertEncoder(nn.Module):
    """(input_ids (B, T), padding_mask (B, T) True at padding) -> class logits (B, num_labels).

    ``BertEncoder()`` is the paper's model; ``BertEncoder(config, placement="pre")`` changes fields.
    """

    def __init__(self, config: BertConfig | None = None, **changes: Any) -> None:
        super().__init__()
        self.config = c = replace(config or BertConfig(), **changes)
        self.max_positions = c.max_positions
        self.token_embedding = nn.Embedding(c.vocab_size, c.d_model)
        self.position_embedding = nn.Embedding(c.max_positions, c.d_model)
        self.segment_embedding = nn.Embedding(c.type_vocab_size, c.d_model)
        self.embed_norm = create_norm(c.d_model, c.embed_norm)
        self.drop = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(TransformerBlock(**c.block_kwargs()) for _ in range(c.n_layers))
        self.pooler = nn.Linear(c.d_model, c.d_model)
        self.classifier = nn.Linear(c.d_model, c.num_labels)
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif "norm" in name:  # a norm's gain is 1, its own scalars (alpha, g, t_h) keep their initial values
                continue
            else:
                nn.init.normal_(p, 0.0, c.init_std)

    def encode(self, input_ids: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Hidden states (B, T, d) of the last block."""
        t = input_ids.shape[-1]
        if t > self.max_positions:
            raise ValueError(
                f"model.arch.max_positions: sequences of {t} tokens exceed the {self.max_positions} positions"
            )
        positions = torch.arange(t, device=input_ids.device)
        h = self.token_embedding(input_ids) + self.position_embedding(positions) + self.segment_embedding.weight[0]
        h = self.drop(self.embed_norm(h))
        for block in self.blocks:
            h = block(h, padding_mask)
        return h

    def forward(self, input_ids: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        cls = self.encode(input_ids, padding_mask)[:, 0]
        return self.classifier(self.drop(torch.tanh(self.pooler(cls))))
