"""A card's verdicts as a paper's table reads them (normbench.cards.verdicts.compare): better, equivalent, worse or
undecided, each with the interval of new − baseline; provisional where seeds the card declares have not finished."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normbench.cards.verdicts import compare, verdict_text

RESULTS = Path(__file__).resolve().parents[2] / "results"
CARDS = sorted((RESULTS / "cards").glob("*/card.json"))


def judged(verdict: str, estimate: float = 0.05, low: float = 0.03, high: float = 0.07, **extra) -> dict:
    diff = {"estimate": estimate, "low": low, "high": high, "of": ["new", "layernorm"]}
    return {"verdict": verdict, "difference": diff, "margin": 0.01, **extra}


@pytest.mark.parametrize(
    ("equivalence", "ordering", "word"),
    [
        ("not reproduced", "reproduced", "better"),  # beyond the margin, on the better side: not "matches: no"
        ("not reproduced", "not reproduced", "worse"),
        ("reproduced", "inconclusive", "equivalent"),
        ("reproduced", "reproduced", "equivalent"),  # better, by less than the margin
        ("inconclusive", "inconclusive", "undecided"),
        ("borderline", "inconclusive", "undecided"),
        ("not run", "not run", "not run"),
    ],
)
def test_the_two_tests_read_as_one_verdict(equivalence: str, ordering: str, word: str) -> None:
    c = compare(judged(equivalence), judged(ordering))
    assert c["verdict"] == word
    text = verdict_text(c)
    assert text.startswith(word)
    if word != "not run":
        assert "(+0.05 [+0.03, +0.07]" in text  # the interval of new − baseline beside every verdict


def test_an_equivalence_says_a_significant_difference_within_the_margin() -> None:
    text = verdict_text(compare(judged("reproduced"), judged("reproduced")))
    assert text == "equivalent (+0.05 [+0.03, +0.07]; better by less than the margin)"
    assert "on the margin" in verdict_text(compare(judged("borderline"), judged("inconclusive")))


def test_a_verdict_before_its_seeds_is_said_provisional() -> None:
    provisional = {"finished": 3, "declared": 5}
    c = compare(judged("not reproduced", provisional=provisional), judged("reproduced", provisional=provisional))
    assert c["verdict"] == "better" and c["provisional"] == provisional
    assert verdict_text(c) == "provisional: better so far, 3 of 5 seeds (+0.05 [+0.03, +0.07])"


@pytest.mark.parametrize("path", CARDS, ids=lambda p: p.parent.name)
def test_published_cards_say_better_equivalent_worse_or_undecided(path: Path) -> None:
    card = json.loads(path.read_text(encoding="utf-8"))
    md = path.with_suffix(".md").read_text(encoding="utf-8")
    assert "matches no" not in md and "beats yes" not in md and "**not reproduced**" not in md
    for t in card["tasks"]:
        for per in (t.get("comparisons") or {}).values():
            for c in per.values():
                assert c["verdict"] in ("better", "equivalent", "worse", "undecided", "not run")
    words = ("better", "equivalent", "worse", "undecided", "provisional: ", "not run", "not judged yet", "–")
    for row in card["summary"]:
        for key in ("vs_layernorm", "vs_rmsnorm"):
            assert key not in row or row[key].startswith(words), row[key]


def test_the_pnorm_card_says_better_where_it_wins_beyond_the_margin() -> None:
    card = json.loads((RESULTS / "cards" / "pnorm" / "card.json").read_text(encoding="utf-8"))
    row = next(r for r in card["summary"] if r["task"] == "majority" and r.get("lr") == "tuned"
               and r["metric"] == "test_acc@1000")  # fmt: skip
    assert row["vs_layernorm"].startswith("better (+0.0615 [+0.0463, +0.0766])")  # was "matches no, beats yes"
