"""Additive decomposition of hidden states, e = i + h + f + c (Mickus et al. 2022, eqs. 1-5, App. A).

Every hidden state of the residual stream is the sum of four terms:

* i: the input embedding x_0 (tokens + positions + segments), mapped through every norm it
  passed (eq. 2);
* h: the attention outputs without their bias, sum_t' alpha_tt' x_t' W_V W_O (eq. 4);
* f: the feed-forward outputs without their output bias (eq. 3);
* c: the biases (b_V W_O + b_O, the FFN output bias, the norms' bias) and the norms' shifts (eq. 5).

A norm is N(x) = g * s(x) (x - m(x)) + b (:meth:`normbench.nn.norms.Norm.shift_and_scale`): every
term is multiplied by the diagonal map g * s(x), and c also receives b - g * s(x) m(x). Where no
norm follows a sublayer (pre-norm's residual stream, ``none`` placement) the map is the identity,
so the same bookkeeping covers every placement; ``peri``'s output norm maps only its sublayer's
terms (its output and bias) before they join the residual stream. A norm not of that form
(``dyt``, plug-ins) has no such terms: :func:`decompose` refuses it in one line
(:class:`normbench.nn.norms.NotShiftAndScale`). Because attention weights sum to one, a sublayer
output minus its bias *is* its unbiased term, so the decomposition reads the real activations
through forward hooks instead of recomputing the forward pass.

The importance of a term t in e is mu(e, t) = e^T t / ||e||^2 (Mickus eq. 6); the four sum to 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from normbench.analysis.hooks import Capture
from normbench.nn.blocks import TransformerBlock, hook_points
from normbench.nn.norms import Norm, NotShiftAndScale

TERMS: tuple[str, ...] = ("i", "h", "f", "c")


@dataclass
class Decomposition:
    """Per layer of the residual stream, its four terms and the hidden state the model computed.

    Attributes:
        layers: ``embed`` (the first block's input), ``L1`` ... ``Ln`` (block outputs) and
            ``final`` (after the final norm) where the model has one.
        terms: layer name -> (4, B, T, d) tensor of i, h, f, c.
        hidden: layer name -> (B, T, d) hidden state read from the model.
    """

    layers: list[str]
    terms: dict[str, torch.Tensor]
    hidden: dict[str, torch.Tensor]

    def max_error(self) -> float:
        """max |i + h + f + c - e| over layers, tokens and features."""
        return max(float((self.terms[k].sum(0) - self.hidden[k]).abs().max()) for k in self.layers)


def importance(e: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """mu(e, t) = e^T t / ||e||^2 over the last dimension."""
    return (e * t).sum(-1) / (e * e).sum(-1)


def norm_map(norm: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(diagonal map D, offset o) with norm(x) = D * x + o: D = g s(x), o = b - g s(x) m(x)."""
    if not isinstance(norm, Norm):
        return torch.ones_like(x[..., :1]), torch.zeros_like(x)
    shift, scale = norm.shift_and_scale(x)
    diag = scale * norm.weight if norm.weight is not None else scale
    offset = -diag * shift + (norm.bias if norm.bias is not None else 0.0)
    return diag, offset


def attention_bias(block: TransformerBlock) -> torch.Tensor | float:
    """The constant part of the attention output, b_V W_O^T + b_O (attention weights sum to 1)."""
    attn, bias = block.attn, 0.0
    if attn.v_proj.bias is not None:
        bias = attn.v_proj.bias @ attn.out_proj.weight.T
    if attn.out_proj.bias is not None:
        bias = bias + attn.out_proj.bias
    return bias


def ffn_bias(block: TransformerBlock) -> torch.Tensor | float:
    """The FFN output bias b^(FF,O) (the inner bias stays inside the non-linearity, in f)."""
    out = block.ffn[-1]
    return out.bias if out.bias is not None else 0.0


@torch.no_grad()
def decompose(model: nn.Module, *inputs: Any, **kwargs: Any) -> Decomposition:
    """Run ``model(*inputs, **kwargs)`` once (eval mode, no grad) and decompose its residual stream.

    ``model`` has ``blocks`` (TransformerBlocks) and optionally ``embed_norm`` (applied to x_0
    before the first block, BERT) and ``final_norm`` (after the last block, GPT-2). For the
    paper's 1e-7 agreement run the model in float64 (``model.double()``).
    """
    blocks = list(model.blocks)
    for block in blocks:
        for norm in (block.attn_norm, block.ffn_norm, block.attn_out_norm, block.ffn_out_norm):
            if not isinstance(norm, (Norm, nn.Identity)):
                raise TypeError(f"decompose: {type(norm).__name__} is not a normbench Norm; its map is unknown")
    embed_norm = getattr(model, "embed_norm", None)
    final_norm = getattr(model, "final_norm", None)
    points = hook_points(model)
    for name, module in points.items():
        if isinstance(module, Norm) and module.component.shift_and_scale is None:
            raise NotShiftAndScale(
                f"decompose: {name} ({module.component.name}) is not of the shift-and-scale form "
                f"N(x) = s(x) (x - m(x)); the decomposition e = i + h + f + c does not apply"
            )
    name_of = {id(module): name for name, module in points.items()}
    was_training = model.training
    model.eval()
    try:
        with Capture(points, inputs=True, outputs=True) as captured:
            model(*inputs, **kwargs)
    finally:
        model.train(was_training)

    def seen(module: nn.Module, kind: str) -> torch.Tensor:
        slot = captured[name_of[id(module)]]
        return slot["input"] if kind == "in" else slot["output"]

    def through_norm(terms: torch.Tensor, norm: nn.Module) -> torch.Tensor:
        if not isinstance(norm, Norm):
            return terms
        diag, offset = norm_map(norm, seen(norm, "in"))
        terms = terms * diag
        terms[3] = terms[3] + offset
        return terms

    def add_sublayer(
        terms: torch.Tensor, index: int, output: torch.Tensor, bias: torch.Tensor | float, out_norm: nn.Module
    ) -> torch.Tensor:
        """terms + the sublayer's (output - bias) in ``index`` and its bias in c, mapped by its output norm (peri)."""
        own = torch.zeros_like(terms)
        own[index] = output - bias
        own[3] = own[3] + bias
        return terms + through_norm(own, out_norm)

    layers: list[str] = []
    out_terms: dict[str, torch.Tensor] = {}
    hidden: dict[str, torch.Tensor] = {}
    if isinstance(embed_norm, Norm):
        x0 = seen(embed_norm, "in")
        terms = through_norm(torch.stack([x0, *(torch.zeros_like(x0),) * 3]), embed_norm)
    else:
        x0 = seen(blocks[0], "in")
        terms = torch.stack([x0, *(torch.zeros_like(x0),) * 3])
    layers.append("embed")
    out_terms["embed"], hidden["embed"] = terms, seen(blocks[0], "in")
    for n, block in enumerate(blocks, start=1):
        attn_out, ffn_out = seen(block.attn, "out"), seen(block.ffn, "out")
        terms = add_sublayer(terms, 1, attn_out, attention_bias(block), block.attn_out_norm)
        if block.placement == "post":
            terms = through_norm(terms, block.attn_norm)
        terms = add_sublayer(terms, 2, ffn_out, ffn_bias(block), block.ffn_out_norm)
        if block.placement == "post":
            terms = through_norm(terms, block.ffn_norm)
        name = f"L{n}"
        layers.append(name)
        out_terms[name], hidden[name] = terms, seen(block, "out")
    if isinstance(final_norm, Norm):
        terms = through_norm(terms.clone(), final_norm)
        layers.append("final")
        out_terms["final"], hidden["final"] = terms, seen(final_norm, "out")
    return Decomposition(layers, out_terms, hidden)


def importances(dec: Decomposition, valid: torch.Tensor | None = None) -> dict[str, dict[str, float]]:
    """Per layer, the mean over (valid) tokens of mu(e, t) for t in i, h, f, c."""
    out = {}
    for layer in dec.layers:
        e, terms = dec.hidden[layer], dec.terms[layer]
        keep = torch.ones(e.shape[:-1], dtype=torch.bool, device=e.device) if valid is None else valid
        out[layer] = {t: float(importance(e, terms[k])[keep].mean()) for k, t in enumerate(TERMS)}
    return out
