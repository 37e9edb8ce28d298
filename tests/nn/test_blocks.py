"""The Transformer block: placement equations, attention, and key capture by hooks."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from normbench.analysis import capture_attention_inputs
from normbench.nn.blocks import Attention, TransformerBlock
from normbench.nn.norms import NormSpec


def block(placement: str, **kw) -> TransformerBlock:
    return TransformerBlock(
        8, 2, 16, placement, NormSpec("both", False, 1e-5), NormSpec("scale", True, 1e-5), **kw
    ).double()


@pytest.mark.parametrize("placement", ["pre", "post", "none"])
def test_placement_equations(placement: str) -> None:
    b = block(placement)
    x = torch.randn(3, 7, 8, dtype=torch.float64)
    if placement == "pre":
        h = x + b.attn(b.attn_norm(x))
        expected = h + b.ffn(b.ffn_norm(h))
    elif placement == "post":
        h = b.attn_norm(x + b.attn(x))
        expected = b.ffn_norm(h + b.ffn(h))
    else:
        h = x + b.attn(x)
        expected = h + b.ffn(h)
    torch.testing.assert_close(b(x), expected)


def test_placement_none_has_no_norm_parameters() -> None:
    with_norms = sum(p.numel() for p in block("pre").parameters())
    without = sum(p.numel() for p in block("none").parameters())
    assert with_norms - without == 16  # only the affine FFN norm had parameters


def test_attention_matches_explicit_softmax() -> None:
    attn = Attention(8, 2, qkv_bias=True).double()
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    q, k, v = (attn.split_heads(p(x)) for p in (attn.q_proj, attn.k_proj, attn.v_proj))
    weights = torch.softmax(q @ k.transpose(-1, -2) / 4**0.5, dim=-1)
    expected = attn.out_proj((weights @ v).transpose(1, 2).flatten(-2))
    torch.testing.assert_close(attn(x), expected)


def test_effective_queries_reproduce_the_scores() -> None:
    """s(q, k) = (q Q K^T / sqrt(d_head)) . k for every head (Brody et al. eq. 6)."""
    attn = Attention(8, 2).double()
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    q, k = attn.split_heads(attn.q_proj(x)), attn.split_heads(attn.k_proj(x))
    scores = q @ k.transpose(-1, -2) / 4**0.5
    eff = attn.effective_queries(x)  # (B, H, T, d)
    torch.testing.assert_close(eff @ x.transpose(-1, -2)[:, None], scores)


def test_causal_attention_ignores_the_future() -> None:
    attn = Attention(8, 2, causal=True)
    x = torch.randn(1, 6, 8)
    y = attn(x)
    x2 = x.clone()
    x2[:, 4:] = torch.randn(1, 2, 8)
    torch.testing.assert_close(attn(x2)[:, :4], y[:, :4])


def test_key_padding_mask_ignores_padded_keys() -> None:
    attn = Attention(8, 1)
    x = torch.randn(1, 5, 8)
    pad = torch.tensor([[False, False, False, True, True]])
    x2 = x.clone()
    x2[:, 3:] = 100.0
    torch.testing.assert_close(attn(x, pad)[:, :3], attn(x2, pad)[:, :3])
    torch.testing.assert_close(attn(x, pad)[:, :3], attn(x[:, :3]))


@pytest.mark.parametrize("placement", ["pre", "post", "none"])
def test_hooks_capture_the_attention_input(placement: str) -> None:
    b = block(placement)
    x = torch.randn(2, 4, 8, dtype=torch.float64)
    with capture_attention_inputs(b) as keys:
        b(x)
    expected = b.attn_norm(x) if placement == "pre" else x
    torch.testing.assert_close(keys["attn"], expected)
    with torch.no_grad():
        b(x)
    assert not b.attn._forward_pre_hooks  # hooks removed on exit


def test_bad_arguments_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="model.arch.d_model=8 is not divisible by model.arch.n_heads=3"):
        Attention(8, 3)
    with pytest.raises(ValueError, match="model.arch.placement: 'mid' is not allowed; choose one of pre, post, none"):
        TransformerBlock(8, 1, 8, "mid")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="model.arch.activation"):
        TransformerBlock(8, 1, 8, "pre", activation="tanh")  # type: ignore[arg-type]


def test_sdpa_is_used_for_attention(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = F.scaled_dot_product_attention

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(F, "scaled_dot_product_attention", spy)
    Attention(8, 1)(torch.randn(1, 3, 8))
    assert calls


def test_hook_points_name_what_exists_under_each_placement() -> None:
    from normbench.nn.blocks import hook_points
    from normbench.nn.gpt import GPTDecoder

    pre = hook_points(GPTDecoder(vocab_size=30, max_positions=8, n_layers=2))
    assert list(pre) == [
        "L1",
        "L1.attn_norm",
        "L1.attn",
        "L1.attn.keys",
        "L1.ffn_norm",
        "L1.ffn",
        "L2",
        "L2.attn_norm",
        "L2.attn",
        "L2.attn.keys",
        "L2.ffn_norm",
        "L2.ffn",
        "final_norm",
    ]
    post = hook_points(GPTDecoder(vocab_size=30, max_positions=8, n_layers=1, placement="post"))
    assert list(post) == ["L1", "L1.attn_norm", "L1.attn", "L1.attn.keys", "L1.ffn_norm", "L1.ffn"]  # no final norm
    none = hook_points(GPTDecoder(vocab_size=30, max_positions=8, n_layers=1, placement="none"))
    assert list(none) == ["L1", "L1.attn", "L1.attn.keys", "L1.ffn"]
    peri = hook_points(GPTDecoder(vocab_size=30, max_positions=8, n_layers=1, placement="peri"))
    assert list(peri) == [
        "L1",
        "L1.attn_norm",
        "L1.attn",
        "L1.attn.keys",
        "L1.attn_out_norm",
        "L1.ffn_norm",
        "L1.ffn",
        "L1.ffn_out_norm",
        "final_norm",
    ]
