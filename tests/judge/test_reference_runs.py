"""A board's seeds beside another code's runs of the same protocol (bench.reference_runs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normbench.judge.reference_runs import build_reference, load_reference, paired, render_paired, render_reference
from normbench.judge.stats import difference_interval

SPEC = {
    "file": "majority_exp",
    "metric": "test_acc@1000",
    "value": "test_acc.1000",
    "group": "layer_norm",
    "variants": {"WITH_PROJ": "pre/both", "WITHOUT_PROJ": "pre/paper_no_projection"},
    "seeded_by": "data_seed",
}
ROOT = Path(__file__).resolve().parents[2]


def variant(seeds: list[int], values: list[float]) -> dict:
    return {"seeds": seeds, "metrics": {"test_acc@1000": {"per_seed": values}}}


def test_the_board_is_compared_with_the_references_unseeded_runs_and_its_seeded_run_is_paired() -> None:
    variants = {
        "pre/both": variant([0, 1, 2], [0.80, 0.78, 0.79]),
        "pre/paper_no_projection": variant([0, 1], [0.6, 0.5]),
    }
    ref = load_reference("majority_exp")
    out = build_reference(SPEC, variants)
    with_proj, without = out["rows"]
    theirs = [r["test_acc"]["1000"] for r in ref["runs"] if r["layer_norm"] == "WITH_PROJ" and r["data_seed"] is None]
    assert with_proj["reference"]["n"] == len(theirs) == 3
    expected = difference_interval([0.80, 0.78, 0.79], theirs)
    assert with_proj["difference"]["estimate"] == pytest.approx(expected.estimate)
    assert with_proj["difference"]["p_value"] == pytest.approx(expected.p_value)
    seeded = {r["data_seed"]: r["test_acc"]["1000"] for r in ref["runs"] if r["layer_norm"] == "WITHOUT_PROJ"}
    board = {0: 0.6, 1: 0.5}  # the board has no seed 2: that pair has no board value
    assert without["seeded"] == [
        {"seed": s, "reference": seeded[s], "board": board.get(s)} for s in sorted(k for k in seeded if k is not None)
    ]
    assert [p["seed"] for p in without["seeded"]] == [0, 1, 2]
    assert without["reference"]["n"] == 3  # the seeded runs are paired, not in the spread
    md = "\n".join(render_reference(out))
    assert "| `pre/both` | `WITH_PROJ` | 0.7900 ± 0.0100 (n = 3) |" in md
    assert "- `pre/paper_no_projection` seed 0: the reference 0.6278, this board 0.6000" in md


def test_seeded_pairs_are_summarised_as_paired_differences_against_the_boards_seed_spread() -> None:
    variants = {
        "pre/both": variant([0, 1, 2], [0.80, 0.78, 0.79]),
        "pre/paper_no_projection": variant([0, 1], [0.6, 0.5]),
    }
    rows = build_reference(SPEC, variants)["rows"]
    rows[0]["seeded"] = [{"seed": 1, "reference": 0.7790, "board": 0.78}, {"seed": 2, "reference": None, "board": 0.79}]
    rows[1]["seeded"] = [{"seed": 0, "reference": 0.6030, "board": 0.6}]
    summary = paired(rows)
    assert summary["n"] == 2  # the pair without a reference value is left out
    assert [p["difference"] for p in summary["pairs"]] == pytest.approx([0.001, -0.003])
    assert summary["mean"]["estimate"] == pytest.approx(-0.001)
    assert summary["mean"]["low"] < -0.001 < summary["mean"]["high"]
    assert summary["max_abs"] == pytest.approx(0.003)
    assert summary["board_std"] == {
        "pre/both": pytest.approx(0.01),
        "pre/paper_no_projection": pytest.approx(0.0707107),
    }
    text = render_paired(summary)[-1]
    assert text.startswith("Paired over the 2 seeded runs (same data and initial weights): this board − the reference")
    assert (
        "at most 0.0030 in one pair; this board's spread over seeds (sample std) is 0.0100 to 0.0707, 3 times" in text
    )
    assert paired([{**rows[0], "seeded": []}]) is None and render_paired(None) == []


def test_the_published_paper_1000_board_shows_todays_comparison_of_its_own_seeds() -> None:
    board = json.loads((ROOT / "results" / "majority" / "paper-1000" / "leaderboard.json").read_text())
    variants = {v["name"]: v for v in board["variants"]}
    assert board["reference_runs"] == json.loads(json.dumps(build_reference(SPEC, variants)))


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ({**SPEC, "file": "nope"}, "bench.reference_runs.file: 'nope' is not a reference; choose one of majority_exp"),
        ({**SPEC, "colour": 1}, "bench.reference_runs: unknown colour; it holds"),
        ({k: v for k, v in SPEC.items() if k != "metric"}, "bench.reference_runs: missing metric; it holds"),
    ],
)
def test_a_wrong_spec_is_one_line_naming_the_field(spec: dict, says: str) -> None:
    with pytest.raises(ValueError, match="^" + says.replace("(", r"\(")) as err:
        build_reference(spec, {})
    assert "\n" not in str(err.value)
