"""The additive decomposition e = i + h + f + c (Mickus et al. 2022) on every normbench model."""

from __future__ import annotations

import copy
import itertools

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from normbench.analysis.decompose import TERMS, decompose, importance, importances, norm_map
from normbench.nn.bert import BertEncoder
from normbench.nn.blocks import PLACEMENTS, Attention
from normbench.nn.gpt import GPTDecoder
from normbench.nn.majority import MajorityEncoder
from normbench.nn.norms import COMPONENTS, Norm, NormSpec, NotShiftAndScale, get_component


def perturbed(model: nn.Module, seed: int) -> nn.Module:
    """Non-trivial biases, gains and learned normals (a fresh model has zero biases and unit gains)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.add_(0.1 * torch.randn(p.shape, generator=g))
            elif "norm" in name:  # gains and learned normals
                p.add_(0.3 * torch.randn(p.shape, generator=g))
    return model


def build(kind: str, placement: str, component: str) -> tuple[nn.Module, tuple]:
    spec = NormSpec(component, affine=True, eps=1e-5)
    g = torch.Generator().manual_seed(1)
    if kind == "gpt":
        model = GPTDecoder(
            vocab_size=60,
            max_positions=16,
            d_model=8,
            n_heads=2,
            n_layers=3,
            placement=placement,
            attn_norm=spec,
            ffn_norm=spec,
            final_norm=spec,
            dropout=0.1,
        )
        return model, (torch.randint(0, 60, (3, 12), generator=g),)
    if kind == "bert":
        model = BertEncoder(
            vocab_size=60,
            max_positions=16,
            d_model=8,
            n_heads=2,
            n_layers=2,
            ffn_width=32,
            placement=placement,
            embed_norm=spec,
            attn_norm=spec,
            ffn_norm=spec,
        )
        padding = torch.arange(12)[None] >= torch.tensor([[12], [7], [3]])
        return model, (torch.randint(0, 60, (3, 12), generator=g), padding)
    model = MajorityEncoder(placement=placement, attn_norm=NormSpec(component, affine=False, eps=0.0), ffn_norm=spec)
    return model, (torch.randint(0, 20, (3, 12), generator=g),)


SHIFT_AND_SCALE = [c for c in COMPONENTS if get_component(c).shift_and_scale is not None]
CASES = list(itertools.product(["gpt", "bert", "majority"], PLACEMENTS, SHIFT_AND_SCALE))


@pytest.mark.parametrize(("kind", "placement", "component"), CASES)
def test_terms_sum_to_every_hidden_state(kind: str, placement: str, component: str) -> None:
    torch.manual_seed(0)
    model, inputs = build(kind, placement, component)
    perturbed(model, seed=2)
    dec32 = decompose(model, *inputs)
    expected = ["embed", *(f"L{i + 1}" for i in range(len(model.blocks)))]
    if kind == "gpt" and placement in ("pre", "peri"):
        expected.append("final")
    assert dec32.layers == expected
    assert dec32.max_error() < 1e-5
    dec64 = decompose(model.double(), *inputs)
    assert dec64.max_error() < 1e-7  # Mickus et al.: "equal up to 1e-7"
    # the hidden states are the model's own: the last one gives the model's output
    for layer in dec64.layers:
        shares = importances(dec64)[layer]
        assert sum(shares.values()) == pytest.approx(1.0, abs=1e-12)


def test_pre_norm_residual_keeps_the_input_term_and_biases_in_c() -> None:
    """Under pre-norm no norm sits on the residual stream: i stays x_0, c collects only sublayer biases."""
    model, (tokens,) = build("gpt", "pre", "both")
    perturbed(model, seed=3).double()
    dec = decompose(model, tokens)
    x0 = dec.hidden["embed"]
    for layer in ("L1", "L2", "L3"):
        assert torch.equal(dec.terms[layer][0], x0)
    biases = sum(
        (b.attn.v_proj.bias @ b.attn.out_proj.weight.T + b.attn.out_proj.bias + b.ffn[-1].bias) for b in model.blocks
    )
    assert torch.allclose(dec.terms["L3"][3], biases.expand_as(x0), atol=1e-12)


def bias_free(sublayer: nn.Module) -> nn.Module:
    """A copy of an attention or feed-forward sublayer without the biases that reach its output."""
    sublayer = copy.deepcopy(sublayer)
    linears = [sublayer.v_proj, sublayer.out_proj] if isinstance(sublayer, Attention) else [sublayer[-1]]
    with torch.no_grad():
        for linear in linears:
            if linear.bias is not None:
                linear.bias.zero_()
    return sublayer


@pytest.mark.parametrize(
    ("kind", "component"), list(itertools.product(["gpt", "bert", "majority"], ["both", "learned"]))
)
def test_attention_and_ffn_terms_equal_bias_free_sublayers_under_pre_norm(kind: str, component: str) -> None:
    """Independent of the bookkeeping: under pre-norm h (f) is the sum over layers of each attention
    (feed-forward) output recomputed by a copy of it whose output-side biases are zero."""
    model, inputs = build(kind, "pre", component)
    perturbed(model, seed=5).double().eval()
    calls: list[tuple[nn.Module, tuple, dict]] = []
    hooks = [
        m.register_forward_hook(lambda mod, args, kwargs, out: calls.append((mod, args, kwargs)), with_kwargs=True)
        for block in model.blocks
        for m in (block.attn, block.ffn)
    ]
    dec = decompose(model, *inputs)
    for hook in hooks:
        hook.remove()
    with torch.no_grad():
        h = sum(bias_free(m)(*a, **kw) for m, a, kw in calls if isinstance(m, Attention))
        f = sum(bias_free(m)(*a, **kw) for m, a, kw in calls if not isinstance(m, Attention))
    last = f"L{len(model.blocks)}"
    assert len(calls) == 2 * len(model.blocks)
    torch.testing.assert_close(dec.terms[last][1], h, atol=1e-12, rtol=0)
    torch.testing.assert_close(dec.terms[last][2], f, atol=1e-12, rtol=0)


@pytest.mark.parametrize("component", ["scale", "both"])
def test_without_biases_c_is_exactly_the_norm_shifts(component: str) -> None:
    """Post-norm, no biases, no affine: c is zero under RMSNorm (no shift) and not under LayerNorm (mean shift)."""
    model = MajorityEncoder(
        placement="post",
        attn_norm=NormSpec(component, affine=False, eps=0.0),
        ffn_norm=NormSpec(component, affine=False, eps=0.0),
    )
    for block in model.blocks:
        for linear in (block.attn.out_proj, block.ffn[0], block.ffn[-1]):
            nn.init.zeros_(linear.bias)
    dec = decompose(model.double(), torch.randint(0, 20, (2, 9)))
    c = dec.terms["L1"][3].abs().max()
    assert dec.max_error() < 1e-10
    assert (c == 0) if component == "scale" else (c > 1e-3)


def test_post_norm_scales_every_term_by_the_norms_diagonal_map() -> None:
    model, (tokens,) = build("majority", "post", "scale")
    perturbed(model, seed=4).double()
    dec = decompose(model, tokens)
    block = model.blocks[0]
    # i after one block = x_0 * D_attn * D_ffn, D = gain * s(x) (Mickus eq. 2)
    with torch.no_grad():
        x0 = model.embedding(tokens)
        mid = block.attn_norm(x0 + block.attn(x0))
        d_attn, _ = norm_map(block.attn_norm, x0 + block.attn(x0))
        d_ffn, _ = norm_map(block.ffn_norm, mid + block.ffn(mid))
    assert torch.allclose(dec.terms["L1"][0], x0 * d_attn * d_ffn, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(SHIFT_AND_SCALE), st.booleans(), st.integers(2, 12), st.integers(0, 2**16))
def test_norm_is_a_diagonal_map_plus_offset(component: str, affine: bool, d: int, seed: int) -> None:
    """N(x) = D x + o with D = g s(x) (diagonal) and o = b - g s(x) m(x), for every component."""
    g = torch.Generator().manual_seed(seed)
    norm = Norm(d, NormSpec(component, affine=affine, eps=1e-5)).double()
    with torch.no_grad():
        for p in norm.parameters():
            p.copy_(torch.randn(p.shape, generator=g, dtype=torch.float64))
    x = torch.randn(4, 5, d, generator=g, dtype=torch.float64) * 3
    diag, offset = norm_map(norm, x)
    assert torch.allclose(diag * x + offset, norm(x), atol=1e-10)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 16), st.integers(0, 2**16))
def test_importances_of_a_sum_add_up_to_one(d: int, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    terms = torch.randn(len(TERMS), 7, d, generator=g, dtype=torch.float64)
    e = terms.sum(0)
    total = sum(importance(e, t) for t in terms)
    assert torch.allclose(total, torch.ones(7, dtype=torch.float64), atol=1e-9)


def test_decompose_restores_training_mode_and_leaves_no_hooks() -> None:
    model, inputs = build("bert", "post", "both")
    model.train()
    decompose(model, *inputs)
    assert model.training
    assert all(not m._forward_hooks and not m._forward_pre_hooks for m in model.modules())


@pytest.mark.parametrize("placement", ["pre", "post", "peri"])
def test_a_norm_without_shift_and_scale_form_is_refused_in_one_line(placement: str) -> None:
    model = GPTDecoder(
        vocab_size=20, max_positions=8, n_layers=1, placement=placement, ffn_norm=NormSpec("dyt", affine=True)
    )
    with pytest.raises(NotShiftAndScale, match=r"^decompose: L1.ffn_norm \(dyt\) is not of the shift-and-scale form"):
        decompose(model, torch.randint(0, 20, (1, 5)))
