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

import normbench.judge.chance as chance
from normbench.judge.chance import chance_for_metric, chance_fraction, set_sizes_from_data
from normbench.training.run.loading import build_datamodule
from tests.sst2_corpus import write_sst2


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

    monkeypatch.setattr(chance, "unselectable_mask", fail)
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


# -- leaderboard columns -----------------------------------------------------------------------


def lm(length: int = 32, **arch: Any) -> dict[str, Any]:
    """A resolved LM config with the fields the chance values read (the norms not named: the task's defaults)."""
    return {
        "task": "lm",
        "model": {
            "class_path": "normbench.tasks.lm.LMModule",
            "init_args": {
                "arch": {"d_model": 8, "n_heads": 4, "n_layers": 4, "placement": "pre", "qk_norm": False, **arch}
            },
        },
        "data": {"init_args": {"analysis_length": length}},
    }


def norm(component: str, affine: bool = False, eps: float = 1e-5) -> dict[str, Any]:
    return {"component": component, "affine": affine, "eps": eps}


def test_lm_columns() -> None:
    both = lm(attn_norm=norm("both"))
    after = chance_for_metric("unselectable_after_L2", both)
    assert after["sanity_check"] and after["mean"] == 0.0 and after["keys"] == "sphere" and after["feed"] == "both"
    assert after["d"] == 7 and after["n"] == 32 and "eps = 1e-05" in after["basis"]
    before = chance_for_metric("unselectable_before_L2", both)  # the residual stream
    assert not before["sanity_check"] and before["d"] == 8 and before["feed"] is None and before["mean"] > 0
    assert before["mean"] == chance_fraction(8, 32)["mean"]
    heads = chance_for_metric("unselectable_heads_L1", both)  # a sphere in 7 dimensions seen through W_k in 2
    assert not heads["sanity_check"] and heads["d"] == 2 and heads["mean"] == chance_fraction(2, 32)["mean"]
    assert chance_for_metric("unselectable_after_k16_L1", lm(attn_norm=norm("none")))["n"] == 16

    projected = chance_for_metric("unselectable_after_L1", lm(attn_norm=norm("project", eps=0.0)))
    assert projected["d"] == 7 and not projected["sanity_check"] and projected["feed"] == "project"
    assert chance_for_metric("unselectable_after_L3", lm(attn_norm=norm("dyt")))["d"] == 8
    scalenorm = chance_for_metric("unselectable_after_L3", lm(attn_norm=norm("scalenorm")))
    assert scalenorm["sanity_check"] and scalenorm["d"] == 8
    qk = chance_for_metric("unselectable_heads_L2", lm(attn_norm=norm("none"), qk_norm=True))
    assert qk["sanity_check"] and qk["d"] == 2 and qk["mean"] == 0.0

    post = lm(placement="post", attn_norm=norm("project", eps=0.0))  # layer 1 reads the raw embedding
    assert not chance_for_metric("unselectable_after_L1", post)["sanity_check"]
    for metric in ("unselectable_after_L2", "unselectable_before_L2"):  # the FFN LayerNorm of the block before
        assert chance_for_metric(metric, post)["sanity_check"]

    for other in ("final_val_loss", "unselectable_k64_L1", "normal_angle_L1", "mu_h@L2"):
        assert chance_for_metric(other, both) is None


def sst2(data: dict[str, Any] | None = None, **arch: Any) -> dict[str, Any]:
    return {
        "model": {
            "class_path": "normbench.tasks.sst2.SST2Module",
            "init_args": {"arch": {"d_model": 8, "n_heads": 4, "n_layers": 4, **arch}},
        },
        "data": {"class_path": "normbench.data.sst2.SST2DataModule", "init_args": data or {}},
    }


def test_sst2_columns_with_given_sentence_lengths() -> None:
    lengths = [5, 9, 9, 14, 30]
    bare = sst2(placement="none", embed_norm=norm("none"))
    first = chance_for_metric("unselectable_L1", bare, set_sizes=lengths)
    assert first["d"] == 8 and not first["sanity_check"] and first["n"]["keys"] == 67
    assert first["mean"] == chance_fraction(8, lengths)["mean"]
    assert chance_for_metric("unselectable_heads_L4", bare, set_sizes=lengths)["d"] == 2
    tokens = chance_for_metric("unselectable_tokens", bare, set_sizes=lengths)
    assert tokens["layers"] == 4 and tokens["skip_ends"] and not tokens["sanity_check"]
    assert tokens["mean"] > tokens["if_layers_identical"]["mean"] > 0

    bert = sst2(placement="post")  # BERT: LayerNorm on the embedding and after every block
    for metric in ("unselectable_L1", "unselectable_L3", "unselectable_tokens"):
        assert chance_for_metric(metric, bert, set_sizes=lengths)["sanity_check"]
    pre_none = sst2(placement="pre", attn_norm=norm("none"))  # layer 1 reads the embedding LayerNorm
    assert chance_for_metric("unselectable_L1", pre_none, set_sizes=lengths)["sanity_check"]
    mixed = chance_for_metric("unselectable_tokens", pre_none, set_sizes=lengths)
    assert mixed["layers"] == 3 and "L1" in mixed["basis"]


