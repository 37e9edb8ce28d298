"""The ``equivalence`` rule: "as good as" (a TOST, |delta| < m) or "no worse than" (one-sided, delta > -m or
delta < m), delta = mean(candidate) − mean(reference), the margin m declared with its reason (``margin_why``)."""

from __future__ import annotations

from normbench.judge.entries import ClaimEntry, Rule
from normbench.judge.stats import EquivalenceDoc, Interval, difference_equivalence, difference_interval, values_of


def check_rule(claim: ClaimEntry) -> None:
    """One-line errors unless the rule names one of the claim's two roles as ``reference``, ``better`` is higher,
    lower or absent, and ``margin`` is a positive number with its reason in ``margin_why``."""
    cid, rule = claim.get("id"), claim.get("rule") or {}
    roles = list(claim.get("variants") or {})
    if len(roles) != 2 or rule.get("reference") not in roles:
        raise ValueError(
            f"claim {cid!r}: rule.reference must name one of its two roles, "
            f"got {rule.get('reference')!r} (roles: {', '.join(roles)})"
        )
    if rule.get("better") not in (None, "higher", "lower"):
        raise ValueError(f"claim {cid!r}: rule.better must be higher or lower, got {rule['better']!r}")
    if not isinstance(rule.get("margin"), (int, float)) or not rule["margin"] > 0 or not rule.get("margin_why"):
        raise ValueError(f"claim {cid!r}: rule.margin must be a positive number with its reason in rule.margin_why")


def judge_equivalence(
    rule: Rule, per_seed: dict[str, list[float | None]]
) -> tuple[str, str, Interval | None, EquivalenceDoc | None]:
    """ "As good as" (``better`` absent: TOST, |delta| < m) or "no worse than" (``better: higher``:
    delta > -m; ``lower``: delta < m), delta = mean(candidate) − mean(reference), margin m = ``margin``.

    Reproduced when the 90% Welch interval of delta shows it (:func:`~normbench.judge.stats.tost`);
    not reproduced when that interval lies wholly beyond the margin on a side tested; else inconclusive.
    """
    ref, better, margin = rule["reference"], rule.get("better"), float(rule["margin"])
    cand = next(r for r in per_seed if r != ref)
    sides = {None: "both", "higher": "lower", "lower": "upper"}[better]
    shown = {
        "both": f"-{margin:g} < delta < {margin:g}",
        "lower": f"delta > -{margin:g}",
        "upper": f"delta < {margin:g}",
    }[sides]
    text = (
        f"delta = mean({cand}) − mean({ref}); margin {margin:g} ({rule['margin_why']}); reproduced if a "
        f"{'TOST' if sides == 'both' else 'one-sided test'} at 5% shows {shown} (the 90% Welch interval of delta "
        f"inside the margin); not reproduced if that interval lies wholly beyond the margin; inconclusive otherwise"
    )
    a, b = values_of(per_seed.get(cand)), values_of(per_seed.get(ref))
    if not a or not b or len(a) < len(per_seed.get(cand) or []) or len(b) < len(per_seed.get(ref) or []):
        return "not run", text + " (a measured value is missing)", None, None
    test = difference_equivalence(a, b, margin, sides, (cand, ref))
    diff = difference_interval(a, b, (cand, ref))
    if test is None or min(len(a), len(b)) < 2:
        return "inconclusive", text + " (fewer than two seeds on a side)", diff, None
    verdict = "reproduced" if test.shown else "not reproduced" if test.refuted else "inconclusive"
    return verdict, text, diff, test.as_dict()
