"""The ``positive_zero`` rule: ``positive`` above 0 and ``zero`` exactly 0 in every seed (two at least), and the
difference significant over seeds; direction only where the difference is but ``zero`` is not always 0."""

from __future__ import annotations

from normbench.judge.entries import Rule
from normbench.judge.rules.ordering import ordering_verdict
from normbench.judge.stats import Interval, difference_interval, values_of


def judge_positive_zero(rule: Rule, per_seed: dict[str, list[float | None]]) -> tuple[str, str, Interval | None]:
    """``positive`` role above 0 and ``zero`` role exactly 0, in every seed of at least two."""
    pos, zero = rule["positive"], rule["zero"]
    text = (
        f"reproduced if {pos} > 0 and {zero} = 0 exactly in every seed (at least 2 seeds each) and {pos} > {zero} "
        f"significantly; "
        f"direction only if {pos} > {zero} significantly but {zero} is not always 0; inconclusive with one "
        f"seed or no significant difference; not reproduced otherwise"
    )
    a, b = values_of(per_seed.get(pos)), values_of(per_seed.get(zero))
    if not a or not b:
        return "not run", text + " (a measured value is missing)", None
    diff = difference_interval(a, b, (pos, zero))
    if min(len(a), len(b)) < 2:
        return "inconclusive", text + " (one seed)", diff
    if all(v > 0 for v in a) and all(v == 0 for v in b):
        return (ordering_verdict(diff, +1) or "reproduced"), text, diff
    forced = ordering_verdict(diff, +1)
    return (forced or "direction only"), text, diff
