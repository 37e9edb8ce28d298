"""A claim as its claims file writes it (:class:`ClaimEntry`, :class:`normbench.archive.ClaimSpec`'s keys) and as a
board stores it judged (:class:`JudgedEntry`, :class:`normbench.archive.JudgedClaim`'s keys), with the parts of a
judged claim: the statistics every rule, :mod:`normbench.judge.verdicts.qualify`,
:mod:`normbench.judge.chance.rules` and :func:`normbench.judge.claims.judge` add to it. Keys as the files name them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict, cast

from normbench.judge.stats import EquivalenceDoc, GapDoc, IntervalDoc


class Rule(TypedDict, total=False):
    """How a claim is judged: its ``kind`` (:data:`normbench.judge.rules.registry.RULE_KINDS`) and that kind's
    parameters, each read by its rule's module.

    values: ``higher`` (the role above the other), ``tolerance`` or ``rel_tolerance`` (the margin around each paper
        value), ``exact`` (roles equal to the paper's value in every seed).
    ratio: ``numerator``, ``denominator`` (roles), the ``target`` ratio and its ``tolerance``.
    ordering: ``lower`` (the role below the other). positive_zero: the ``positive`` and the ``zero`` role.
    equivalence: the ``reference`` role, ``better`` (``higher``, ``lower`` or absent: both sides), the ``margin`` and
        why it is what it is (``margin_why``).
    stability: the role claimed ``less_stable`` and the learning-rate ``axis``. attention_feed: ``expect``
        (``scaled`` or ``unscaled``).
    grid: the ``d`` and ``n`` ranges, the ``keys`` (raw, layernorm...), the statistic judged (``stat``), how it is
        reduced over the cells (``reduce``) and the bound it is held to (``at_least`` or ``at_most``).
    """

    kind: str
    higher: str
    tolerance: float
    rel_tolerance: float
    exact: list[str]
    numerator: str
    denominator: str
    target: float
    lower: str
    positive: str
    zero: str
    reference: str
    better: str | None
    margin: float
    margin_why: str
    less_stable: str
    axis: str
    expect: str
    d: list[int]
    n: list[int]
    keys: str
    stat: str
    reduce: str
    at_least: float
    at_most: float


class ChanceAt(TypedDict):
    """A claim's ``chance_at``: the ``role`` whose paper value the random-key null at the paper's own key counts
    ``n`` and dimension ``d`` stands beside."""

    role: str
    d: int
    n: list[int]


class ClaimEntry(TypedDict, total=False):
    """One entry of a claims file (:class:`normbench.archive.ClaimSpec`).

    id: its unique name; use: the claims file that defines it (then no other key).
    owner: ``paper`` or ``normbench``; source, statement: where it comes from and what it says; why: why we hold it
        (our own); note: a remark printed with it.
    metric: the leaderboard metric it reads (metrics: another one per role); variants: role -> variant name;
        paper: role -> the paper's value (an ordering names its lower role: ``lower: <role>``).
    rule: how it is judged; protocol: the protocol its numbers need; evidence: ``sanity check`` for an identity the
        code guarantees; chance_at: the null at the paper's key counts; above_chance: the role whose fraction must
        also lie above its matched random-key null.
    """

    id: str
    use: str
    owner: str
    source: str
    statement: str
    why: str
    note: str
    metric: str
    metrics: dict[str, str]
    variants: dict[str, str]
    paper: dict[str, float | str]
    rule: Rule
    protocol: str
    evidence: str
    chance_at: ChanceAt
    above_chance: str


class Reasons(TypedDict, total=False):
    """A claim's ``why`` (the reasoning behind it) and ``note`` (what is known about its measurement), where given."""

    why: str
    note: str


class ProtocolCheck(TypedDict):
    """Whether a claim's runs follow its protocol (a judged claim's ``protocol``): the protocol's ``name`` and
    ``description``, whether they ``met`` it, and each setting that differs (``key: run value, protocol value``)."""

    name: str
    description: str
    met: bool
    differences: list[str]


class Power(TypedDict, total=False):
    """What a judged claim's seeds could detect (its ``power``).

    detectable: the smallest difference (a stability claim: failure rate, ``of``) found with power ``level``;
    leaning: where the point estimate lies, ``with the claim`` or ``against the claim`` (``None``: no sign).
    """

    detectable: float | None
    leaning: str | None
    level: float
    of: str


class Borderline(TypedDict):
    """An equivalence whose 90% interval ends within the metric's tolerance of its margin (a judged claim's
    ``borderline``): the verdict it ``was``, the ``distance`` to the margin and the ``tolerance``."""

    was: str
    distance: float
    tolerance: float


class Provisional(TypedDict):
    """A verdict judged on fewer finished seeds than its protocol declares: ``finished`` of ``declared``."""

    finished: int
    declared: int


class NullAtKeys(TypedDict):
    """The random-key null at ``n`` keys: its ``mean``, ``sem`` and the ``sets`` drawn."""

    n: int
    mean: float
    sem: float | None
    sets: int


class PaperChance(TypedDict):
    """The null at the paper's own key counts beside its value (a judged claim's ``paper_chance``).

    role, d, n: as the claim's ``chance_at``; null: the null at each key count; paper: the paper's value of ``role``;
    position: where it lies against the nulls (``below``, ``at``, ``above``); text: that in words.
    """

    role: str
    d: int
    n: list[int]
    null: list[NullAtKeys]
    paper: float
    position: str
    text: str


class NullDraws(TypedDict):
    """A matched null as a claim reads it: its ``mean``, ``sem`` and the ``sets`` drawn."""

    mean: float
    sem: float | None
    sets: int | None


class AgainstNull(TypedDict):
    """A claim's ``above_chance`` role against its matched random-key null (a judged claim's ``against_null``).

    role, metric: the fraction judged; null: the null beside it (``None``: none); difference: the Welch 95% interval
    of mean − null; position: ``above``, ``at`` or ``below`` chance (``None``: no null).
    """

    role: str
    metric: str
    null: NullDraws | None
    difference: IntervalDoc | None
    position: str | None


class CensoredSeed(TypedDict):
    """A seed that never reached a threshold within its run: the ``seed`` and the last step it is censored at."""

    seed: int
    at_step: float | None


class Censored(TypedDict):
    """A steps-to-threshold claim's censored seeds (a judged claim's ``censored``): the ``role``, its ``seeds``, the
    seeds the verdict is judged on (``judged_on``) and the interval with the censored seeds at their last steps
    (``with_censored``: shown, not judged)."""

    role: str
    seeds: list[CensoredSeed]
    judged_on: str
    with_censored: IntervalDoc | None


class FailureCount(TypedDict):
    """A stability claim's count at one learning rate: ``failed`` of ``runs``."""

    failed: int
    runs: int


class JudgedEntry(TypedDict, total=False):
    """A claim judged on a board (:class:`normbench.archive.JudgedClaim`); built key by key, so every key is optional
    here (a judged claim has id, paper, measured, verdict and rule).

    id, owner, source, statement, why, note, metric, metrics, variants, paper, evidence: as in :class:`ClaimEntry`.
    measured: role -> the mean over the counted seeds (a claim over many cells: its counts); per_seed: role -> each
        counted seed's value; layers: a claim over many cells, cell -> its values; holds_for: a grid claim, statistic
        -> whether it holds.
    difference: the 95% interval of the difference the rule reads (``None``: none); gap_to_paper: role -> mean minus
        the paper's value; margin, equivalence: an equivalence's margin and test.
    verdict: one of :data:`normbench.archive.VERDICTS`; rule: how it was decided, in words; explanation: what a claim
        over many cells found; counted: the seeds left out and why.
    protocol, power, borderline, margin_declared, provisional: what qualifies the verdict; paper_chance,
        against_null: the random-key nulls beside it; rates: role -> the learning rate judged at; failures: a
        stability claim's counts, role -> rate -> count; censored: a steps-to-threshold claim's censored seeds.
    """

    id: str
    owner: str
    source: str
    statement: str
    why: str
    note: str
    metric: str
    metrics: dict[str, str]
    variants: dict[str, str]
    paper: dict[str, float | str]
    measured: Mapping[str, float | None]
    per_seed: dict[str, list[float | None]]
    layers: dict[str, list[float | None]]
    holds_for: dict[str, bool]
    margin: float
    equivalence: EquivalenceDoc | None
    gap_to_paper: dict[str, GapDoc | None]
    difference: IntervalDoc | None
    verdict: str
    rule: str
    counted: list[str]
    explanation: str
    evidence: str
    protocol: ProtocolCheck
    power: Power
    borderline: Borderline
    margin_declared: str
    paper_chance: PaperChance
    rates: dict[str, str]
    failures: dict[str, dict[str, FailureCount]]
    provisional: Provisional
    against_null: AgainstNull
    censored: Censored


def judged_entry(claim: Mapping[str, object]) -> JudgedEntry:
    """A judged claim as the boards pass it to be described: a :class:`JudgedEntry`, or the JSON object of a
    :class:`normbench.archive.JudgedClaim` (its ``to_json``: the same keys)."""
    return cast(JudgedEntry, claim)
