"""Keys read from a model's blocks and the unselectable fraction among the first n keys of each sequence."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.analysis.model_keys import attention_keys, prefix_unselectable, unselectable_per_layer
from normbench.analysis.unselectable import unselectable_mask
from normbench.nn.gpt import GPTConfig, GPTDecoder


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
    model = GPTDecoder(GPTConfig(vocab_size=50, max_positions=16, n_layers=2,
                                 attn_norm=GPTConfig().attn_norm.__class__("project", affine=False, eps=0.0)))
    tokens = torch.randint(0, 50, (2, 16))
    keys = attention_keys(model, tokens)
    assert list(keys) == ["L1", "L2"] and keys["L1"]["after"].shape == (2, 16, 8)
    layers = unselectable_per_layer(model, tokens)
    for layer, entry in zip(keys.values(), layers):
        bad, total = prefix_unselectable(layer["after"], [16])[16]
        assert bad / total == pytest.approx(entry["fraction_after"])
    assert model.training  # restored
