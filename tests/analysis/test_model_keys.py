"""Keys read from a model's blocks and the unselectable fraction among the first n keys of each sequence."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.analysis.model_keys import attention_keys, float64_forward, prefix_unselectable, unselectable_per_layer
from normbench.analysis.unselectable import unselectable_mask
from normbench.nn.gpt import GPTConfig, GPTDecoder
from normbench.nn.norms import NormSpec


def test_prefix_counts_a_hand_checked_case() -> None:
    # d = 2: a triangle, then its centre (inside the hull of the first three), then a far point
    keys = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0], [0.0, 0.0], [5.0, 5.0]]])
    counts = prefix_unselectable(keys, [3, 4, 5])
    assert counts == {3: (0, 3), 4: (1, 4), 5: (1, 5)}  # (5, 5) adds a vertex; the centre stays inside


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 4), st.integers(4, 12))
def test_prefix_equals_the_mask_of_each_slice(seed: int, d: int, t: int) -> None:
    keys = torch.from_numpy(np.random.default_rng(seed).normal(size=(3, t, d)))
    sizes = sorted({2, t // 2 + 1, t})
    counts = prefix_unselectable(keys, sizes)
    for n in sizes:
        expected = sum(int(unselectable_mask(keys[b, :n].numpy()).sum()) for b in range(3))
        assert counts[n] == (expected, 3 * n)


@pytest.mark.parametrize("sizes", [[], [0], [9]])
def test_prefix_sizes_outside_the_sequence_are_refused(sizes: list[int]) -> None:
    with pytest.raises(ValueError, match="key_sets.sizes"):
        prefix_unselectable(torch.zeros(1, 8, 2), sizes)


def test_attention_keys_are_the_keys_the_per_layer_analysis_counts() -> None:
    torch.manual_seed(0)
    model = GPTDecoder(
        GPTConfig(
            vocab_size=50,
            max_positions=16,
            n_layers=2,
            attn_norm=GPTConfig().attn_norm.__class__("project", affine=False, eps=0.0),
        )
    )
    tokens = torch.randint(0, 50, (2, 16))
    keys = attention_keys(model, tokens)
    assert list(keys) == ["L1", "L2"] and keys["L1"]["after"].shape == (2, 16, 8)
    layers = unselectable_per_layer(model, tokens)
    for layer, entry in zip(keys.values(), layers, strict=False):
        bad, total = prefix_unselectable(layer["after"], [16])[16]
        assert bad / total == pytest.approx(entry["fraction_after"])
    assert model.training  # restored


def test_head_view_on_hand_made_key_sets() -> None:
    """Head 0: a square's corners and its centre (the centre is inside); head 1: points on a circle."""
    from normbench.analysis.model_keys import head_unselectable

    square = torch.tensor([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0], [0.0, 0.0]])
    angles = torch.tensor([0.0, 0.1, 0.2, 2.0, 4.0])
    circle = torch.stack([angles.cos(), angles.sin()], dim=-1) * 2**0.5
    heads = torch.stack([square, circle])[None]  # (B=1, H=2, T=5, 2)
    mask = head_unselectable(heads)
    assert mask.tolist() == [[[False, False, False, False, True], [False] * 5]]
    # padding leaves keys out of every set: without the centre's rival corners it is a vertex
    valid = np.array([[False, False, True, True, True]])
    assert head_unselectable(heads, valid)[0, 0].tolist() == [False, False, False, False, False]


@pytest.mark.parametrize("qk_norm", [False, True])
def test_qk_normed_keys_are_all_selectable_per_head(qk_norm: bool) -> None:
    """In each head's 2-D key space four keys at a square's corners and one inside: without QK-norm
    the inner key is unselectable; with it every key lies on the circle of radius sqrt(2), all vertices."""
    from normbench.nn.majority import MajorityEncoder

    corners = [[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0], [0.3, 0.1]]
    model = MajorityEncoder(
        num_classes=5, d_model=4, n_heads=2, ffn_width=4, qk_norm=qk_norm, attn_norm=NormSpec("none", affine=False)
    ).double()
    with torch.no_grad():
        model.embedding.weight.copy_(torch.tensor([c + c for c in corners]))  # the same square in both heads
        model.blocks[0].attn.k_proj.weight.copy_(torch.eye(4))
    (layer,) = unselectable_per_layer(model, torch.arange(5)[None])
    assert layer["fraction_heads"] == (0.0 if qk_norm else 0.2)
    assert layer["positions_heads"][0, :, 4].tolist() == [not qk_norm] * 2
    assert layer["fraction_after"] == 0.2  # input space: the fifth row is inside the others' hull either way


def test_keys_come_from_a_float64_forward_of_the_untouched_model() -> None:
    """The analyses read float64 keys; the model's own parameters stay float32 and its output is the float64 network's."""
    torch.manual_seed(1)
    model = GPTDecoder(GPTConfig(vocab_size=30, max_positions=12, n_layers=2)).eval()
    tokens = torch.randint(0, 30, (2, 12))
    out = float64_forward(model, tokens)
    assert out.dtype == torch.float64 and all(p.dtype == torch.float32 for p in model.parameters())
    reference = GPTDecoder(GPTConfig(vocab_size=30, max_positions=12, n_layers=2)).eval()
    reference.load_state_dict(model.state_dict())
    torch.testing.assert_close(out, reference.double()(tokens), rtol=0, atol=0)
    keys = attention_keys(model, tokens)
    assert {v[w].dtype for v in keys.values() for w in ("before", "after", "heads")} == {torch.float64}
