"""The ``ratio`` rule: r = mean steps of ``numerator`` / mean steps of ``denominator``, against the paper's target.

Reproduced when |r − target| <= tolerance and the ordering (the numerator's steps above the denominator's for a
target > 1, below for one < 1) is significant over seeds; direction only when only the ordering is. A numerator seed
that never reached the threshold is censored at its last step (:mod:`normbench.judge.rules.censored`)."""

from __future__ import annotations

import statistics

from normbench.judge.entries import JudgedEntry, Rule
from normbench.judge.rules.censored import censored_entry, censored_seeds, censored_text
from normbench.judge.rules.ordering import SIGNIFICANCE, ordering_verdict
from normbench.judge.stats import Interval, difference_interval, values_of


def judge_ratio(
    rule: Rule,
    per_seed: dict[str, list[float | None]],
    bounds: dict[str, list[float | None]],
    seeds: dict[str, list[int]] | None = None,
    found: JudgedEntry | None = None,
) -> tuple[str, str, float | None, Interval | None]:
    """Ratio of mean step counts. A numerator seed that never reached the target is censored at its last step: the
    verdict is judged on the seeds that reached it (which can only understate a numerator > denominator), and the
    interval with the censored seeds at their last steps (lower bounds) is shown beside it, never judged (``found``
    gets ``censored``: the seeds, how they were counted and that interval)."""
    num, den, target, tol = rule["numerator"], rule["denominator"], float(rule["target"]), float(rule["tolerance"])
    text = (
        f"r = {num} / {den} (mean steps); reproduced if |r - {target:g}| <= {tol:g} and the ordering is "
        f"significant; direction only if only the ordering is; {SIGNIFICANCE}"
    )
    den_steps = values_of(per_seed.get(den))
    if not den_steps or len(den_steps) < len(per_seed.get(den) or []):
        return "not run", text + f" ({den} never reached the target within the run)", None, None
    num_steps = values_of(per_seed.get(num))
    complete = bool(num_steps) and len(num_steps) == len(per_seed.get(num) or [])
    if not complete:  # censored seeds: judged on the seeds that reached it, the lower bounds shown beside
        lower = values_of(bounds.get(num))
        if not lower or len(lower) < len(per_seed.get(num) or []):
            return "not run", text + f" ({num} missing in some seed)", None, None
        censored = censored_seeds(num, per_seed, bounds, seeds)
        with_censored = difference_interval(lower, den_steps, (num, den))
        diff = difference_interval(num_steps, den_steps, (num, den)) if len(num_steps) >= 2 else None
        r_low = statistics.fmean(lower) / statistics.fmean(den_steps)
        over = f"r = {statistics.fmean(num_steps) / statistics.fmean(den_steps):.3g} over them; " if num_steps else ""
        text += censored_text(num, censored, len(num_steps), with_censored)
        text += f" ({over}r > {r_low:.3g} with the censored seeds at their last steps, a lower bound)"
        if found is not None:
            found["censored"] = censored_entry(num, censored, len(num_steps), with_censored)
        # only the numerator significantly larger on the seeds that reached it can be said; anything else is open
        shows_larger = diff is not None and diff.excludes_zero() and diff.estimate > 0
        return ("direction only" if target > 1 and shows_larger else "inconclusive"), text, None, diff
    diff = difference_interval(num_steps, den_steps, (num, den))
    sign = 1 if target > 1 else -1
    forced = ordering_verdict(diff, sign)
    r = statistics.fmean(num_steps) / statistics.fmean(den_steps)
    if forced:
        return forced, text, r, diff
    return ("reproduced" if abs(r - target) <= tol else "direction only"), text, r, diff
