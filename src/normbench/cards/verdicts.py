"""A card's verdicts as a paper's table reads them: from its two tests against a baseline on one metric (the TOST
equivalence within ± the margin, the 95% Welch ordering), the new norm is equivalent, better, worse or undecided,
said with new − baseline and its 95% interval."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from normbench.judge.entries import JudgedEntry, Provisional
from normbench.judge.stats import EquivalenceDoc, IntervalDoc

#: the published variants a card compares its norm with
BASELINES = ("layernorm", "rmsnorm")
VERDICT_WORDS = ("better", "equivalent", "worse", "undecided", "not run")


class Comparison(TypedDict):
    """The new norm against one baseline on one metric (``card.json``: ``tasks[].comparisons[metric][baseline]``).

    ``verdict``: one of :data:`VERDICT_WORDS`; ``difference``: new − baseline with its 95% Welch interval (the
    equivalence test's ``difference``); ``equivalence``: the TOST (its 90% ``interval``) and ``margin``, its margin;
    ``significant``: ``better`` or ``worse`` where the ordering is, else ``None``; ``on_margin``: the equivalence is
    borderline; ``provisional``: ``{finished, declared}`` where either test was judged on fewer seeds than declared.
    """

    verdict: str
    difference: IntervalDoc | None
    equivalence: EquivalenceDoc | None
    margin: float | None
    significant: str | None
    on_margin: bool
    provisional: Provisional | None


def compare(equivalence: JudgedEntry, ordering: JudgedEntry) -> Comparison:
    """The new norm against one baseline on one metric, as a paper's table reads it, from the card's two tests (each
    judged by :func:`normbench.judge.claims.judge`): ``equivalent`` where the TOST puts the difference of seed
    means within the margin; else ``better`` or ``worse`` where the 95% Welch interval of the difference lies on
    that side of 0; else ``undecided`` (an equivalence on its margin too); ``not run`` where either test is. Returns
    ``{verdict, difference (new − baseline, 95% interval), equivalence (its 90% interval and margin), significant
    (better/worse/None: the ordering, also beside an equivalence), provisional}``."""
    eq, order = equivalence["verdict"], ordering["verdict"]
    significant = {"reproduced": "better", "not reproduced": "worse"}.get(order)
    if "not run" in (eq, order):
        verdict = "not run"
    elif eq == "reproduced":
        verdict = "equivalent"
    else:
        verdict = significant or "undecided"
    return {
        "verdict": verdict,
        "difference": equivalence.get("difference"),
        "equivalence": equivalence.get("equivalence"),
        "margin": equivalence.get("margin"),
        "significant": significant,
        "on_margin": eq == "borderline",
        "provisional": equivalence.get("provisional") or ordering.get("provisional"),
    }


def comparisons(claims: Sequence[JudgedEntry]) -> dict[str, dict[str, Comparison]]:
    """Metric -> baseline -> :func:`compare` of the card's two tests there."""
    by = {(c["metric"], c["id"].rpartition(".")[2]): c for c in claims}
    metrics = list(dict.fromkeys(c["metric"] for c in claims))
    return {
        m: {
            key: compare(by[m, f"matches_{key}"], by[m, f"beats_{key}"])
            for key in BASELINES
            if (m, f"matches_{key}") in by
        }
        for m in metrics
    }


def interval_text(diff: IntervalDoc | None) -> str:
    """``+0.061 [+0.045, +0.077]``: new − baseline with its 95% Welch interval (``""`` without one)."""
    if not diff or diff.get("estimate") is None:
        return ""
    if diff.get("low") is None:
        return f"{diff['estimate']:+.3g}"
    return f"{diff['estimate']:+.3g} [{diff['low']:+.3g}, {diff['high']:+.3g}]"


def verdict_text(c: Comparison) -> str:
    """A comparison as the card's tables say it: ``better (+0.061 [+0.045, +0.077])``, ``equivalent (...; better
    by less than the margin)``, ``undecided (..., on the margin)``; a provisional one is never said as final:
    ``provisional: better so far, 2 of 3 seeds (...)``."""
    words = [interval_text(c.get("difference"))]
    if c["verdict"] == "equivalent" and c.get("significant"):
        words.append(f"{c['significant']} by less than the margin")
    if c.get("on_margin"):
        words.append("on the margin")
    inner = "; ".join(w for w in words if w)
    head = c["verdict"]
    p = c.get("provisional")
    if p and head != "not run":
        head = f"provisional: {head} so far, {p['finished']} of {p['declared']} seeds"
    return f"{head} ({inner})" if inner else head
