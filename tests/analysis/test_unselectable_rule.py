"""One rule for every count of unselectable keys: delta_i <= tol, whatever the path, batch, scale or device.

delta_i is the distance of key i from the hull of the other keys of its set, in the set's units
(centred, divided by the largest distance from the centroid). The near-tie keys below sit on
the hull of the others (a midpoint of two keys: delta = 0) or just outside it at a few multiples
of the tolerance, where the cheap certificates are not allowed to decide.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from normbench.analysis.hull import hull_distance
from normbench.analysis.model_keys import head_unselectable, prefix_unselectable, unselectable_per_layer
from normbench.analysis.unselectable import (
    DEFAULT_TOL,
    key_distance,
    set_units,
    unselectable_mask,
    unselectable_mask_lp,
)

NO_GPU = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
# key coordinates 0 or of magnitude 1e-6..1e3: scaled by 1e+-150 they stay normal floats (a product that
# underflows to 0 changes the keys themselves, not only their scale)
MODERATE = st.one_of(st.just(0.0), st.floats(1e-6, 1e3), st.floats(-1e3, -1e-6))
OFFSETS = [0.0, 0.25, 0.5, 0.9, 1.0, 1.1, 1.5, 2.0, 2.5, 5.0]  # multiples of tol * spread


def with_near_ties(rng: np.random.Generator, n: int, d: int, ties: int) -> np.ndarray:
    """n random keys, ``ties`` of them replaced by midpoints of two others pushed out by OFFSETS * tol * s.

    A midpoint of two adjacent hull vertices lies on the hull (delta = 0); pushed away from the
    centroid by a few tol * s (s: the set's spread, in the units of :func:`set_units`) it lands
    in the band where the certificates must leave the verdict to the rule.
    """
    keys = rng.standard_normal((n, d))
    _, _, spread = set_units(keys[None])
    unit_length = float(spread[0]) * 2.0 ** np.frexp(np.abs(keys).max())[1]  # 1 in the set's units
    for _ in range(ties):
        i, j, k = rng.choice(n, 3, replace=False)
        mid = (keys[i] + keys[j]) / 2
        out = mid - keys.mean(0)
        keys[k] = mid + out / np.linalg.norm(out) * rng.choice(OFFSETS) * DEFAULT_TOL * unit_length
    return keys


def rule(keys: np.ndarray, tol: float = DEFAULT_TOL) -> np.ndarray:
    """The definition, key by key: the exact distance from the hull of all others, no certificates."""
    x, _, spread = set_units(keys[None])
    if len(keys) == 1:
        return np.zeros(1, dtype=bool)
    if spread[0] == 0:
        return np.ones(len(keys), dtype=bool)
    return np.array([key_distance(x[0], i, float(spread[0])) <= tol for i in range(len(keys))])


def test_hull_distance_hand_checked() -> None:
    square = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    assert hull_distance(square, np.array([1.0, 1.0])) < 1e-15
    assert hull_distance(square, np.array([3.0, 1.0])) == pytest.approx(1.0)
    assert hull_distance(square, np.array([3.0, 3.0])) == pytest.approx(math.sqrt(2))
    assert hull_distance(square[:1], np.array([3.0, 4.0])) == pytest.approx(5.0)


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 12), d=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_hull_distance_is_the_best_unit_query_margin(m: int, d: int, seed: int) -> None:
    """delta = min over the hull of ||p - h||, and no unit query beats every k_j by more (duality)."""
    rng = np.random.default_rng(seed)
    others, point = rng.standard_normal((m, d)), rng.standard_normal(d) * 2
    delta = hull_distance(others, point)
    weights = rng.dirichlet(np.ones(m))
    assert delta <= np.linalg.norm(point - weights @ others) + 1e-12  # no hull point is nearer
    for v in rng.standard_normal((20, d)):
        assert ((point - others) @ (v / np.linalg.norm(v))).min() <= delta + 1e-12  # no query wins by more


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 40), d=st.integers(1, 6), seed=st.integers(0, 2**32 - 1), ties=st.integers(0, 4))
def test_the_mask_is_the_rule(n: int, d: int, seed: int, ties: int) -> None:
    keys = with_near_ties(np.random.default_rng(seed), n, d, min(ties, n // 3))
    np.testing.assert_array_equal(unselectable_mask(keys), rule(keys))


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(3, 40),
    d=st.integers(2, 5),
    seed=st.integers(0, 2**32 - 1),
    others=st.integers(1, 80),
    at=st.integers(0, 80),
)
def test_batch_composition_does_not_change_a_set(n: int, d: int, seed: int, others: int, at: int) -> None:
    """A set alone, inside a batch of other sets (of any size: the vectorised stages switch at 64), or reordered."""
    rng = np.random.default_rng(seed)
    keys = with_near_ties(rng, n, d, n // 3)
    batch = rng.standard_normal((others + 1, n, d))
    at = at % (others + 1)
    batch[at] = keys
    alone = unselectable_mask(keys)
    np.testing.assert_array_equal(unselectable_mask(batch)[at], alone)
    np.testing.assert_array_equal(unselectable_mask(batch[::-1])[others - at], alone)
    np.testing.assert_array_equal(unselectable_mask(keys, seed=seed % 1000), alone)  # the random directions


@settings(max_examples=25, deadline=None)
@given(t=st.integers(4, 24), d=st.integers(2, 4), seed=st.integers(0, 2**32 - 1))
def test_the_key_set_count_of_the_first_n_keys_is_the_direct_count(t: int, d: int, seed: int) -> None:
    """prefix_unselectable (the key-set report), the per-layer path and the mask agree on the first n keys."""
    rng = np.random.default_rng(seed)
    seqs = np.stack([with_near_ties(rng, t, d, t // 3) for _ in range(3)])
    sizes = sorted({2, t // 2 + 1, t})
    counts = prefix_unselectable(torch.from_numpy(seqs), sizes)
    for n in sizes:
        direct = sum(int(unselectable_mask(seqs[b, :n]).sum()) for b in range(3))
        by_rule = sum(int(rule(np.ascontiguousarray(seqs[b, :n])).sum()) for b in range(3))
        assert counts[n] == (direct, 3 * n) == (by_rule, 3 * n)


def test_a_midpoint_is_unselectable_on_every_path() -> None:
    """A key exactly halfway between two others (on the hull's edge) in every counting path."""
    base = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0], [4.0, 4.0], [2.0, 0.0], [1.0, 3.0]])
    expected = [False, False, False, False, True, True]
    np.testing.assert_array_equal(unselectable_mask(base), expected)
    np.testing.assert_array_equal(unselectable_mask(np.stack([base, base[::-1]]))[1], expected[::-1])
    assert prefix_unselectable(torch.from_numpy(base)[None], [6]) == {6: (2, 6)}
    heads = torch.from_numpy(base)[None, None]  # (B, H, T, d_head)
    np.testing.assert_array_equal(head_unselectable(heads)[0, 0], expected)