def test_sst2_sentence_lengths_from_the_data_module(tmp_path: Path) -> None:
    folder = write_sst2(tmp_path / "sst2", train=200, dev=30)
    config = sst2(
        data={"source": "local", "data_dir": str(folder), "vocab_size": 200, "eval_batch_size": 8},
        placement="none",
        embed_norm=norm("none"),
    )
    sizes = set_sizes_from_data(config)
    expected = [len(ids) for ids in build_datamodule(config, "test").encoded["validation"].ids]
    assert sorted(sizes) == sorted(expected) and len(sizes) == 30
    result = chance_for_metric("unselectable_L2", config, sets=2)
    assert result["n"]["keys"] == sum(expected) and "30 dev sentences" in result["basis"]


def test_majority_class_keys() -> None:
    config = {
        "task": "majority",
        "model": {
            "init_args": {
                "arch": {
                    "d_model": 8,
                    "n_heads": 1,
                    "num_classes": 20,
                    "placement": "pre",
                    "attn_norm": norm("both", eps=0.0),
                }
            }
        },
    }
    keys = chance_for_metric("class_keys_unselectable", config)
    assert keys["sanity_check"] and keys["n"] == 20 and "eps" not in keys["basis"]
    heads = chance_for_metric("class_keys_unselectable_heads", config)  # one head of width 8: W_k keeps the sphere
    assert heads["sanity_check"]
    config["model"]["init_args"]["arch"]["placement"] = "none"
    bare = chance_for_metric("class_keys_unselectable", config)
    assert not bare["sanity_check"] and bare["d"] == 8 and bare["mean"] == chance_fraction(8, 20)["mean"]
    assert np.isfinite(bare["sem"])


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
    null = chance.matched_null(keys, n=3 * d + 10, sets=6, seed=seed)
    assert null["rank"] == d - project
    assert null["matched"] == null["iid"]
    assert null["iid"]["mean"] == chance_fraction(d - project, 3 * d + 10, sets=6, seed=seed)["mean"]


def test_draws_grow_until_the_null_is_a_tenth_of_the_seed_spread() -> None:
    pilot = chance_fraction(8, 64, sets=50)
    sets, met = chance.sets_for(pilot, target_sem=pilot["sem"] / 2)
    assert met and sets == math.ceil(50 * 4)
    assert chance_fraction(8, 64, sets=sets)["sem"] < pilot["sem"] / 2 * 1.25  # sem falls as 1 / sqrt(sets)
    sets, met = chance.sets_for(pilot, target_sem=pilot["sem"] / 1000)  # a million-fold: past the work budget
    assert not met and sets * 64 * 8 <= chance.WORK_BUDGET
    assert chance.sets_for(pilot, target_sem=None) == (50, False)


def test_a_null_is_drawn_again_when_its_first_draw_falls_short_of_the_target() -> None:
    """The sets needed are predicted from the pilot's estimated standard error; a draw that still misses the target
    is drawn again, and whether the target is met is the final draw's own standard error, not the prediction."""
    pilot = chance_fraction(8, 64, sets=50)
    target = pilot["sem"] / 2
    draws: list[int] = []

    def draw(*, sets: int) -> dict:
        draws.append(sets)
        sem = target * 1.1 if len(draws) == 1 else target * 0.9  # the first draw misses by 10%
        return {**pilot, "sets": sets, "sem": sem}

    final = chance.draw_to_target(pilot, target, draw)
    assert len(draws) == 2 and draws[1] > draws[0] and final["sem"] <= target
    assert chance.draw_to_target(pilot, None, draw) is pilot  # no target: the pilot stands
    assert chance.draw_to_target(pilot, pilot["sem"] * 2, draw) is pilot  # met already: nothing drawn


def test_with_chance_shares_one_null_across_columns_and_meets_the_smallest_spread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(chance, "WORK_BUDGET", 1_600_000)  # a tenth of the budget: the target is still out of reach
    _, runs = plan_runs_lm()
    config = runs[0].config
    agg = {"per_seed": [0.30, 0.31, 0.32]}  # seed sd 0.01: the null's SE must fall below 0.001
    tight = {"per_seed": [0.300, 0.3005, 0.301]}  # sd 0.0005: below the budget at n = 64, d = 7
    variants = [{"name": "pre/project", "metrics": {"unselectable_after_L1": dict(agg),
                                                    "unselectable_after_L2": dict(tight)}}]  # fmt: skip
    chance.with_chance(variants, {"pre/project": config})
    l1, l2 = (variants[0]["metrics"][f"unselectable_after_L{i}"]["chance"] for i in (1, 2))
    assert l1["mean"] == l2["mean"] and l1["sets"] == l2["sets"] > chance.DEFAULT_SETS
    assert l1["target_sem"] == pytest.approx(0.1 * 0.0005) and l1["sem"] <= 0.001
    assert l1["basis"] != l2["basis"]  # each column says which layer's keys it is


def plan_runs_lm():
    from normbench.sweep.plan import plan_runs

    return plan_runs(
        "lm", "quick", seeds=[0], variants=["pre/project"], overrides=["data.init_args.analysis_length=64"]
    )
