"""Stability claims, judged as their authors state them: over a range of learning rates, counting failed runs.

"Post-norm needs a warm-up" (Xiong et al. 2020) and "peri-norm trains more steadily than pre-norm" (Kim et al. 2025)
are claims about how often training fails as the learning rate grows, not about one run's loss at one rate. The
``stability`` rule reads a board that crosses its variants with a labelled learning-rate axis (``pre/both,lr=0.004``:
``rule.axis``, default ``lr``). For each role it counts, over every rate of the grid and every seed, the runs that
failed to train: diverged (a loss that is not finite) or flagged at chance or collapsed (the board's ``flagged``
seeds). With f_a of n_a runs failed for the role claimed less stable (``rule.less_stable``) and f_b of n_b for the
other, a one-sided Fisher exact test on the 2x2 table gives p = P(at least f_a | the margins): reproduced when
p < 0.05, not reproduced when the opposite one-sided test is significant, inconclusive otherwise (also when no run
of either failed: no rate of the grid made either fail, so it cannot tell them apart). Each rate's counts are on
the board.

Power: with n_a and n_b runs, the smallest failure rate of the role claimed less stable (the other never failing)
that the test finds with 80% power, P(p < 0.05) = sum over f of Binom(f; n_a, q) 1[Fisher p(f) < 0.05] >= 0.8.
It is a lower bound: where the other role fails too, only a larger rate is found.
"""

from __future__ import annotations

from scipy import stats as scipy_stats

from normbench.judge.choice import sort_key, split_name
from normbench.judge.entries import ClaimEntry, JudgedEntry
from normbench.judge.rows import VariantRow
from normbench.judge.verdicts.counting import entry_head, reasons

ALPHA = 0.05
POWER = 0.80


def failed_runs(variant: VariantRow) -> tuple[list[str], list[str]]:
    """A variant's seeds (as text) and those that failed to train: diverged, at chance or collapsed."""
    seeds = [str(s) for s in variant.get("seeds") or []]
    flagged = set(variant.get("flagged") or {}) | set(variant.get("diverged_at_step") or {})
    return seeds, [s for s in seeds if s in flagged]


def counts(base: str, axis: str, variants: dict[str, VariantRow]) -> dict[str, tuple[int, int]]:
    """Rate -> (failed runs, runs) of one base variant over the grid, rates in numeric order."""
    out: dict[str, tuple[int, int]] = {}
    for name, variant in variants.items():
        split = split_name(name, axis)
        if split is None or split[0] != base:
            continue
        seeds, failed = failed_runs(variant)
        out[split[1]] = (len(failed), len(seeds))
    return dict(sorted(out.items(), key=lambda kv: sort_key(kv[0])))


def detectable_failure_rate(na: int, nb: int, power: float = POWER, alpha: float = ALPHA) -> float | None:
    """The smallest failure rate q of ``na`` runs that the one-sided Fisher test finds against ``nb`` runs that never
    fail, with probability ``power`` (to 0.01; ``None`` when even q = 1 is not found: too few runs)."""
    if not na or not nb:
        return None
    significant = [f for f in range(na + 1) if scipy_stats.fisher_exact([[f, na - f], [0, nb]], "greater")[1] < alpha]
    if not significant:
        return None
    fewest = min(significant)  # p falls as f grows, so every f >= fewest is significant
    for hundredths in range(1, 101):
        q = hundredths / 100
        if float(scipy_stats.binom.sf(fewest - 1, na, q)) >= power:
            return q
    return None


def check_rule(claim: ClaimEntry) -> None:
    """One-line error unless the rule names one of the claim's two roles as ``less_stable``."""
    roles, rule = list(claim.get("variants") or {}), claim.get("rule") or {}
    if len(roles) != 2 or rule.get("less_stable") not in roles:
        raise ValueError(
            f"claim {claim.get('id')!r}: rule.less_stable must name one of its two roles, got "
            f"{rule.get('less_stable')!r} (roles: {', '.join(roles)})"
        )


def judge_stability(claim: ClaimEntry, variants: dict[str, VariantRow]) -> JudgedEntry:
    """The ``stability`` rule (see the module docstring) on a board's variants."""
    rule, roles = claim["rule"], claim["variants"]
    axis, worse = rule.get("axis", "lr"), rule["less_stable"]
    (other,) = [r for r in roles if r != worse]
    by_role = {role: counts(roles[role], axis, variants) for role in roles}
    totals = {role: (sum(f for f, _ in c.values()), sum(n for _, n in c.values())) for role, c in by_role.items()}
    grid = "; ".join(
        f"{axis}={value}: "
        + ", ".join(f"{r} {by_role[r][value][0]}/{by_role[r][value][1]}" for r in roles if value in by_role[r])
        for value in sorted({v for c in by_role.values() for v in c}, key=sort_key)
    )
    entry: JudgedEntry = {
        **entry_head(claim),
        "variants": roles,
        "measured": {role: (f / n if n else None) for role, (f, n) in totals.items()},
        "failures": {
            role: {value: {"failed": f, "runs": n} for value, (f, n) in c.items()} for role, c in by_role.items()
        },
    }
    entry.update(reasons(claim))
    (fa, na), (fb, nb) = totals[worse], totals[other]
    if not na or not nb:
        missing = [role for role, (_, n) in totals.items() if not n]
        return {
            **entry,
            "verdict": "not run",
            "rule": f"no run of {', '.join(missing)} on the {axis} grid",
        }
    table = [[fa, na - fa], [fb, nb - fb]]
    p_more = float(scipy_stats.fisher_exact(table, alternative="greater")[1])
    p_less = float(scipy_stats.fisher_exact(table, alternative="less")[1])
    verdict = "reproduced" if p_more < ALPHA else "not reproduced" if p_less < ALPHA else "inconclusive"
    detectable = detectable_failure_rate(na, nb)
    entry["power"] = {"detectable": detectable, "level": POWER, "of": "failure rate"}
    found = (
        f"with {na} and {nb} runs, a failure rate of {detectable:.2g} in {worse} is found with {POWER:.0%} power "
        f"if {other} never fails (more if it does)"
        if detectable is not None
        else f"{na} and {nb} runs are too few for the test to find any failure rate"
    )
    none_failed = (
        "; no run of either failed at any rate of this grid, so it cannot tell them apart" if not fa + fb else ""
    )
    entry["explanation"] = (
        f"failed runs (diverged, at chance or collapsed) over {len({v for c in by_role.values() for v in c})} "
        f"values of {axis}: {worse} {fa} of {na}, {other} {fb} of {nb}{none_failed}; {found}; {grid}"
    )
    return {
        **entry,
        "verdict": verdict,
        "rule": (
            f"stability: {worse} fails more often than {other} over the {axis} grid (one-sided Fisher exact test, "
            f"p = {p_more:.2g}; the reverse p = {p_less:.2g}): reproduced if p < {ALPHA}, not reproduced if the "
            f"reverse is, inconclusive otherwise"
        ),
    }
