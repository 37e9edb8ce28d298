"""The "majority" encoder of Brody et al. (2023), Section 4.1 and Appendix E.1.

One Transformer block over token embeddings E (no positional encoding), logits = h E^T.
With d=8, 1 head, FFN width 8, 20 classes, no q/k/v bias, output-projection bias, no affine on
the attention norm and an affine FFN norm it has 584 trainable parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar

import torch
from torch import nn

from normbench.nn.blocks import TransformerBlock
from normbench.nn.config import Activation, ArchConfig, check_positive
from normbench.nn.norms import NormSpec
from normbench.nn.placement import NormRole

INITS = ("linear", "encoder_layer")


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
        init: ``linear``: every projection keeps ``nn.Linear``'s initialiser (weights and biases
            U(-1/sqrt(d), 1/sqrt(d))); ``encoder_layer``: the authors' model, the values that
            ``nn.Embedding`` + ``nn.TransformerEncoderLayer`` draw from the same RNG state
            (``xavier_uniform_`` over the fused (3d, d) q/k/v weight, bound sqrt(6 / (d + 3d)) = 0.433
            at d = 8, and a zero output-projection bias); see :func:`encoder_layer_init`.
    """

    NORM_ROLES: ClassVar[dict[str, NormRole]] = {
        "attn_norm": "block",
        "ffn_norm": "block",
        "attn_out_norm": "output",
        "ffn_out_norm": "output",
    }
    OPTIONAL: ClassVar[dict[str, object]] = {**ArchConfig.OPTIONAL, "init": "linear"}
    num_classes: int = 20
    d_model: int = 8
    n_heads: int = 1
    ffn_width: int = 8
    n_layers: int = 1
    attn_norm: NormSpec = NormSpec("both", affine=False, eps=0.0)
    ffn_norm: NormSpec = NormSpec("both", affine=True, eps=0.0)
    attn_out_norm: NormSpec = NormSpec("both", affine=True, eps=0.0)
    ffn_out_norm: NormSpec = NormSpec("both", affine=True, eps=0.0)
    activation: Activation = "relu"
    dropout: float = 0.0
    init: str = "linear"

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive(self, "ffn_width")
        if self.init not in INITS:
            raise ValueError(f"model.arch.init: {self.init!r} is not allowed; choose one of {', '.join(INITS)}")
        if self.num_classes < 2:
            raise ValueError(f"model.arch.num_classes: must be >= 2, got {self.num_classes}")


class MajorityEncoder(nn.Module):
    """Token embedding -> ``n_layers`` blocks -> tied read-out ``h @ E^T`` (one logit per class).

    ``MajorityEncoder()`` is the paper's model; ``MajorityEncoder(config, d_model=3)`` changes fields.
    """

    def __init__(self, config: MajorityConfig | None = None, **changes: Any) -> None:
        super().__init__()
        self.config = c = replace(config or MajorityConfig(), **changes)
        rng_state = torch.random.get_rng_state()
        self.embedding = nn.Embedding(c.num_classes, c.d_model, device="cpu")
        self.blocks = nn.ModuleList(TransformerBlock(**c.block_kwargs()) for _ in range(c.n_layers))
        if c.init == "encoder_layer":
            torch.random.set_rng_state(rng_state)  # draw again, in the authors' modules' order
            encoder_layer_init(self)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, T) int -> logits (B, T, num_classes)."""
        h = self.embedding(tokens)
        for block in self.blocks:
            h = block(h)
        return h @ self.embedding.weight.T


def encoder_layer_init(model: MajorityEncoder) -> None:
    """Give ``model`` the parameters of the authors' model drawn from the current RNG state.

    The authors build ``nn.Embedding(k, d)`` (N(0, 1)), then per layer
    ``nn.TransformerEncoderLayer(d, n_heads, ffn_width, dropout, norm_first=True)``: its attention
    draws the output projection (``nn.Linear``: weight U(+-1/sqrt(d)), bias drawn then zeroed) and
    then ``xavier_uniform_`` over the fused (3d, d) q/k/v weight, U(+-sqrt(6 / (d + 3d))); then its two
    feed-forward ``nn.Linear``s. Those modules are built here, on the CPU, in that order, and their
    values copied: the same seed gives the authors' initial model to the last bit. Norm parameters
    (gains 1, biases 0) draw nothing and keep their values.
    """
    c = model.config
    embedding = nn.Embedding(c.num_classes, c.d_model, device="cpu")
    with torch.no_grad():
        model.embedding.weight.copy_(embedding.weight)
        for block in model.blocks:
            layer = nn.TransformerEncoderLayer(
                c.d_model, c.n_heads, c.ffn_width, c.dropout, norm_first=True, batch_first=True, device="cpu"
            )
            q, k, v = layer.self_attn.in_proj_weight.chunk(3)
            attn, (first, _, second) = block.attn, block.ffn
            for ours, theirs in (
                (attn.q_proj.weight, q),
                (attn.k_proj.weight, k),
                (attn.v_proj.weight, v),
                (attn.out_proj.weight, layer.self_attn.out_proj.weight),
                (first.weight, layer.linear1.weight),
                (first.bias, layer.linear1.bias),
                (second.weight, layer.linear2.weight),
                (second.bias, layer.linear2.bias),
            ):
                ours.copy_(theirs)
            if attn.out_proj.bias is not None:
                attn.out_proj.bias.zero_()