@pytest.mark.parametrize("offset", OFFSETS)
def test_near_ties_at_the_threshold_agree_across_paths(offset: float) -> None:
    """A key pushed off an edge by offset * tol * s: one verdict, the rule's, in every path and batch."""
    base = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0], [4.0, 4.0], [2.0, 0.0], [1.0, 2.0], [3.0, 1.0]])
    _, _, spread = set_units(base[None])
    base[4, 1] -= offset * DEFAULT_TOL * spread[0] * 8  # units: 2^3 = 8 is the power of two above max |k| = 4
    expected = rule(base)
    if abs(offset - 1.0) > 0.01:  # at delta = tol itself either verdict is the rule's, as long as it is one
        assert expected[4] == (offset < 1.0)
    assert not expected[:4].any() and expected[5:].all()
    rng = np.random.default_rng(0)
    for b in (1, 5, 80):
        batch = rng.standard_normal((b, 7, 2))
        batch[b // 2] = base
        np.testing.assert_array_equal(unselectable_mask(batch)[b // 2], expected)
    assert prefix_unselectable(torch.from_numpy(base)[None], [7]) == {7: (int(expected.sum()), 7)}


@settings(max_examples=30, deadline=None)
@given(
    keys=st.integers(2, 25).flatmap(
        lambda n: st.integers(1, 5).flatmap(lambda d: hnp.arrays(np.float64, (n, d), elements=MODERATE))
    ),
    exponent=st.sampled_from([-150, 150]),
    shift=st.floats(-3, 3),
)
def test_scale_and_translation_invariance_at_extreme_magnitudes(keys: np.ndarray, exponent: int, shift: float) -> None:
    """The same verdicts for keys, keys * 1e+-150 and keys + a common shift (no overflow to 'all unselectable')."""
    mask = unselectable_mask(keys)
    np.testing.assert_array_equal(unselectable_mask(keys * 10.0**exponent), mask)
    np.testing.assert_array_equal(unselectable_mask(keys * 2.0**exponent), mask)  # exact: bitwise the same units
    spread = np.abs(keys - keys.mean(0)).max()
    moved = keys + shift * spread  # a shift on the keys' own scale: no digits lost to it
    np.testing.assert_array_equal(unselectable_mask(moved), mask)


def test_huge_and_tiny_keys_are_not_all_unselectable() -> None:
    keys = np.random.default_rng(1).standard_normal((30, 3))
    mask = unselectable_mask(keys)
    assert 0 < mask.sum() < 30
    for scale in (1e155, 1e-155, 1e300, 1e-300):
        np.testing.assert_array_equal(unselectable_mask(keys * scale), mask)
        np.testing.assert_array_equal(unselectable_mask_lp(keys * scale), unselectable_mask_lp(keys))


@pytest.mark.parametrize(
    "tol", [-1, -1.0, -1e-300, math.nan, math.inf, -math.inf, np.float64("nan"), "1e-13", None, True]
)
def test_a_bad_tolerance_is_a_one_line_error(tol: object) -> None:
    keys = np.random.default_rng(0).standard_normal((5, 2))
    calls = [lambda: unselectable_mask(keys, tol=tol), lambda: unselectable_mask_lp(keys, tol=tol)]
    if tol is not None:  # None is the analyses' "default tolerance"
        calls += [lambda: head_unselectable(torch.from_numpy(keys)[None, None], tol=tol)]
    for call in calls:
        with pytest.raises(ValueError, match=r"^tol: must be a finite number >= 0, got ") as err:
            call()
        assert "\n" not in str(err.value)


def test_zero_tolerance_is_allowed() -> None:
    keys = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    np.testing.assert_array_equal(unselectable_mask(keys, tol=0), [False, True, False, True])


def test_float32_tensor_and_numpy_get_one_answer() -> None:
    keys = with_near_ties(np.random.default_rng(3), 30, 3, 8).astype(np.float32)
    expected = rule(keys.astype(np.float64))
    np.testing.assert_array_equal(unselectable_mask(keys), expected)
    np.testing.assert_array_equal(unselectable_mask(torch.from_numpy(keys)).numpy(), expected)


@pytest.mark.cuda
@NO_GPU
def test_cuda_and_cpu_inputs_get_one_answer() -> None:
    """The same keys on the GPU and the CPU, alone, batched, by prefix and per layer: the same verdicts."""
    rng = np.random.default_rng(4)
    seqs = torch.from_numpy(np.stack([with_near_ties(rng, 32, 4, 10) for _ in range(6)]))
    for dtype in (torch.float32, torch.float64):
        cpu, gpu = seqs.to(dtype), seqs.to("cuda", dtype)
        on_gpu = unselectable_mask(gpu)
        assert on_gpu.device.type == "cuda"
        torch.testing.assert_close(on_gpu.cpu(), unselectable_mask(cpu))
        assert prefix_unselectable(gpu, [8, 16, 32]) == prefix_unselectable(cpu, [8, 16, 32])


@pytest.mark.cuda
@NO_GPU
def test_a_model_on_cuda_and_on_the_cpu_counts_the_same_keys() -> None:
    """The per-layer analysis of one network on either device (float64 forward): identical positions."""
    from normbench.nn.gpt import GPTConfig, GPTDecoder
    from normbench.nn.norms import NormSpec

    torch.manual_seed(0)
    model = GPTDecoder(
        GPTConfig(vocab_size=40, max_positions=64, n_layers=2, attn_norm=NormSpec("project", False, 0.0))
    )
    tokens = torch.randint(0, 8, (4, 64))  # few distinct tokens: many keys close together
    cpu = unselectable_per_layer(model, tokens)
    gpu = unselectable_per_layer(model.cuda(), tokens.cuda())
    for a, b in zip(cpu, gpu, strict=False):
        for where in ("before", "after", "heads"):
            torch.testing.assert_close(b[f"positions_{where}"].cpu(), a[f"positions_{where}"])
