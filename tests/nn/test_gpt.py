"""GPT-2-style decoder: the paper's parameter count, equality with HF GPT-2, causality."""

from __future__ import annotations

import math

import pytest
import torch

from normbench.analysis.model_keys import unselectable_per_layer
from normbench.nn.gpt import GPTDecoder
from normbench.nn.norms import NormSpec


def n_params(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def test_parameter_count_of_the_paper_config() -> None:
    # vocab 50257 x 8 + 1024 x 8 positions + 4 x 872 per block + 16 final norm = 413,752 ("414K")
    assert n_params(GPTDecoder()) == 413_752
    # "w/o scaling": the attention norm is projection only, without its 16 affine parameters
    assert n_params(GPTDecoder(attn_norm=NormSpec("project", affine=False))) == 413_752 - 4 * 16


def test_logits_equal_huggingface_gpt2_with_the_same_weights() -> None:
    transformers = pytest.importorskip("transformers")
    cfg = transformers.GPT2Config(
        vocab_size=101, n_positions=32, n_embd=8, n_layer=2, n_head=4, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0
    )
    hf = transformers.GPT2LMHeadModel(cfg).eval()
    ours = GPTDecoder(vocab_size=101, max_positions=32, d_model=8, n_heads=4, n_layers=2, dropout=0.0).eval()
    assert n_params(ours) == n_params(hf)
    with torch.no_grad():
        ours.token_embedding.weight.copy_(hf.transformer.wte.weight)
        ours.position_embedding.weight.copy_(hf.transformer.wpe.weight)
        for block, h in zip(ours.blocks, hf.transformer.h, strict=False):
            w, b = h.attn.c_attn.weight.T.chunk(3, dim=0), h.attn.c_attn.bias.chunk(3)  # Conv1D: (in, out)
            for proj, wi, bi in zip((block.attn.q_proj, block.attn.k_proj, block.attn.v_proj), w, b, strict=False):
                proj.weight.copy_(wi), proj.bias.copy_(bi)
            block.attn.out_proj.weight.copy_(h.attn.c_proj.weight.T), block.attn.out_proj.bias.copy_(h.attn.c_proj.bias)
            block.ffn[0].weight.copy_(h.mlp.c_fc.weight.T), block.ffn[0].bias.copy_(h.mlp.c_fc.bias)
            block.ffn[2].weight.copy_(h.mlp.c_proj.weight.T), block.ffn[2].bias.copy_(h.mlp.c_proj.bias)
            for norm, ln in ((block.attn_norm, h.ln_1), (block.ffn_norm, h.ln_2)):
                norm.weight.copy_(ln.weight + torch.randn(8) * 0.1), norm.bias.copy_(ln.bias + 0.1)
                ln.weight.copy_(norm.weight), ln.bias.copy_(norm.bias)
        ours.final_norm.weight.copy_(hf.transformer.ln_f.weight)
        ours.final_norm.bias.copy_(hf.transformer.ln_f.bias)
        tokens = torch.randint(0, 101, (3, 20))
        torch.testing.assert_close(ours(tokens), hf(tokens).logits, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("component", ["both", "project", "none"])
def test_attention_is_causal(component: str) -> None:
    model = GPTDecoder(vocab_size=50, max_positions=16, attn_norm=NormSpec(component), dropout=0.0).eval()
    tokens = torch.randint(0, 50, (2, 12))
    changed = tokens.clone()
    changed[:, 7] = (changed[:, 7] + 1) % 50
    with torch.no_grad():
        a, b = model(tokens), model(changed)
    torch.testing.assert_close(a[:, :7], b[:, :7], rtol=0, atol=0)  # the past never sees the future
    assert not torch.allclose(a[:, 7:], b[:, 7:])


def test_too_long_input_names_the_field() -> None:
    with pytest.raises(ValueError, match="model.arch.max_positions"):
        GPTDecoder(vocab_size=10, max_positions=4)(torch.zeros(1, 5, dtype=torch.long))


def test_layer_norm_keys_are_all_selectable_and_projection_only_ones_need_not_be() -> None:
    """Tables 1-2 in miniature: eps = 0 LayerNorm puts every key on a sphere (selectable)."""
    torch.manual_seed(0)
    tokens = torch.randint(0, 64, (4, 48))
    with_scaling = GPTDecoder(
        vocab_size=64, max_positions=48, attn_norm=NormSpec("both", affine=True, eps=0.0), dropout=0.0
    )
    for layer in unselectable_per_layer(with_scaling, tokens):
        assert layer["fraction_after"] == 0.0
    without = GPTDecoder(vocab_size=64, max_positions=48, attn_norm=NormSpec("project", affine=False), dropout=0.0)
    fractions = [layer["fraction_after"] for layer in unselectable_per_layer(without, tokens)]
    assert len(fractions) == 4 and max(fractions) > 0.0


def test_the_papers_frozen_qkv_bias_is_no_qkv_bias() -> None:
    """The authors froze c_attn's bias at its initial 0: the same network as one without it."""
    from normbench.nn.gpt import GPTConfig

    with_bias = GPTDecoder(GPTConfig(vocab_size=50, max_positions=8))
    without = GPTDecoder(GPTConfig(vocab_size=50, max_positions=8, qkv_bias=False))
    n = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert n(with_bias) - n(without) == 3 * 8 * 4  # q, k, v biases of width 8 in 4 layers
    assert all(
        b.attn.q_proj.bias is None and b.attn.k_proj.bias is None and b.attn.v_proj.bias is None for b in without.blocks
    )
    assert with_bias.blocks[0].attn.q_proj.bias is not None


def test_each_norm_position_takes_its_own_dyt_alpha() -> None:
    """Zhu et al. (2025) tune alpha0 per position: attention norms, the other block norms, the final norm."""
    from normbench.nn.gpt import GPTConfig

    def dyt(alpha: float) -> NormSpec:
        return NormSpec("dyt", affine=True, options={"alpha": alpha})

    config = GPTConfig(
        vocab_size=30,
        max_positions=8,
        n_layers=2,
        placement="peri",
        attn_norm=dyt(2.0),
        ffn_norm=dyt(0.3),
        final_norm=dyt(5.0),
        attn_out_norm=dyt(0.7),
        ffn_out_norm=dyt(0.9),
    )
    model = GPTDecoder(config)
    for block in model.blocks:
        got = [getattr(block, n).alpha.item() for n in ("attn_norm", "ffn_norm", "attn_out_norm", "ffn_out_norm")]
        assert got == pytest.approx([2.0, 0.3, 0.7, 0.9])
    assert model.final_norm.alpha.item() == pytest.approx(5.0)
    norms = config.effective()
    assert [norms[n]["options"] for n in ("attn_norm", "ffn_norm", "final_norm")] == [
        {"alpha": 2.0},
        {"alpha": 0.3},
        {"alpha": 5.0},
    ]


def test_the_embedding_scale_is_off_by_default_and_out_of_the_identity() -> None:
    from normbench.nn.gpt import GPTConfig

    plain = GPTConfig().effective()
    assert "embedding_scale" not in plain and "learn_embedding_scale" not in plain
    assert GPTConfig(embedding_scale=1.0).effective() == plain  # s = 1 is GPT-2's input
    # sqrt_d and its value at this width build one network: one identity
    sqrt_d = GPTConfig(d_model=16, embedding_scale="sqrt_d").effective()
    assert sqrt_d == GPTConfig(d_model=16, embedding_scale=4.0).effective()
    assert GPTConfig(d_model=16, embedding_scale="sqrt_d").effective()["embedding_scale"] == 4.0
    learned = GPTConfig(embedding_scale="sqrt_d", learn_embedding_scale=True).effective()
    assert learned["learn_embedding_scale"] is True and learned["embedding_scale"] == pytest.approx(math.sqrt(8))
    assert GPTConfig(learn_embedding_scale=True).effective()["embedding_scale"] == 1.0  # learned from 1: not GPT-2


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"embedding_scale": "sqrt"}, "model.arch.embedding_scale: must be none, sqrt_d or a positive number"),
        ({"embedding_scale": 0.0}, "model.arch.embedding_scale: must be none, sqrt_d or a positive number"),
        ({"embedding_scale": float("inf")}, "model.arch.embedding_scale"),
        ({"learn_embedding_scale": "yes"}, "model.arch.learn_embedding_scale: must be true or false"),
    ],
)
def test_bad_embedding_scales_are_one_line_errors(changes: dict, message: str) -> None:
    from normbench.nn.gpt import GPTConfig

    with pytest.raises(ValueError, match=message):
        GPTConfig(**changes)


