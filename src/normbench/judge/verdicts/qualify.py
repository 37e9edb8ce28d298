"""What a verdict may say, given its statistics: applied by :func:`~normbench.judge.claims.judge`.

* **No difference claim is reproduced while its 95% interval includes 0.** A rule that counts seeds ("> 0 in
  every seed") is a description, not a test: the difference must be significant as well, or the verdict is
  ``inconclusive``.
* **Power.** Every claim with a difference of means states the smallest difference its seeds could have detected:
  the minimum detectable effect of a two-sided Welch test at 5% with 80% power,
  MDE = (t_{0.975, df} + t_{0.80, df}) · SE, with SE and df of the difference's interval; and which way the point
  estimate leans (with the claim or against it), which an inconclusive verdict says in words.
* **Borderline.** An equivalence verdict whose 90% interval ends within the metric's declared cross-platform
  tolerance of its margin (:func:`normbench.training.reproducibility.tolerance`) could flip on another platform:
  it is ``borderline``, whichever side it fell on.
* **Margins are declared before the runs.** Every equivalence margin is registered with its claim id in
  ``normbench/judge/margins.yaml``; a margin changed under the same id fails a test, and a margin registered
  after its runs were trained says so on the board (the verdict is then exploratory).
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import TypedDict, cast

from scipy import stats as scipy_stats

from normbench.io import read_yaml
from normbench.judge.entries import ClaimEntry, JudgedEntry, Power, Rule
from normbench.judge.stats import EquivalenceDoc, IntervalDoc
from normbench.training.reproducibility import tolerance

POWER = 0.80
ALPHA = 0.05
MARGINS = "margins.yaml"


class MarginRegistration(TypedDict, total=False):
    """One registration of an equivalence margin in ``margins.yaml``: the ``claims`` file that declares it, the
    ``margin`` and when it was ``declared`` (``before the runs`` or ``after the runs``)."""

    claims: str
    margin: float
    declared: str


def detectable_effect(diff: IntervalDoc | None) -> float | None:
    """The minimum detectable effect (MDE) of a difference's interval: (t_{1-α/2, df} + t_{power, df}) · SE, where
    SE = (high − estimate) / t_{1-α/2, df} (the 95% Welch interval); ``None`` without an interval."""
    if not diff or diff.get("low") is None or diff.get("high") is None or not diff.get("df"):
        return None
    df = float(cast(float, diff["df"]))  # checked above, as is high
    t_alpha = float(scipy_stats.t.ppf(1 - ALPHA / 2, df))
    se = (float(cast(float, diff["high"])) - float(diff["estimate"])) / t_alpha
    return (t_alpha + float(scipy_stats.t.ppf(POWER, df))) * se


def expected_sign(rule: Rule) -> int | None:
    """The sign the claim expects of its difference's estimate (first role − second), ``None`` for a rule without
    one (equivalence: inside the margin, not a sign)."""
    kind = rule.get("kind")
    if kind in ("values", "positive_zero", "chance", "chance_growth"):
        return +1
    if kind == "ordering":
        return -1
    if kind == "ratio":
        return +1 if float(rule["target"]) > 1 else -1
    return None


def leaning(entry: JudgedEntry, rule: Rule) -> str | None:
    """``with the claim`` or ``against the claim``: where the point estimate lies, significant or not."""
    diff = entry.get("difference")
    if not diff or diff.get("estimate") is None:
        return None
    estimate = float(diff["estimate"])
    if rule.get("kind") == "equivalence":
        margin = float(rule["margin"])
        inside = {None: abs(estimate) < margin, "higher": estimate > -margin, "lower": estimate < margin}
        return "with the claim" if inside[rule.get("better")] else "against the claim"
    sign = expected_sign(rule)
    if sign is None or estimate == 0:
        return None
    return "with the claim" if (estimate > 0) == (sign > 0) else "against the claim"


def margin_edge_distance(test: EquivalenceDoc | None) -> float | None:
    """How far the 90% interval's edge on a tested side lies from the margin (the smallest such distance)."""
    if not test:
        return None
    interval, margin, sides = test["interval"], float(test["margin"]), test["sides"]
    if interval.get("low") is None or interval.get("high") is None:
        return None
    low, high = float(cast(float, interval["low"])), float(cast(float, interval["high"]))  # checked above
    edges = {
        "both": [abs(low + margin), abs(margin - high)],
        "lower": [abs(low + margin)],
        "upper": [abs(margin - high)],
    }
    return min(edges[sides])


@functools.cache
def registered_margins() -> dict[str, list[MarginRegistration]]:
    """``normbench/judge/margins.yaml``: claim id -> its registrations ({claims file, margin, declared}); one
    id may be declared in several claims files, each with its own metric and margin."""
    doc = read_yaml(resources.files("normbench.judge") / MARGINS) or {}
    return {str(k): list(v or []) for k, v in (doc.get("margins") or {}).items()}


def margin_registration(claim_id: str, margin: float) -> MarginRegistration | None:
    """The registration of ``claim_id`` with this ``margin`` (``None``: not registered, which a test forbids)."""
    return next((r for r in registered_margins().get(claim_id, []) if float(r["margin"]) == margin), None)


def qualify(entry: JudgedEntry, claim: ClaimEntry) -> JudgedEntry:
    """``entry`` (a judged claim) with the rules above applied: its verdict no stronger than its statistics, its
    power and leaning stated, borderline equivalences marked, and a margin declared after its runs named."""
    rule = claim.get("rule") or {}
    diff = entry.get("difference")
    out = entry.copy()
    verdict = out["verdict"]
    if verdict == "reproduced" and rule.get("kind") != "equivalence" and diff and diff.get("estimate") is not None:
        low, high = diff.get("low"), diff.get("high")
        if low is None or high is None or low <= 0 <= high:
            verdict = "inconclusive"
            out["rule"] = out["rule"] + "; reproduced only when the 95% interval of the difference excludes 0"
    power: Power = {"detectable": detectable_effect(diff), "leaning": leaning(out, rule), "level": POWER}
    if power["detectable"] is not None or power["leaning"] is not None:
        out["power"] = power
    if rule.get("kind") == "equivalence" and verdict in ("reproduced", "not reproduced"):
        distance = margin_edge_distance(out.get("equivalence"))
        metric = str(entry.get("metric", ""))
        tol = tolerance(metric)
        allowed = tol.abs + tol.rel * abs(float((diff or {}).get("estimate") or 0.0))
        role = cast(str, rule.get("reference"))  # an equivalence names its reference role (its check_rule)
        reference = (entry.get("measured") or {}).get(role)
        if tol.rel and isinstance(reference, (int, float)):
            allowed = tol.abs + tol.rel * abs(float(reference))
        if distance is not None and distance <= allowed:
            out["borderline"] = {"was": verdict, "distance": distance, "tolerance": allowed}
            verdict = "borderline"
    if rule.get("kind") == "equivalence":
        registered = margin_registration(str(claim["id"]), float(rule["margin"])) or {}
        if registered.get("declared") == "after the runs":
            out["margin_declared"] = "after the runs"
    out["verdict"] = verdict
    return out
