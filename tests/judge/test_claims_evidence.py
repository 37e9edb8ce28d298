"""Verdicts that do not run ahead of their evidence (normbench.judge.claims.judge): a verdict on fewer seeds than
its protocol declares is provisional, a paper's claim that unselectable keys exist holds only above its random-key
null, and a steps-to-threshold claim names the seeds that never reached the threshold and does not impute them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from normbench.archive import JudgedClaim, load_board
from normbench.judge.claims import check_claim, judge
from normbench.render.claims_view import details, finding, short_verdict, verdict_label
from normbench.site.board_tables import verdicts_table
from normbench.site.teaser import teaser_verdict

RESULTS = Path(__file__).resolve().parents[2] / "results"


def variant(name: str, metric: str, per_seed: list, seeds: list[int] | None = None, **extra) -> dict:
    seeds = list(range(len(per_seed))) if seeds is None else seeds
    agg = {"per_seed": per_seed, "mean": None if None in per_seed else sum(per_seed) / len(per_seed), **extra}
    return {"name": name, "seeds": seeds, "metrics": {metric: agg}}


ORDERING = {
    "id": "test.ordering",
    "owner": "normbench",
    "source": "test",
    "why": "test",
    "statement": "a is lower than b",
    "metric": "loss",
    "variants": {"a": "pre/a", "b": "pre/b"},
    "rule": {"kind": "ordering", "lower": "a"},
}


def ordering_variants(n: int, failed: dict | None = None) -> dict:
    a = variant("pre/a", "loss", [1.0 + 0.01 * i for i in range(n)])
    b = variant("pre/b", "loss", [2.0 + 0.01 * i for i in range(n)])
    if failed:
        a["failed"] = failed
    return {"pre/a": a, "pre/b": b}


# -- no verdict before its seeds --


def test_a_verdict_on_fewer_seeds_than_declared_is_provisional() -> None:
    entry = judge(ORDERING, ordering_variants(2), None, declared=10)
    assert entry["verdict"] == "reproduced"
    assert entry["provisional"] == {"finished": 2, "declared": 10}
    assert "2 of the 10 seeds" in entry["rule"]
    claim = JudgedClaim.from_json(entry)
    assert verdict_label(claim) == "reproduced (provisional: 2 of 10 seeds)"
    assert "(provisional: 2 of 10 seeds)" in short_verdict(claim)
    assert "provisional: judged on 2 of the 10 seeds" in finding(claim)


def test_a_verdict_on_every_declared_seed_is_final() -> None:
    entry = judge(ORDERING, ordering_variants(3), None, declared=3)
    assert "provisional" not in entry and verdict_label(JudgedClaim.from_json(entry)) == "reproduced"
    assert "provisional" not in judge(ORDERING, ordering_variants(3))  # nothing declared: nothing to wait for


def test_a_failed_seed_has_finished_and_is_not_waited_for() -> None:
    # seed 2 of pre/a failed: finished and failed, so the claim waits for no seed of it (pre/b has 3 seeds)
    variants = ordering_variants(2, failed={"2": "RuntimeError: boom"})
    variants["pre/b"] = variant("pre/b", "loss", [2.0, 2.01, 2.02])
    entry = judge(ORDERING, variants, None, declared=3)
    assert "provisional" not in entry
    assert "seed 2 failed" in entry["rule"]  # shown, not averaged away
    assert judge(ORDERING, variants, None, declared=4)["provisional"] == {"finished": 3, "declared": 4}


def test_a_provisional_verdict_is_not_counted_or_stated_as_final(tmp_path: Path) -> None:
    board = load_board(RESULTS / "majority" / "paper")
    assert board.claims and all(c.provisional for c in board.claims)  # 3-4 of the paper protocol's 10 seeds
    (tmp_path / "results" / "majority").mkdir(parents=True)
    shutil.copytree(RESULTS / "majority" / "paper", tmp_path / "results" / "majority" / "paper")
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "docs" / "results" / "majority-paper.md").write_text("# page\n", encoding="utf-8")
    table = verdicts_table(tmp_path / "results", docs_dir=tmp_path / "docs")
    row = next(line for line in table.splitlines() if "majority/paper" in line and "chance" not in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:8] == ["0"] * 6 and cells[8] == str(len(board.claims))
    said = teaser_verdict(board.claims[1])
    assert said.startswith("**provisional**") and "of 10 seeds" in said and not said.startswith("**reproduced")


# -- chance-aware paper claims that unselectable keys exist --

TABLE4 = {
    "id": "test.table4.L1",
    "owner": "paper",
    "source": "test",
    "statement": "Layer 1: unselectable keys exist without LayerNorm and not with it",
    "metric": "unselectable_L1",
    "variants": {"without_layernorm": "none/none", "with_layernorm": "post/both"},
    "paper": {"without_layernorm": "> 0", "with_layernorm": 0},
    "rule": {"kind": "positive_zero", "positive": "without_layernorm", "zero": "with_layernorm"},
    "above_chance": "without_layernorm",
}


def table4_variants(null_mean: float) -> dict:
    chance = {"mean": null_mean, "sem": 0.0001, "sets": 4, "sanity_check": False}
    without = variant("none/none", "unselectable_L1", [0.008, 0.0095, 0.010, 0.0085, 0.0092], chance=chance)
    with_ln = variant("post/both", "unselectable_L1", [0.0] * 5, chance={**chance, "mean": 0.0, "sanity_check": True})
    return {"none/none": without, "post/both": with_ln}


def test_a_paper_unselectable_claim_at_its_null_is_not_reproduced() -> None:
    check_claim(TABLE4)
    at_null = judge(TABLE4, table4_variants(0.0090))
    assert at_null["verdict"] == "not reproduced" and at_null["against_null"]["position"] == "at"
    assert "0.009" in at_null["rule"] and "random-key null" in at_null["rule"]
    claim = JudgedClaim.from_json(at_null)
    assert verdict_label(claim) == "not reproduced: at chance"
    assert "at chance" in finding(claim) and "the seeds show the opposite" not in finding(claim)
    # the same seeds without the chance check: the positive/zero rule alone reproduces it
    plain = {k: v for k, v in TABLE4.items() if k != "above_chance"}
    assert judge(plain, table4_variants(0.0090))["verdict"] == "reproduced"
    # above the null it holds; below it, the board says so
    assert judge(TABLE4, table4_variants(0.002))["verdict"] == "reproduced"
    below = judge(TABLE4, table4_variants(0.05))
    assert below["verdict"] == "not reproduced" and verdict_label(JudgedClaim.from_json(below)).endswith("below chance")


def test_a_paper_unselectable_claim_without_a_null_is_at_most_inconclusive() -> None:
    variants = table4_variants(0.002)
    del variants["none/none"]["metrics"]["unselectable_L1"]["chance"]
    entry = judge(TABLE4, variants)
    assert entry["verdict"] == "inconclusive" and "no null" in entry["rule"]


def test_the_published_sst2_table4_is_judged_against_its_null() -> None:
    board = json.loads((RESULTS / "sst2" / "leaderboard.json").read_text(encoding="utf-8"))
    by_id = {c["id"]: c for c in board["claims"]}
    for layer in ("L1", "L2"):  # 0.93% and 0.94% against a null of 0.72%: the 95% interval holds the null
        claim = by_id[f"brody2023.table4.{layer}"]
        assert claim["verdict"] == "not reproduced" and claim["against_null"]["position"] == "at"
        low, high = claim["against_null"]["difference"]["low"], claim["against_null"]["difference"]["high"]
        assert low < 0 < high


# -- censored steps to a threshold --

FIG2A = {
    "id": "test.fig2a",
    "owner": "paper",
    "source": "test",
    "statement": "Without projection the model needs ~3x more steps",
    "metric": "steps_to_train_loss_0.2",
    "variants": {"with_projection": "pre/both", "without_projection": "pre/paper_no_projection"},
    "paper": {"ratio_without_to_with": 3.0},
    "rule": {"kind": "ratio", "numerator": "without_projection", "denominator": "with_projection", "target": 3.0,
             "tolerance": 1.0},
}  # fmt: skip


def fig2a_variants() -> dict:
    metric = "steps_to_train_loss_0.2"
    both = variant("pre/both", metric, [5300.0, 4700.0, 10850.0, 4590.0], seeds=[0, 1, 2, 3])
    without = variant("pre/paper_no_projection", metric, [None, 8540.0, 10210.0, 12770.0], seeds=[0, 1, 2, 3],
                      per_seed_lower_bound=[14000.0, 8540.0, 10210.0, 12770.0])  # fmt: skip
    return {"pre/both": both, "pre/paper_no_projection": without}


def test_a_censored_seed_is_stated_and_not_imputed() -> None:
    entry = judge(FIG2A, fig2a_variants())
    censored = entry["censored"]
    assert censored["role"] == "without_projection" and censored["seeds"] == [{"seed": 0, "at_step": 14000.0}]
    assert "seed 0 never reached it" in entry["rule"] and "censored at step 14000" in entry["rule"]
    # imputed at its last step the ordering would look significant (p = 0.043); on the seeds that reached it, not
    imputed = censored["with_censored"]
    assert imputed["low"] > 0 and imputed["p_value"] < 0.05
    assert entry["difference"]["n"] == [3, 4] and entry["difference"]["low"] < 0
    assert entry["verdict"] == "inconclusive"
    text = "\n".join(details(JudgedClaim.from_json(entry)))
    assert "- **censored**: without_projection: seed 0 (censored at step 14000) never reached it" in text


def test_censored_seeds_that_still_show_the_ordering_hold_in_direction_only() -> None:
    variants = fig2a_variants()
    variants["pre/paper_no_projection"]["metrics"]["steps_to_train_loss_0.2"]["per_seed"] = [None, 12000.0, 12500.0,
                                                                                           13000.0]  # fmt: skip
    variants["pre/both"]["metrics"]["steps_to_train_loss_0.2"]["per_seed"] = [4000.0, 4100.0, 4200.0, 4300.0]
    entry = judge(FIG2A, variants)
    assert entry["verdict"] == "direction only" and entry["censored"]["seeds"][0]["seed"] == 0


@pytest.mark.parametrize("board", ["majority/paper"])
def test_the_published_censored_claim_says_how_it_was_counted(board: str) -> None:
    doc = json.loads((RESULTS / board / "leaderboard.json").read_text(encoding="utf-8"))
    claim = next(c for c in doc["claims"] if c["id"] == "brody2023.fig2a.steps_to_loss_0.2")
    assert claim["censored"]["seeds"] == [{"seed": 0, "at_step": 14000.0}]
    assert claim["verdict"] == "inconclusive"
    md = (RESULTS / board / "leaderboard.md").read_text(encoding="utf-8")
    assert "seed 0 (censored at step 14000) never reached it" in md
