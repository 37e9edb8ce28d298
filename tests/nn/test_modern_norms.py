"""DyT, ScaleNorm, QK-norm and peri placement against their definitions (modern-norms-facts.md)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.nn.blocks import Attention, TransformerBlock
from normbench.nn.gpt import GPTConfig
from normbench.nn.norms import Norm, NormSpec

shapes = st.tuples(st.integers(1, 3), st.integers(1, 5), st.integers(2, 48))
seeds = st.integers(0, 2**31 - 1)


def sample(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64) * torch.exp(
        torch.randn((), generator=g, dtype=torch.float64) * 2
    )


@settings(max_examples=60, deadline=None)
@given(shapes, seeds, st.floats(-3, 3), st.booleans())
def test_dyt_is_gamma_tanh_alpha_x_plus_beta(shape: tuple[int, ...], seed: int, alpha: float, affine: bool) -> None:
    x, d = sample(shape, seed), shape[-1]
    norm = Norm(d, NormSpec("dyt", affine=affine, options={"alpha": alpha})).double()
    assert norm.alpha.item() == pytest.approx(alpha)
    expected = torch.tanh(alpha * x)
    if affine:
        with torch.no_grad():
            norm.weight.normal_()
            norm.bias.normal_()
        expected = norm.weight * expected + norm.bias
    torch.testing.assert_close(norm(x), expected)


@settings(max_examples=60, deadline=None)
@given(shapes, seeds, st.floats(0.1, 10))
def test_scalenorm_is_g_x_over_its_norm(shape: tuple[int, ...], seed: int, g: float) -> None:
    x, d = sample(shape, seed), shape[-1]
    default = Norm(d, NormSpec("scalenorm", affine=False, eps=0.0)).double()
    assert default.g.item() == pytest.approx(math.sqrt(d))  # initialised to sqrt(d)
    norm = Norm(d, NormSpec("scalenorm", affine=False, eps=0.0, options={"g": g})).double()
    out = norm(x)
    torch.testing.assert_close(out, g * x / torch.linalg.vector_norm(x, dim=-1, keepdim=True))
    torch.testing.assert_close(torch.linalg.vector_norm(out, dim=-1), torch.full(shape[:-1], g, dtype=x.dtype))


def test_dyt_alpha_defaults_to_one_half_and_the_default_is_not_part_of_the_identity() -> None:
    assert Norm(8, NormSpec("dyt")).alpha.item() == 0.5
    assert NormSpec("dyt", options={"alpha": 0.5}).canonical() == NormSpec("dyt").canonical()
    assert NormSpec("dyt", options={"alpha": 1.0}).canonical().as_dict()["options"] == {"alpha": 1.0}
    assert "options" not in NormSpec("both").canonical().as_dict()  # specs without options keep their identity


@pytest.mark.parametrize(("component", "parameter"), [("dyt", "alpha"), ("scalenorm", "g")])
def test_gradients_reach_the_learned_scalar(component: str, parameter: str) -> None:
    norm = Norm(8, NormSpec(component, affine=True))
    norm(torch.randn(4, 8)).pow(2).sum().backward()
    grad = getattr(norm, parameter).grad
    assert grad is not None and grad.shape == () and grad.item() != 0.0


def test_gpt_initialisation_keeps_the_norms_own_scalars() -> None:
    from normbench.nn.gpt import GPTDecoder

    spec = NormSpec("dyt", options={"alpha": 0.8})
    model = GPTDecoder(
        GPTConfig(
            vocab_size=30,
            max_positions=8,
            n_layers=1,
            ffn_norm=spec,
            final_norm=NormSpec("scalenorm", affine=False),
            qk_norm=True,
        )
    )
    assert model.blocks[0].ffn_norm.alpha.item() == pytest.approx(0.8)
    assert model.final_norm.g.item() == pytest.approx(math.sqrt(8))
    assert torch.equal(model.blocks[0].attn.qk_norm_scale, torch.ones(4, 1, 1))


def test_options_are_canonical_numbers() -> None:
    assert NormSpec("dyt", options={"alpha": 1}).canonical() == NormSpec("dyt", options={"alpha": 1.0}).canonical()
    assert NormSpec("scalenorm", options={"g": None}).canonical() == NormSpec("scalenorm").canonical()
    plugin = NormSpec("pnorm_example:PNorm", options={"p": [1, 2]})
    assert isinstance(hash(plugin), int)  # unhashable option values still hash


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (NormSpec("scalenorm", options={"g": 0.0}), r"^model.arch.attn_norm.options.g: must be > 0, got 0.0$"),
        (
            NormSpec("dyt", options={"beta": 1.0}),
            r"^model.arch.attn_norm.options: 'beta' not allowed for component dyt; allowed: alpha$",
        ),
        (
            NormSpec("dyt", options={"alpha": "big"}),
            r"^model.arch.attn_norm.options.alpha: must be a finite number, got 'big'$",
        ),
        (
            NormSpec("both", options={"alpha": 1.0}),
            r"^model.arch.attn_norm.options: 'alpha' not allowed for component both; allowed: none$",
        ),
    ],
)
def test_bad_options_are_one_line_errors_naming_the_field(spec: NormSpec, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GPTConfig(attn_norm=spec)


def reference_attention(attn: Attention, x: torch.Tensor) -> torch.Tensor:
    """Multi-head attention as normbench computed it before QK-norm existed."""
    q, k, v = (attn.split_heads(p(x)) for p in (attn.q_proj, attn.k_proj, attn.v_proj))
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0, is_causal=attn.causal)
    return attn.out_proj(out.transpose(-3, -2).flatten(-2))


@pytest.mark.parametrize("causal", [False, True])
def test_qk_norm_off_is_the_same_attention_bit_for_bit(causal: bool) -> None:
    torch.manual_seed(0)
    off = Attention(8, 2, qkv_bias=True, causal=causal)
    torch.manual_seed(0)
    on = Attention(8, 2, qkv_bias=True, causal=causal, qk_norm=True)
    x = torch.randn(3, 6, 8)
    assert torch.equal(off(x), reference_attention(off, x))
    # same parameters drawn in the same order; QK-norm only adds its temperatures (drawn from no RNG)
    assert set(on.state_dict()) - set(off.state_dict()) == {"qk_norm_scale"}
    assert all(torch.equal(p, on.state_dict()[name]) for name, p in off.state_dict().items())


def test_qk_norm_normalizes_each_heads_queries_and_keys() -> None:
    torch.manual_seed(1)
    attn = Attention(8, 2, qk_norm=True).double()
    with torch.no_grad():
        attn.qk_norm_scale.copy_(torch.tensor([0.5, 3.0]).view(2, 1, 1))
    x = torch.randn(2, 5, 8, dtype=torch.float64) * 10
    q = attn.split_heads(attn.q_proj(x))
    k = attn.split_heads(attn.k_proj(x))
    qn = q / q.pow(2).mean(-1, keepdim=True).sqrt() * attn.qk_norm_scale
    kn = k / k.pow(2).mean(-1, keepdim=True).sqrt()
    weights = torch.softmax(qn @ kn.transpose(-1, -2) / math.sqrt(attn.d_head), dim=-1)
    expected = attn.out_proj((weights @ attn.split_heads(attn.v_proj(x))).transpose(-3, -2).flatten(-2))
    torch.testing.assert_close(attn(x), expected)
    keys = attn.head_keys(x)
    torch.testing.assert_close(keys.pow(2).mean(-1), torch.ones(2, 2, 5, dtype=torch.float64))
    attn(x).sum().backward()
    assert attn.qk_norm_scale.grad is not None and attn.qk_norm_scale.grad.abs().sum() > 0


def test_peri_block_equations() -> None:
    spec, out = NormSpec("both", False, 1e-5), NormSpec("scale", True, 1e-5)
    b = TransformerBlock(8, 2, 16, "peri", spec, spec, attn_out_norm=out, ffn_out_norm=NormSpec("dyt")).double()
    assert isinstance(b.attn_out_norm, Norm) and b.attn_out_norm.spec == out and b.ffn_out_norm.spec.component == "dyt"
    x = torch.randn(3, 7, 8, dtype=torch.float64)
    h = x + b.attn_out_norm(b.attn(b.attn_norm(x)))
    torch.testing.assert_close(b(x), h + b.ffn_out_norm(b.ffn(b.ffn_norm(h))))
    for placement in ("pre", "post", "none"):  # the output norms exist only under peri
        other = TransformerBlock(8, 2, 16, placement, spec, spec, attn_out_norm=out, ffn_out_norm=out)
        assert not any(isinstance(m, Norm) for m in (other.attn_out_norm, other.ffn_out_norm))


def test_peri_output_norms_are_configured_and_reported() -> None:
    from normbench.training.run.rundir import run_label

    arch = GPTConfig(vocab_size=30, max_positions=8, placement="peri", attn_out_norm=NormSpec("scale", False, 1e-6))
    effective = arch.effective()
    assert effective["attn_out_norm"] == {"component": "scale", "affine": False, "eps": 1e-6}
    assert "final_norm" in arch.norms()  # peri keeps pre-norm's final norm
    assert run_label(effective).startswith("peri-attn_both+affine-attn_out_scale-")
    # under the other placements the output norms are not part of the network's identity at all
    assert "attn_out_norm" not in GPTConfig(vocab_size=30, max_positions=8).effective()
