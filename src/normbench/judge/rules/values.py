"""The ``values`` rule: the paper's numbers, their ordering significant over seeds and each matched.

Reproduced when ``higher`` lies above the other role significantly
(:func:`~normbench.judge.rules.ordering.ordering_verdict`) and a one-sample TOST shows each role's mean within the
declared tolerance m of the paper's value (its 90% interval inside paper ± m); roles in ``exact`` equal the paper's
value in every seed. Direction only when only the ordering holds."""

from __future__ import annotations

from normbench.judge.entries import ClaimEntry, Rule
from normbench.judge.rules.ordering import SIGNIFICANCE, ordering_verdict
from normbench.judge.stats import GapDoc, Interval, difference_interval, gap, target_equivalence, values_of


def check_rule(claim: ClaimEntry) -> None:
    """One-line error unless the rule declares the equivalence margin around each paper value (``tolerance`` or
    ``rel_tolerance``, positive) or names the roles that must equal it (``exact``)."""
    rule = claim.get("rule") or {}
    if "exact" not in rule and not (rule.get("tolerance") or rule.get("rel_tolerance")):
        raise ValueError(
            f"claim {claim.get('id')!r}: rule.tolerance (or rel_tolerance) must be positive: the equivalence margin "
            f"around each paper value"
        )


def judge_values(
    rule: Rule, paper: dict[str, float], per_seed: dict[str, list[float | None]]
) -> tuple[str, str, Interval | None, dict[str, GapDoc | None]]:
    """Significant ordering, then each paper value matched: a one-sample TOST shows the role's mean
    within the tolerance m of the paper's value (its 90% interval inside paper ± m; ``tolerance``
    absolute, ``rel_tolerance`` a fraction of the paper's value); roles in ``exact`` must equal the
    paper's value in every seed. Also returns each role's gap to the paper, mean − paper with its
    95% interval."""
    higher = rule["higher"]
    lower = next(r for r in paper if r != higher)
    exact = list(rule.get("exact") or [])
    if "rel_tolerance" in rule:
        bound = {r: float(rule["rel_tolerance"]) * abs(paper[r]) for r in paper}
        how = f"±{float(rule['rel_tolerance']):.0%} of it"
    else:
        bound = {r: float(rule.get("tolerance") or 0.0) for r in paper}
        how = f"±{float(rule.get('tolerance') or 0.0):g}"
    matched = [r for r in paper if r not in exact and bound[r] > 0]
    unmatched = [r for r in paper if r not in exact and bound[r] <= 0]
    text = (
        f"reproduced if {higher} > {lower} significantly"
        + "".join(f", {r} equals the paper's {paper[r]:g} in every seed" for r in exact)
        + (
            f" and a TOST shows each {'other ' if exact else ''}mean within {how} of the paper's value (its 90% "
            f"interval inside paper {how})"
            if matched
            else ""
        )
        + (
            f" ({', '.join(unmatched)}: no tolerance declared, so the paper's value is shown beside the measured "
            f"one, never matched)"
            if unmatched
            else ""
        )
        + f"; direction only if only the ordering is significant; not reproduced if significantly reversed; "
        f"{SIGNIFICANCE}"
    )
    samples = {r: values_of(per_seed.get(r)) for r in paper}
    gaps = {r: gap(samples[r], paper[r]) for r in paper}
    if any(not samples[r] or len(samples[r]) < len(per_seed.get(r) or []) for r in paper):
        return "not run", text + " (a measured value is missing)", None, gaps
    diff = difference_interval(samples[higher], samples[lower], (higher, lower))
    forced = ordering_verdict(diff, +1)
    if forced:
        return forced, text, diff, gaps

    def close(role: str) -> bool:
        if role in exact:
            return all(v == paper[role] for v in samples[role])
        if bound[role] <= 0:
            return False
        test = target_equivalence(samples[role], paper[role], bound[role])
        return test is not None and test.shown

    return ("reproduced" if all(close(r) for r in paper) else "direction only"), text, diff, gaps