@pytest.mark.parametrize("learned", [False, True])
def test_the_block_input_is_s_times_the_token_embedding_plus_the_position(learned: bool) -> None:
    """h_0 = s E[x_t] + P[t] with s = sqrt(d); the tied head still reads E unscaled."""
    from normbench.nn.gpt import GPTConfig
    from normbench.tasks.base import undecayed_parameters

    torch.manual_seed(0)
    config = GPTConfig(
        vocab_size=40,
        max_positions=12,
        d_model=16,
        n_heads=4,
        n_layers=1,
        dropout=0.0,
        embedding_scale="sqrt_d",
        learn_embedding_scale=learned,
    )
    model = GPTDecoder(config).eval()
    plain = GPTDecoder(config, embedding_scale="none", learn_embedding_scale=False).eval()
    plain.load_state_dict({k: v for k, v in model.state_dict().items() if k != "embedding_scale"})
    tokens = torch.randint(0, 40, (2, 12))
    seen = {}
    model.blocks[0].register_forward_pre_hook(lambda m, args: seen.setdefault("h0", args[0]))
    logits = model(tokens)
    expected = 4.0 * model.token_embedding(tokens) + model.position_embedding(torch.arange(12))
    torch.testing.assert_close(seen["h0"], expected)
    assert not torch.allclose(logits, plain(tokens))  # the scale changes the network
    assert n_params(model) - n_params(plain) == int(learned)
    if learned:
        assert model.embedding_scale.item() == pytest.approx(4.0)  # kept by the GPT-2 initialisation
        logits.pow(2).mean().backward()
        assert model.embedding_scale.grad is not None and model.embedding_scale.grad.item() != 0.0
        assert any(p is model.embedding_scale for p in undecayed_parameters(model))
    else:
        assert model.embedding_scale == pytest.approx(4.0) and not any(
            p is model.embedding_scale for p in undecayed_parameters(model)
        )
