"""Attention and the Transformer block, with norm placement and components as parameters.

The placement equations are in :mod:`normbench.nn.placement`. The keys and queries of attention
are the rows of the attention input, so analyses read them with forward hooks on the named hook
points of :func:`hook_points` (see :mod:`normbench.analysis.hooks`); nothing here runs a second
forward pass.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from normbench.nn.config import Activation, check_heads
from normbench.nn.norms import Norm, NormSpec, create_norm
from normbench.nn.placement import PLACEMENTS, Placement, check_placement, norm_exists

__all__ = ["PLACEMENTS", "Placement", "Attention", "FeedForward", "TransformerBlock", "hook_points"]
ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU, "gelu_tanh": lambda: nn.GELU(approximate="tanh")}  # gelu_tanh: GPT-2's


class Attention(nn.Module):
    """Multi-head self-attention, softmax((x W_q^T)(x W_k^T)^T / sqrt(d_head)) (x W_v^T), then W_o.

    With ``qk_norm`` each head's queries and keys are RMS-normalized over the head width before the
    dot product, q_h <- t_h RMS(q_h), k_h <- RMS(k_h), with a learned temperature t_h per head
    (initialised to 1): every key of a head then has norm sqrt(d_head). The per-head keys (B, H, T,
    d_head), normalized or not, pass through the hook point ``keys`` (an identity).
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        qkv_bias: bool = False,
        out_bias: bool = True,
        dropout: float = 0.0,
        causal: bool = False,
        qk_norm: bool = False,
    ) -> None:
        super().__init__()
        check_heads(d_model, n_heads)
        self.n_heads, self.d_head, self.causal, self.dropout = n_heads, d_model // n_heads, causal, dropout
        self.q_proj = nn.Linear(d_model, d_model, bias=qkv_bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=qkv_bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=qkv_bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=out_bias)
        # the temperature t_h of each head, shaped to multiply (B, H, T, d_head)
        self.qk_norm_scale = nn.Parameter(torch.ones(n_heads, 1, 1)) if qk_norm else None
        self.keys = nn.Identity()

    def head_keys(self, x: torch.Tensor) -> torch.Tensor:
        """Each head's keys in its own key space, rows of x W_k^T + b (RMS-normalized under QK-norm): (B, H, T, d_head).

        Computed in the dtype of ``x`` (analyses pass float64 attention inputs: float32 rounding
        alone would put normalized keys that lie close together slightly inside their hull).
        """
        bias = None if self.k_proj.bias is None else self.k_proj.bias.to(x.dtype)
        k = self.split_heads(F.linear(x, self.k_proj.weight.to(x.dtype), bias))
        return F.rms_norm(k, (self.d_head,)) if self.qk_norm_scale is not None else k

    def split_heads(self, t: torch.Tensor) -> torch.Tensor:
        """(B, T, d) -> (B, H, T, d_head)."""
        return t.unflatten(-1, (self.n_heads, self.d_head)).transpose(-3, -2)

    def effective_queries(self, x: torch.Tensor) -> torch.Tensor:
        """Per-head "query" of Brody et al. eq. 6, q Q K^T / sqrt(d_head), in key space: (B, H, T, d).

        Without QK-norm the score of key x' is exactly this query dotted with x'; under QK-norm the
        scores are those of the normalized queries and keys, which no single query in x-space gives.
        """
        w_k = self.k_proj.weight.unflatten(0, (self.n_heads, self.d_head))  # (H, d_head, d)
        q = self.split_heads(self.q_proj(x))  # (B, H, T, d_head)
        return torch.einsum("bhtc,hcd->bhtd", q, w_k) / self.d_head**0.5

    def forward(self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        """``key_padding_mask``: (B, T) bool, True where the key is padding and must be ignored."""
        q, k, v = (self.split_heads(p(x)) for p in (self.q_proj, self.k_proj, self.v_proj))
        if self.qk_norm_scale is not None:
            q = F.rms_norm(q, (self.d_head,)) * self.qk_norm_scale
            k = F.rms_norm(k, (self.d_head,))
        k = self.keys(k)
        mask = None
        if key_padding_mask is not None:
            mask = ~key_padding_mask[:, None, None, :]
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, dropout_p=self.dropout if self.training else 0.0, is_causal=self.causal
        )
        return self.out_proj(out.transpose(-3, -2).flatten(-2))


