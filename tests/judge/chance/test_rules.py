"""Claims against chance: a cell against its random-key null, growth against the null's growth, the paper's values
beside the null at its own key counts."""

from __future__ import annotations

import pytest

from normbench.judge.chance import rules as chance_rules
from normbench.judge.chance.rules import chance_claims, paper_chance
from normbench.judge.claims import judge


def variant(name: str, per_seed: dict[str, list[float]], null: dict[str, float], sanity: bool = False) -> dict:
    metrics = {
        metric: {
            "per_seed": values,
            "chance": {"mean": null[metric], "sem": 0.001, "sets": 500, "sanity_check": sanity, "basis": "test"},
        }
        for metric, values in per_seed.items()
    }
    return {"name": name, "seeds": [0, 1, 2], "metrics": metrics}


@pytest.mark.parametrize(
    ("values", "verdict", "words"),
    [
        ([0.20, 0.21, 0.19], "not reproduced", "below chance"),  # trained keys more selectable than random keys
        ([0.40, 0.41, 0.39], "reproduced", "above chance"),
        ([0.30, 0.36, 0.25], "inconclusive", "at chance"),
    ],
)
def test_a_cell_is_judged_against_its_null(values: list[float], verdict: str, words: str) -> None:
    board = [variant("pre/project", {"unselectable_after_L1": values}, {"unselectable_after_L1": 0.30})]
    (claim,) = chance_claims(board)
    assert claim["id"] == "normbench.chance.pre/project.unselectable_after_L1" and claim["owner"] == "normbench"
    judged = judge(claim, {v["name"]: v for v in board})
    assert judged["verdict"] == verdict and judged["explanation"].startswith(words)
    diff = judged["difference"]
    assert diff["estimate"] == pytest.approx(sum(values) / 3 - 0.30)
    assert diff["n"] == [3, 500] and judged["power"]["detectable"] > 0


def test_keys_on_a_sphere_and_first_k_columns_get_no_cell_claim() -> None:
    board = [
        variant("pre/both", {"unselectable_after_L1": [0.0, 0.0, 0.0]}, {"unselectable_after_L1": 0.0}, sanity=True),
        variant("pre/project", {"unselectable_after_k64_L1": [0.1] * 3}, {"unselectable_after_k64_L1": 0.1}),
    ]
    assert chance_claims(board) == []


def test_growth_is_judged_against_the_nulls_growth() -> None:
    spec = {
        "id": "x.growth",
        "owner": "normbench",
        "source": "test",
        "metric": "unselectable_after_k64_L1",
        "metrics": {"small": "unselectable_after_k64_L1", "large": "unselectable_after_k256_L1"},
        "variants": {"small": "pre/project", "large": "pre/project"},
        "rule": {"kind": "chance_growth"},
    }
    null = {"unselectable_after_k64_L1": 0.09, "unselectable_after_k256_L1": 0.34}  # random keys grow by 0.25
    grows_less = variant("pre/project", {"unselectable_after_k64_L1": [0.05, 0.04, 0.045],
                                         "unselectable_after_k256_L1": [0.21, 0.19, 0.2]}, null)  # fmt: skip
    judged = judge(spec, {"pre/project": grows_less})
    assert judged["verdict"] == "not reproduced"  # the trained fraction grows (by 0.15), but less than chance's
    assert judged["measured"]["null growth"] == pytest.approx(0.25)
    assert judged["difference"]["estimate"] == pytest.approx(0.155 - 0.25, abs=1e-3)


def test_the_papers_value_beside_the_null_at_its_key_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chance_rules, "PAPER_CHANCE_SETS", 16)  # standard error ~0.004: the bounds stay 5 SE away
    claim = {"id": "t", "paper": {"without_scaling": 0.51}, "chance_at": {"role": "without_scaling", "d": 7,
                                                                        "n": [768, 1024]}}  # fmt: skip
    result = paper_chance(claim)
    assert [r["n"] for r in result["null"]] == [768, 1024]
    assert 0.54 < result["null"][0]["mean"] < result["null"][1]["mean"] < 0.64  # the 56.7 % to 60.7 %
    assert result["position"] == "below" and "lies below chance" in result["text"]
    assert paper_chance({**claim, "paper": {"without_scaling": 0.9}})["position"] == "above"
    assert paper_chance({"id": "none"}) is None
