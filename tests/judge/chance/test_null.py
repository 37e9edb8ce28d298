"""Chance levels of the unselectable fractions: random keys counted by the same analyzer."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

import normbench.judge.chance.null as null_module
from normbench.judge.chance.null import chance_fraction, matched_null


def planar_gaussian_interior(n: int) -> float:
    """Exact expected fraction of n i.i.d. N(0, I_2) points inside the hull of the others: 1 - E[V_n] / n.

    A pair (i, j) is a hull edge when the other n - 2 points lie on one side of the line through
    them. The line's normal u depends on x_j - x_i only, its signed offset u.x_i = u.(x_i + x_j) / 2
    is N(0, 1/2) and independent of it, so E[V_n] = E[edges] = 2 C(n, 2) E[Phi(t)^(n-2)], t ~ N(0, 1/2).
    """
    density = stats.norm(scale=math.sqrt(0.5)).pdf
    mean, _ = integrate.quad(lambda t: density(t) * stats.norm.cdf(t) ** (n - 2), -12, 12, limit=200)
    return 1 - 2 * math.comb(n, 2) * mean / n


def test_the_planar_value_is_the_exact_expectation() -> None:
    r = chance_fraction(2, 256)
    exact = planar_gaussian_interior(256)  # 0.96086: ~10.0 of 256 points are vertices
    assert exact == pytest.approx(0.9609, abs=1e-4)
    # 50 sets give a standard error of ~0.001; four of them is the tolerance (a false alarm ~1 in 16,000)
    assert r["sets"] == 50 and 0 < r["sem"] < 0.003
    assert abs(r["mean"] - exact) <= 4 * r["sem"]
    assert r["d"] == 2 and r["n"] == 256 and r["keys"] == "gaussian" and r["layers"] == 1


def test_small_sets_match_the_formula() -> None:
    for n in (4, 8):  # four points: the fourth lies in the others' triangle with probability 0.087
        r = chance_fraction(2, n, sets=2000)
        assert abs(r["mean"] - planar_gaussian_interior(n)) <= 4 * r["sem"]


def test_monotone_in_the_number_of_keys() -> None:
    """A key that is a vertex among n + 1 keys is one among the first n: the expected fraction cannot fall with n."""
    values = [chance_fraction(3, n, sets=40) for n in (8, 32, 128)]
    for a, b in zip(values, values[1:], strict=False):
        assert b["mean"] - a["mean"] > 3 * math.hypot(a["sem"], b["sem"])


@settings(max_examples=25, deadline=None)
@given(d=st.integers(1, 12), data=st.data(), seed=st.integers(0, 2**16))
def test_at_most_d_plus_one_keys_are_all_vertices(d: int, data: st.DataObject, seed: int) -> None:
    """n <= d + 1 Gaussian keys are affinely independent (with probability 1): each is a vertex of their hull."""
    n = data.draw(st.integers(1, d + 1))
    assert chance_fraction(d, n, sets=3, seed=seed)["mean"] == 0.0


def test_deterministic_for_a_seed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMBENCH_CACHE", str(tmp_path / "a"))
    first = chance_fraction(4, 40, sets=20, seed=3)
    monkeypatch.setenv("NORMBENCH_CACHE", str(tmp_path / "b"))  # computed again, not read back
    again = chance_fraction(4, 40, sets=20, seed=3)
    assert {k: v for k, v in first.items() if k != "seconds"} == {k: v for k, v in again.items() if k != "seconds"}
    assert chance_fraction(4, 40, sets=20, seed=4)["mean"] != first["mean"]
    # a list of set sizes: its order does not matter, the copies are the replicates
    listed = chance_fraction(4, [12, 30, 7, 30], sets=5)
    assert listed == chance_fraction(4, [30, 7, 30, 12], sets=5)
    assert listed["sets"] == 5 and listed["n"]["keys"] == 79 and listed["n"]["sets"] == 4


def test_cached_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMBENCH_CACHE", str(tmp_path))
    first = chance_fraction(3, 30, sets=10)
    (path,) = (tmp_path / "chance").glob("*.json")

    def fail(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("recomputed a cached value")

    monkeypatch.setattr(null_module, "unselectable_mask", fail)
    assert chance_fraction(3, 30, sets=10) == first
    with pytest.raises(AssertionError, match="recomputed"):  # another key (sets) is another entry
        chance_fraction(3, 30, sets=11)
    monkeypatch.undo()
    monkeypatch.setenv("NORMBENCH_CACHE", str(tmp_path))
    path.write_text("{not json")  # a damaged entry is recomputed and rewritten
    again = chance_fraction(3, 30, sets=10)
    assert again["mean"] == first["mean"] and json.loads(path.read_text())["result"] == again


def test_keys_on_a_sphere_are_never_unselectable() -> None:
    assert chance_fraction(3, 64, sets=5, keys="sphere")["mean"] == 0.0
    assert chance_fraction(3, 64, sets=5)["mean"] > 0.3


def test_any_layer_and_ends() -> None:
    one = chance_fraction(3, 20, sets=30, skip_ends=True)
    four = chance_fraction(3, 20, sets=30, layers=4, skip_ends=True)
    assert four["mean"] > one["mean"] and four["layers"] == 4
    with pytest.raises(ValueError, match="skip_ends"):
        chance_fraction(3, [2, 5], skip_ends=True)


@pytest.mark.parametrize(
    "bad", [{"d": 0}, {"n": 0}, {"n": []}, {"n": [3, 0]}, {"sets": 0}, {"seed": -1}, {"keys": "cube"}]
)
def test_bad_arguments(bad: dict[str, Any]) -> None:
    args = {"d": 3, "n": 10, **bad}
    with pytest.raises(ValueError, match=next(iter(bad))):
        chance_fraction(**args)


@settings(max_examples=20, deadline=None)
@given(d=st.integers(2, 6), seed=st.integers(0, 2**16), project=st.booleans())
def test_the_matched_null_is_the_iid_null_in_the_keys_span(d: int, seed: int, project: bool) -> None:
    """Random keys drawn with trained keys' own mean and covariance give the i.i.d. Gaussian value of the keys'
    rank: an invertible affine map keeps every key's vertex status (a projection leaves d - 1 dimensions)."""
    rng = np.random.default_rng(seed)
    points, mixing = rng.standard_normal((200, d)), rng.standard_normal((d, d))
    # invertible at the rank tolerance matched_null declares (1e-9 of the largest covariance eigenvalue): about 1 in
    # 4,000 Gaussian mixing matrices is not (e.g. d = 5, seed 307), and its keys then have a lower rank
    assume(np.linalg.cond(mixing) ** -2 > 1e-6)
    keys = points @ mixing * rng.uniform(0.1, 10) + rng.normal(0, 5, d)
    if project:
        keys = keys - keys.mean(axis=1, keepdims=True)  # onto the hyperplane orthogonal to the ones vector
    null = matched_null(keys, n=3 * d + 10, sets=6, seed=seed)
    assert null["rank"] == d - project
    assert null["matched"] == null["iid"]
    assert null["iid"]["mean"] == chance_fraction(d - project, 3 * d + 10, sets=6, seed=seed)["mean"]
