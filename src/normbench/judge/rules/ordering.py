"""The ``ordering`` rule, and the significance every ordering needs: the 95% Welch interval of the difference of
the seed means excludes 0 (:func:`ordering_verdict`, read by the ``values``, ``ratio`` and ``positive_zero`` rules
too); a reversal that is significant is not reproduced, any other difference inconclusive."""

from __future__ import annotations

from normbench.judge.entries import JudgedEntry, Rule
from normbench.judge.rules.censored import censored_entry, censored_seeds, censored_text
from normbench.judge.stats import Interval, difference_interval, values_of

SIGNIFICANCE = (
    "the ordering counts only when the 95% Welch interval of the difference of the seed means "
    "excludes 0; otherwise inconclusive"
)


def ordering_verdict(diff: Interval | None, sign: int) -> str | None:
    """``None`` if the ordering (``sign`` = +1: first > second) is significant, else the verdict it forces."""
    if diff is None or not diff.excludes_zero():
        return "inconclusive"
    return None if (diff.estimate > 0) == (sign > 0) else "not reproduced"


def judge_ordering(
    rule: Rule,
    per_seed: dict[str, list[float | None]],
    bounds: dict[str, list[float | None]] | None = None,
    seeds: dict[str, list[int]] | None = None,
    found: JudgedEntry | None = None,
) -> tuple[str, str, Interval | None]:
    """``lower`` role below the other, significantly over seeds. Every seed of ``lower`` needs a value; a seed of
    the other role that never reached a threshold is censored at its last step: the verdict is judged on the seeds
    that reached it (which can only understate how much higher it is), and a reversal there decides nothing
    (inconclusive); the interval with the censored seeds at their last steps is shown beside it (``found``)."""
    bounds = bounds or {}
    lower = rule["lower"]
    other = next(r for r in per_seed if r != lower)
    text = f"reproduced if {lower} < {other} significantly; not reproduced if significantly reversed; {SIGNIFICANCE}"
    a, b = values_of(per_seed.get(lower)), values_of(per_seed.get(other))
    if not a or len(a) < len(per_seed.get(lower) or []):
        return "not run", text + " (a measured value is missing)", None
    if len(b) < len(per_seed.get(other) or []):  # seeds that never reached a threshold: censored
        bound = values_of(bounds.get(other))
        if len(bound) < len(per_seed.get(other) or []):
            return "not run", text + " (a measured value is missing)", None
        censored = censored_seeds(other, per_seed, bounds, seeds)
        with_censored = difference_interval(a, bound, (lower, other))
        text += censored_text(other, censored, len(b), with_censored)
        if found is not None:
            found["censored"] = censored_entry(other, censored, len(b), with_censored)
        diff = difference_interval(a, b, (lower, other)) if len(b) >= 2 else None
        return ("reproduced" if ordering_verdict(diff, -1) is None else "inconclusive"), text, diff
    if not b:
        return "not run", text + " (a measured value is missing)", None
    diff = difference_interval(a, b, (lower, other))
    return (ordering_verdict(diff, -1) or "reproduced"), text, diff
