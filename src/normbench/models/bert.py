"""BERT-style encoder (Devlin et al. 2019), the sentiment classifier of Brody et al. (2023), App. D.

Token + position + segment embeddings, an embedding norm, ``n_layers`` bidirectional blocks
(BERT: post-norm, GELU FFN), then the pooler tanh(W h_[CLS] + b) and a linear classifier. With
BERT-base-cased's vocabulary (28996), 512 positions, 2 segments, d=8, 4 layers, 4 heads and FFN
width 3072 (BERT-base's) it has 446,394 parameters (the paper's "446K"). Initialization as
BERT: weights N(0, 0.02), zero biases, unit norm gains.
"""

from __future__ import annotations

import torch
from torch import nn

from normbench.blocks import Activation, Placement, TransformerBlock
from normbench.norms import Norm, NormSpec

BERT_NORM = NormSpec("both", affine=True, eps=1e-12)


class BertEncoder(nn.Module):
    """(input_ids (B, T), padding_mask (B, T) True at padding) -> class logits (B, num_labels)."""

    def __init__(
        self,
        vocab_size: int = 28996,
        max_positions: int = 512,
        type_vocab_size: int = 2,
        d_model: int = 8,
        n_heads: int = 4,
        n_layers: int = 4,
        ffn_width: int = 3072,
        placement: Placement = "post",
        embed_norm: NormSpec = BERT_NORM,
        attn_norm: NormSpec = BERT_NORM,
        ffn_norm: NormSpec = BERT_NORM,
        activation: Activation = "gelu",
        dropout: float = 0.1,
        num_labels: int = 2,
        init_std: float = 0.02,
    ) -> None:
        super().__init__()
        if vocab_size < 2 or max_positions < 1 or n_layers < 1 or num_labels < 2:
            raise ValueError(f"model: vocab_size and num_labels must be >= 2, max_positions and n_layers >= 1 "
                             f"(got {vocab_size}, {num_labels}, {max_positions}, {n_layers})")
        self.max_positions = max_positions
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(max_positions, d_model)
        self.segment_embedding = nn.Embedding(type_vocab_size, d_model)
        self.embed_norm = Norm(d_model, embed_norm)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            TransformerBlock(d_model, n_heads, ffn_width, placement, attn_norm=attn_norm, ffn_norm=ffn_norm,
                             activation=activation, dropout=dropout, qkv_bias=True, out_bias=True)
            for _ in range(n_layers)
        )
        self.pooler = nn.Linear(d_model, d_model)
        self.classifier = nn.Linear(d_model, num_labels)
        for name, p in self.named_parameters():
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif "norm" in name:
                nn.init.ones_(p)
            else:
                nn.init.normal_(p, 0.0, init_std)

    def encode(self, input_ids: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """Hidden states (B, T, d) of the last block."""
        t = input_ids.shape[-1]
        if t > self.max_positions:
            raise ValueError(f"model.max_positions: sequences of {t} tokens exceed the {self.max_positions} positions")
        positions = torch.arange(t, device=input_ids.device)
        h = self.token_embedding(input_ids) + self.position_embedding(positions) + self.segment_embedding.weight[0]
        h = self.drop(self.embed_norm(h))
        for block in self.blocks:
            h = block(h, padding_mask)
        return h

    def forward(self, input_ids: torch.Tensor, padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        cls = self.encode(input_ids, padding_mask)[:, 0]
        return self.classifier(self.drop(torch.tanh(self.pooler(cls))))
