"""The unselectable-keys analyzer against a one-LP-per-key reference, edge cases, and hooks."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.analysis.model_keys import unselectable_per_layer
from normbench.analysis.unselectable import max_margin, unselectable_mask, unselectable_mask_lp
from normbench.nn.majority import MajorityEncoder
from normbench.nn.norms import NormSpec


def reference_margins(keys: np.ndarray) -> np.ndarray:
    centred = keys - keys.mean(0)
    unit = centred / max(np.linalg.norm(centred, axis=1).max(), 1e-300)
    return np.array([max_margin(np.delete(unit, i, 0), unit[i]) for i in range(len(keys))])


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 30),
    d=st.integers(1, 7),
    seed=st.integers(0, 2**32 - 1),
    log_scale=st.floats(-6, 6),
    shift=st.floats(-100, 100),
    n_dup=st.integers(0, 3),
)
def test_matches_one_lp_per_key(n: int, d: int, seed: int, log_scale: float, shift: float, n_dup: int) -> None:
    rng = np.random.default_rng(seed)
    keys = rng.standard_normal((n, d)) * 10**log_scale + shift * 10**log_scale
    for _ in range(n_dup):  # exact duplicates of random keys
        keys[rng.integers(n)] = keys[rng.integers(n)]
    fast = unselectable_mask(keys)
    ref = unselectable_mask_lp(keys)
    # keys whose best margin is within HiGHS's ~1e-9 tolerance band are decided more precisely by
    # the certificates than by the reference; compare everything else key by key
    margins = reference_margins(keys)
    clear = (margins <= 0) | (margins > 1e-7)
    np.testing.assert_array_equal(fast[clear], ref[clear])


def test_batched_equals_one_set_at_a_time() -> None:
    keys = np.random.default_rng(0).standard_normal((7, 25, 3))
    batched = unselectable_mask(keys)
    assert batched.shape == (7, 25)
    for b in range(7):
        np.testing.assert_array_equal(batched[b], unselectable_mask(keys[b]))


def test_duplicates_are_both_unselectable() -> None:
    keys = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [1.0, 0.0]])
    np.testing.assert_array_equal(unselectable_mask(keys), [True, False, False, True])


@pytest.mark.parametrize("d", [1, 2, 5, 10])
def test_general_position_with_at_most_d_plus_1_keys_all_selectable(d: int) -> None:
    keys = np.random.default_rng(d).standard_normal((d + 1, d))
    assert not unselectable_mask(keys).any()


@pytest.mark.parametrize("d", [2, 3, 8])
def test_centroid_of_a_simplex_is_unselectable(d: int) -> None:
    simplex = np.random.default_rng(d).standard_normal((d + 1, d))
    keys = np.vstack([simplex, simplex.mean(0)])
    np.testing.assert_array_equal(unselectable_mask(keys), [False] * (d + 1) + [True])


def test_point_on_an_edge_is_unselectable() -> None:
    keys = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [1.0, 0.0]])
    np.testing.assert_array_equal(unselectable_mask(keys), [False, False, False, True])


def test_all_zero_and_single_keys() -> None:
    np.testing.assert_array_equal(unselectable_mask(np.zeros((4, 3))), [True] * 4)
    np.testing.assert_array_equal(unselectable_mask(np.ones((1, 3))), [False])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_is_a_clear_error(bad: float) -> None:
    keys = np.ones((3, 2))
    keys[1, 0] = bad
    with pytest.raises(ValueError, match="keys: contains NaN or infinite values"):
        unselectable_mask(keys)
    with pytest.raises(ValueError, match=r"keys: expected shape"):
        unselectable_mask(np.ones(3))


def test_torch_in_torch_out_and_scale_invariance() -> None:
    keys = torch.randn(40, 3, generator=torch.Generator().manual_seed(1))
    mask = unselectable_mask(keys)
    assert isinstance(mask, torch.Tensor) and mask.dtype == torch.bool and mask.any()
    for a, b in [(1e-5, 0.0), (1e5, 3.0), (1.0, -1e3)]:
        torch.testing.assert_close(unselectable_mask(keys.double() * a + b), mask)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 80), d=st.integers(3, 12), seed=st.integers(0, 10_000), rms=st.booleans())
def test_no_key_is_unselectable_after_scaling(n: int, d: int, seed: int, rms: bool) -> None:
    """LayerNorm and RMSNorm (eps = 0) put every key on a sphere: all distinct keys are vertices.

    (d >= 3: for d = 2 LayerNorm leaves only the two points +-(1, -1), so keys coincide.)"""
    x = torch.randn(n, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 3 + 1
    keys = F.rms_norm(x, (d,), eps=0.0) if rms else F.layer_norm(x, (d,), eps=0.0)
    assert not unselectable_mask(keys).any()
    assert unselectable_mask(x).sum() >= 0  # the raw keys may have some


def test_layer_norm_eps_can_make_keys_unselectable() -> None:
    """With eps > 0 a low-variance input lands inside the sphere and can become unselectable."""
    x = torch.tensor(
        [
            [3.0, -3.0, 0.0],
            [-3.0, 3.0, 0.0],
            [0.0, 3.0, -3.0],
            [0.0, -3.0, 3.0],
            [3.0, 0.0, -3.0],
            [-3.0, 0.0, 3.0],
            [1e-3, 5e-4, -1.5e-3],
        ],
        dtype=torch.float64,
    )
    assert not unselectable_mask(F.layer_norm(x, (3,), eps=0.0)).any()
    assert unselectable_mask(F.layer_norm(x, (3,), eps=1e-5))[-1]


def majority_model(placement: str) -> MajorityEncoder:
    torch.manual_seed(0)
    return MajorityEncoder(
        placement=placement, attn_norm=NormSpec("both", False, 0.0), ffn_norm=NormSpec("both", True, 0.0)
    ).double()


def test_model_hook_on_the_majority_model() -> None:
    model = majority_model("pre")
    distinct = torch.randperm(20)[None]  # one sequence, every class once: all keys distinct
    repeated = torch.tensor([[0, 1, 2, 0, 1, 2, 3]])
    (layer,) = unselectable_per_layer(model, distinct)
    assert layer["layer"] == "L1"
    assert layer["fraction_after"] == 0.0  # LayerNorm (eps = 0) keys: all selectable
    raw_keys = model.embedding(distinct)[0]
    np.testing.assert_array_equal(layer["positions_before"][0].numpy(), unselectable_mask(raw_keys.detach()).numpy())
    (rep,) = unselectable_per_layer(model, repeated)
    # without positions, repeated tokens give identical keys: both copies can never win strictly
    np.testing.assert_array_equal(rep["positions_after"][0].numpy(), [True, True, True, True, True, True, False])


def test_model_hook_with_placement_none_and_padding() -> None:
    model = majority_model("none")
    tokens = torch.randperm(20)[None].repeat(2, 1)
    pad = torch.zeros(2, 20, dtype=torch.bool)
    pad[1, 10:] = True
    (layer,) = unselectable_per_layer(model, tokens, key_padding_mask=pad)
    torch.testing.assert_close(layer["positions_before"], layer["positions_after"])
    assert layer["fraction_before"] == layer["fraction_after"]
    assert not layer["positions_after"][1, 10:].any()  # padding is never analysed
    expected = unselectable_mask(model.embedding(tokens[1, :10]).detach())
    np.testing.assert_array_equal(layer["positions_after"][1, :10].numpy(), expected.numpy())
    assert model.training  # the hook restores the module's mode


def test_layer_norm_eps_shrinks_a_low_variance_key_inside_the_others() -> None:
    """At d = 3 LayerNorm (eps = 0) puts keys on a circle; eps = 1e-5 pulls a low-variance key off it."""
    from normbench.analysis.random_grid import layer_norm_keys

    angles = np.array([0.0, 0.01, 0.02, 2.0, 4.0])
    basis = np.array([[1, -1, 0], [1, 1, -2]]) / np.array([[np.sqrt(2)], [np.sqrt(6)]])
    keys = np.cos(angles)[:, None] * basis[0] + np.sin(angles)[:, None] * basis[1]  # on the plane, mean 0
    keys[1] *= 1e-2  # variance 1e-4 / 3: LayerNorm with eps = 1e-5 shrinks its norm by about 12%
    assert not unselectable_mask(layer_norm_keys(keys, eps=0.0)).any()
    assert unselectable_mask(layer_norm_keys(keys, eps=1e-5)).tolist() == [False, True, False, False, False]


@pytest.mark.parametrize("shape", [(0, 4), (3, 0, 4), (0, 5, 4)])
def test_an_empty_key_set_gives_an_empty_mask(shape: tuple[int, ...]) -> None:
    keys = np.zeros(shape)
    for mask in (unselectable_mask(keys), unselectable_mask_lp(keys)):
        assert mask.shape == shape[:-1] and mask.dtype == bool
    as_torch = unselectable_mask(torch.zeros(shape))
    assert isinstance(as_torch, torch.Tensor) and tuple(as_torch.shape) == shape[:-1]
