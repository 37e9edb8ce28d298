"""What a verdict may say given its statistics: significance, power, borderline, margins declared before runs."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from scipy import stats as scipy_stats

from normbench.archive.compact import expand
from normbench.io import read_yaml
from normbench.judge.claims import judge
from normbench.judge.stats import difference_interval
from normbench.judge.verdicts.qualify import detectable_effect, margin_registration, qualify
from tests.factories import positive_zero_claim

RESULTS = Path(__file__).resolve().parents[3] / "results"
BOARDS = [p for p in sorted(RESULTS.rglob("leaderboard.json")) if "archive" not in p.parts]
REPORTS = [RESULTS / "sst2" / "unselectable_tokens.json"]  # Tables 3-4, judged beside the SST-2 board
CARDS = sorted((RESULTS / "cards").glob("*/card.json"))


def judged_entries(doc: object) -> list[dict]:
    """Every judged claim in a committed document, wherever it sits: a board's ``claims``, ``tuned_claims`` and
    ``against_chance``, a card's per-task claims at either rate (a dict with an ``id`` and a ``verdict``)."""
    if isinstance(doc, list):
        return [e for item in doc for e in judged_entries(item)]
    if not isinstance(doc, dict):
        return []
    own = [doc] if isinstance(doc.get("id"), str) and "verdict" in doc else []
    return own + [e for value in doc.values() for e in judged_entries(value)]


def test_the_detectable_effect_is_the_welch_interval_widened_to_80_percent_power() -> None:
    diff = difference_interval([1.0, 2.0, 3.0], [0.0, 1.0, 2.0]).as_dict()  # SE = sqrt(2/3), df = 4
    se, df = (2 / 3) ** 0.5, 4.0
    want = (scipy_stats.t.ppf(0.975, df) + scipy_stats.t.ppf(0.8, df)) * se
    assert detectable_effect(diff) == pytest.approx(want, rel=1e-12)
    assert detectable_effect(None) is None and detectable_effect({"estimate": 1.0, "low": None, "high": None}) is None


def variant(values: list[float], metric: str = "m") -> dict:
    return {"seeds": list(range(len(values))), "status": "done", "metrics": {metric: {"per_seed": values}}}


def positive_zero(without: list[float]) -> dict:
    return judge(positive_zero_claim("m", "a", "b"), {"a": variant(without), "b": variant([0.0, 0.0, 0.0])})


def test_exists_in_every_seed_is_reproduced_only_when_the_difference_is_significant() -> None:
    assert positive_zero([0.010, 0.011, 0.012])["verdict"] == "reproduced"
    noisy = positive_zero([0.001, 0.030, 0.002])  # > 0 in every seed, but the interval includes 0
    assert noisy["verdict"] == "inconclusive" and noisy["difference"]["low"] < 0
    assert (
        noisy["power"]["leaning"] == "with the claim" and noisy["power"]["detectable"] > noisy["difference"]["estimate"]
    )


def equivalence(candidate: list[float], margin: float = 0.01) -> dict:
    claim = {
        "id": "nguyen2019.scalenorm_matches_layernorm",
        "owner": "paper",
        "source": "s",
        "metric": "test_acc@5000",
        "variants": {"layernorm": "a", "scalenorm": "b"},
        "paper": {},
        "rule": {
            "kind": "equivalence",
            "reference": "layernorm",
            "better": "higher",
            "margin": margin,
            "margin_why": "w",
        },
    }
    metric = claim["metric"]
    return judge(claim, {"a": variant([0.900, 0.901, 0.902], metric), "b": variant(candidate, metric)})


def test_an_equivalence_within_the_tolerance_of_its_margin_is_borderline() -> None:
    clear = equivalence([0.900, 0.901, 0.902])
    assert clear["verdict"] == "reproduced" and "borderline" not in clear
    # shift the candidate until the 90% interval's low edge sits 1e-4 inside -margin (accuracy tolerance 2.5e-4)
    low = clear["equivalence"]["interval"]["low"]
    shift = -0.01 - low + 1e-4
    near = equivalence([0.900 + shift, 0.901 + shift, 0.902 + shift])
    assert near["verdict"] == "borderline" and near["borderline"]["was"] == "reproduced"
    assert near["borderline"]["distance"] == pytest.approx(1e-4, abs=1e-9)
    assert near["margin_declared"] == "after the runs"  # registered after results/majority/modern was trained


