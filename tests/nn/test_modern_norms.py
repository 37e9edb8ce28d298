"""QK-norm and peri placement against their definitions (modern-norms-facts.md), and GPT's initialisation keeping a
norm's own scalars."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from normbench.nn.blocks import Attention, TransformerBlock
from normbench.nn.gpt import GPTConfig
from normbench.nn.norms import Norm, NormSpec


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