class FeedForward(nn.Sequential):
    """f(x) = W_2 act(W_1 x + b_1) + b_2."""

    def __init__(self, d_model: int, width: int, activation: Activation = "relu", bias: bool = True) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(
                f"model.arch.activation: {activation!r} is not allowed; choose one of {', '.join(ACTIVATIONS)}"
            )
        super().__init__(
            nn.Linear(d_model, width, bias=bias), ACTIVATIONS[activation](), nn.Linear(width, d_model, bias=bias)
        )


class TransformerBlock(nn.Module):
    """One attention + feed-forward block; see the module docstring for the placement equations.

    A network builds each of its blocks from its config: ``TransformerBlock(**config.block_kwargs())``
    (:meth:`normbench.nn.config.ArchConfig.block_kwargs`).
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        ffn_width: int,
        placement: Placement = "pre",
        attn_norm: NormSpec | None = None,
        ffn_norm: NormSpec | None = None,
        activation: Activation = "relu",
        dropout: float = 0.0,
        qkv_bias: bool = False,
        out_bias: bool = True,
        causal: bool = False,
        qk_norm: bool = False,
        attn_out_norm: NormSpec | None = None,
        ffn_out_norm: NormSpec | None = None,
    ) -> None:
        super().__init__()
        check_placement(placement)
        self.placement = placement
        self.attn = Attention(d_model, n_heads, qkv_bias, out_bias, dropout, causal, qk_norm)
        self.ffn = FeedForward(d_model, ffn_width, activation)
        with_norms, with_out_norms = norm_exists("block", placement), norm_exists("output", placement)
        self.attn_norm = create_norm(d_model, attn_norm) if with_norms else nn.Identity()
        self.ffn_norm = create_norm(d_model, ffn_norm) if with_norms else nn.Identity()
        self.attn_out_norm = create_norm(d_model, attn_out_norm) if with_out_norms else nn.Identity()
        self.ffn_out_norm = create_norm(d_model, ffn_out_norm) if with_out_norms else nn.Identity()
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None) -> torch.Tensor:
        if self.placement == "post":
            x = self.attn_norm(x + self.drop(self.attn(x, key_padding_mask)))
            return self.ffn_norm(x + self.drop(self.ffn(x)))
        if self.placement == "peri":
            x = x + self.drop(self.attn_out_norm(self.attn(self.attn_norm(x), key_padding_mask)))
            return x + self.drop(self.ffn_out_norm(self.ffn(self.ffn_norm(x))))
        x = x + self.drop(self.attn(self.attn_norm(x), key_padding_mask))
        return x + self.drop(self.ffn(self.ffn_norm(x)))


def hook_points(model: nn.Module) -> dict[str, nn.Module]:
    """The model's named hook points, in forward order: ``embed_norm``, then per block ``L<i>``
    (the block), ``L<i>.attn_norm``, ``L<i>.attn``, ``L<i>.attn.keys`` (each head's keys, (B, H, T,
    d_head)), ``L<i>.attn_out_norm``, ``L<i>.ffn_norm``, ``L<i>.ffn``, ``L<i>.ffn_out_norm``, then ``final_norm``.

    Only modules that exist are named (a norm absent under the placement is not a hook point). A
    lone :class:`TransformerBlock` has the same points without the ``L<i>.`` prefix.
    """
    if isinstance(model, TransformerBlock):
        return block_points(model)
    points: dict[str, nn.Module] = {}
    if isinstance(getattr(model, "embed_norm", None), Norm):
        points["embed_norm"] = model.embed_norm
    for i, block in enumerate(getattr(model, "blocks", [])):
        points[f"L{i + 1}"] = block
        points.update({f"L{i + 1}.{name}": module for name, module in block_points(block).items()})
    if isinstance(getattr(model, "final_norm", None), Norm):
        points["final_norm"] = model.final_norm
    return points


def block_points(block: TransformerBlock) -> dict[str, nn.Module]:
    """The hook points inside one block, in forward order (see :func:`hook_points`)."""
    points: dict[str, nn.Module] = {}
    for part in ("attn_norm", "attn", "attn.keys", "attn_out_norm", "ffn_norm", "ffn", "ffn_out_norm"):
        module = block.get_submodule(part)
        if part == "attn.keys" or not isinstance(module, nn.Identity):
            points[part] = module
    return points