def test_a_verdict_without_a_difference_is_left_as_it_is() -> None:
    entry = {"verdict": "reproduced", "rule": "r", "difference": None, "metric": "m"}
    assert qualify(entry, {"id": "x", "rule": {"kind": "all_zero"}}) == entry


def claims_files() -> list[tuple[str, dict]]:
    folder = resources.files("normbench.judge") / "claims"
    out = []
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if path.name.endswith(".yaml") and path.name != "protocols.yaml":
            for claim in (read_yaml(path) or {}).get("claims") or []:
                out.append((path.name.removesuffix(".yaml"), claim))
    return out


def test_a_claim_id_has_one_margin_per_claims_file() -> None:
    """A second registration of the same claim id for the same claims file would let a margin move silently."""
    from normbench.judge.verdicts.qualify import registered_margins

    for claim_id, registrations in registered_margins().items():
        files = [r["claims"] for r in registrations]
        assert len(files) == len(set(files)), f"{claim_id}: registered twice for one claims file: {files}"


@pytest.mark.parametrize("path", BOARDS + CARDS, ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_published_equivalence_was_judged_at_its_registered_margin(path: Path) -> None:
    """A margin changed in the registry after a board was judged at the old one fails here: the change needs a new
    claim id, judged on its own."""
    for entry in judged_entries(json.loads(path.read_text(encoding="utf-8"))):
        margin = (entry.get("equivalence") or {}).get("margin")
        if margin is not None:
            assert margin_registration(entry["id"], float(margin)) is not None, (
                f"{entry['id']}: judged at margin {margin}, which is not its registered margin"
            )


def test_every_equivalence_margin_is_registered_under_its_claim_id() -> None:
    """A margin changed under the same claim id fails here: a new margin is a new claim id, registered in
    claims/margins.yaml before its runs."""
    margins = [(f, c) for f, c in claims_files() if (c.get("rule") or {}).get("kind") == "equivalence"]
    assert len(margins) >= 7
    for name, claim in margins:
        registered = margin_registration(claim["id"], float(claim["rule"]["margin"]))
        assert registered is not None, f"{name}: {claim['id']} margin {claim['rule']['margin']} is not registered"
        assert registered["claims"] == name and registered["declared"] in ("before the runs", "after the runs")


@pytest.mark.parametrize("path", BOARDS + REPORTS + CARDS, ids=lambda p: str(p.relative_to(RESULTS)))
def test_no_committed_claim_is_reproduced_while_its_interval_includes_zero(path: Path) -> None:
    """Every judged claim of every board, report and card: at the shared rate, at the tuned rates, against chance."""
    for claim in judged_entries(json.loads(path.read_text(encoding="utf-8"))):
        diff = claim.get("difference")
        if claim.get("equivalence") is not None or not diff or diff.get("estimate") is None:
            continue  # an equivalence is shown by its 90% interval inside the margin, which may well hold 0
        if claim["verdict"] == "reproduced":
            assert diff["low"] is not None and (diff["low"] > 0 or diff["high"] < 0), claim["id"]
        exact = diff["low"] is not None and diff["low"] == diff["high"]  # e.g. no key unselectable, trained or random
        assert claim.get("power") or exact, f"{claim['id']}: no power stated"


@pytest.mark.parametrize("path", BOARDS, ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_unselectable_fraction_with_a_null_is_judged_against_it(path: Path) -> None:
    """A board that shows a random-key null beside an unselectable fraction judges the cell against it, and
    shows the null's standard error."""
    from normbench.judge.chance.rules import CELL_COLUMN

    doc = expand(json.loads(path.read_text(encoding="utf-8")))  # each null where it is shown, in either format
    judged = {(c["variants"]["trained"], c["metric"]) for c in doc.get("against_chance") or []}
    for variant in doc["variants"]:
        for metric, agg in (variant.get("metrics") or {}).items():
            chance = agg.get("chance") if isinstance(agg, dict) else None
            if chance and not chance["sanity_check"] and CELL_COLUMN.fullmatch(metric):
                assert (variant["name"], metric) in judged, f"{variant['name']} {metric}: not judged against chance"
                assert chance["sem"] is not None and "sets" in chance, f"{variant['name']} {metric}: no null SE"
