"""The claim rules by kind: a new rule is one function and one entry. ``SEED_RULES`` are judged on the roles'
per-seed values (rule, claim, per_seed, bounds, measured, seeds -> verdict, rule text, difference, extra fields of
the entry), ``CLAIM_RULES`` read the variants themselves (claim, variants -> judged entry), ``RULE_CHECKS`` are a
rule's own checks of a claim as written (one-line errors)."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from normbench.judge.chance.rules import judge_chance, judge_chance_growth
from normbench.judge.entries import ClaimEntry, JudgedEntry, Rule
from normbench.judge.rows import VariantRow
from normbench.judge.rules import equivalence, stability, values
from normbench.judge.rules.all_zero import judge_all_zero
from normbench.judge.rules.attention_feed import judge_attention_feed
from normbench.judge.rules.equivalence import judge_equivalence
from normbench.judge.rules.ordering import judge_ordering
from normbench.judge.rules.positive_zero import judge_positive_zero
from normbench.judge.rules.ratio import judge_ratio
from normbench.judge.rules.stability import judge_stability
from normbench.judge.rules.values import judge_values
from normbench.judge.stats import Interval

PerSeed = dict[str, list[float | None]]  # role -> per-seed values
Measured = dict[str, float | None]  # role -> mean over the counted seeds
SeedIds = dict[str, list[int]]  # role -> the counted seeds
Judged = tuple[str, str, Interval | None, JudgedEntry]  # verdict, rule text, difference, extra fields of the entry
SeedRule = Callable[[Rule, ClaimEntry, PerSeed, PerSeed, Measured, SeedIds], Judged]


def _values(
    rule: Rule, claim: ClaimEntry, per_seed: PerSeed, bounds: PerSeed, measured: Measured, seeds: SeedIds
) -> Judged:
    paper = cast("dict[str, float]", claim["paper"])  # a values claim gives the paper's number of every role
    verdict, text, diff, gaps = judge_values(rule, paper, per_seed)
    return verdict, text, diff, {"gap_to_paper": gaps}


def _ratio(
    rule: Rule, claim: ClaimEntry, per_seed: PerSeed, bounds: PerSeed, measured: Measured, seeds: SeedIds
) -> Judged:
    found: JudgedEntry = {}
    verdict, text, ratio, diff = judge_ratio(rule, per_seed, bounds, seeds, found)
    return verdict, text, diff, {"measured": {**measured, "ratio": ratio}, **found}


def _ordering(
    rule: Rule, claim: ClaimEntry, per_seed: PerSeed, bounds: PerSeed, measured: Measured, seeds: SeedIds
) -> Judged:
    found: JudgedEntry = {}
    verdict, text, diff = judge_ordering(rule, per_seed, bounds, seeds, found)
    return verdict, text, diff, found


def _positive_zero(
    rule: Rule, claim: ClaimEntry, per_seed: PerSeed, bounds: PerSeed, measured: Measured, seeds: SeedIds
) -> Judged:
    return (*judge_positive_zero(rule, per_seed), {})


def _equivalence(
    rule: Rule, claim: ClaimEntry, per_seed: PerSeed, bounds: PerSeed, measured: Measured, seeds: SeedIds
) -> Judged:
    verdict, text, diff, test = judge_equivalence(rule, per_seed)
    return verdict, text, diff, {"margin": float(rule["margin"]), "equivalence": test}


# rules judged on the roles' per-seed values: (rule, claim, per_seed, bounds, measured, seeds) -> Judged
SEED_RULES: dict[str, SeedRule] = {
    "values": _values,
    "ratio": _ratio,
    "ordering": _ordering,
    "positive_zero": _positive_zero,
    "equivalence": _equivalence,
}
# rules that read the variants themselves: (claim, variants) -> judged entry
CLAIM_RULES: dict[str, Callable[[ClaimEntry, dict[str, VariantRow]], JudgedEntry]] = {
    "all_zero": judge_all_zero,
    "attention_feed": judge_attention_feed,
    "chance": judge_chance,
    "chance_growth": judge_chance_growth,
    "stability": judge_stability,
}
# a rule's own checks of a claim as written: (claim) -> None, or a one-line error
RULE_CHECKS: dict[str, Callable[[ClaimEntry], None]] = {
    "stability": stability.check_rule,
    "equivalence": equivalence.check_rule,
    "values": values.check_rule,
}
# grid: a random-grid board's rule (:func:`normbench.judge.rules.grid.judge_grid`)
RULE_KINDS = (*SEED_RULES, *CLAIM_RULES, "grid")
