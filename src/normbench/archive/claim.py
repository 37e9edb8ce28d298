"""Claims: what a claims file entry may hold (:class:`ClaimSpec`) and a claim judged on a board (:class:`JudgedClaim`).

The claims files live in ``src/normbench/judge/claims/<id>.yaml`` (a list under ``claims:``); their rules
and verdicts are :mod:`normbench.judge.claims`. This module fixes the shape only: the dataclasses, and the same
documents as JSON data (:class:`ClaimEntry`, :class:`JudgedEntry`: the keys they share are :class:`ClaimHead`'s) with
the parts a judged claim holds (the statistics every rule, :mod:`normbench.judge.verdicts.qualify`,
:mod:`normbench.judge.chance.rules` and :func:`normbench.judge.claims.judge` add to it). Keys as the files name them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypedDict

from normbench.archive._json import NUMBER, JsonObject, SchemaError, optional, required
from normbench.archive.documents.verdicts import (
    AgainstNull,
    Borderline,
    Censored,
    EquivalenceDoc,
    FailureCount,
    GapDoc,
    IntervalDoc,
    PaperChance,
    Power,
    ProtocolCheck,
    Provisional,
)

VERDICTS = ("reproduced", "direction only", "borderline", "inconclusive", "not reproduced", "not run")
OWNERS = ("paper", "normbench")


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


class Reasons(TypedDict, total=False):
    """A claim's ``why`` (the reasoning behind it) and ``note`` (what is known about its measurement), where given."""

    why: str
    note: str


class ClaimHead(Reasons, total=False):
    """The keys a claim has both as its claims file writes it (:class:`ClaimEntry`) and as a board stores it judged
    (:class:`JudgedEntry`).

    id: its unique name; owner: ``paper`` or ``normbench``; source, statement: where it comes from and what it says;
    why, note: as :class:`Reasons` (why we hold it, a remark printed with it).
    metric: the leaderboard metric it reads (metrics: another one per role); variants: role -> variant name;
        paper: role -> the paper's value (an ordering names its lower role: ``lower: <role>``).
    evidence: ``sanity check`` for an identity the code guarantees.
    """

    id: str
    owner: str
    source: str
    statement: str
    metric: str
    metrics: dict[str, str]
    variants: dict[str, str]
    paper: dict[str, float | str]
    evidence: str


class ClaimEntry(ClaimHead, total=False):
    """One entry of a claims file (:class:`ClaimSpec`).

    Beside the keys of :class:`ClaimHead`:

    use: the claims file that defines it (then no other key); rule: how it is judged; protocol: the protocol its
    numbers need; chance_at: the null at the paper's key counts; above_chance: the role whose fraction must also lie
    above its matched random-key null.
    """

    use: str
    rule: Rule
    protocol: str
    chance_at: ChanceAt
    above_chance: str


class JudgedEntry(ClaimHead, total=False):
    """A claim judged on a board (:class:`JudgedClaim`); built key by key, so every key is optional here (a judged
    claim has id, paper, measured, verdict and rule).

    Beside the keys of :class:`ClaimHead`:

    measured: role -> the mean over the counted seeds (a claim over many cells: its counts); per_seed: role -> each
        counted seed's value; layers: a claim over many cells, cell -> its values; holds_for: a grid claim, statistic
        -> whether it holds.
    difference: the 95% interval of the difference the rule reads (``None``: none); gap_to_paper: role -> mean minus
        the paper's value; margin, equivalence: an equivalence's margin and test.
    verdict: one of :data:`VERDICTS`; rule: how it was decided, in words; explanation: what a claim over many cells
        found; counted: the seeds left out and why.
    protocol, power, borderline, margin_declared, provisional: what qualifies the verdict; paper_chance,
        against_null: the random-key nulls beside it; rates: role -> the learning rate judged at; failures: a
        stability claim's counts, role -> rate -> count; censored: a steps-to-threshold claim's censored seeds.
    """

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


@dataclasses.dataclass(frozen=True, kw_only=True)
class ClaimSpec(JsonObject):
    """One entry of a claims file: a number a paper reports (``owner: paper``) or a target of our own.

    Attributes:
        id: unique name, e.g. ``brody2023.fig3.acc@1000``; ``use``: take the claim ``id`` as the file
            ``use`` defines it (then no other key).
        owner: ``paper`` or ``normbench``; ``source``: where the number comes from; ``statement``: the claim
            in words; ``why``: why we hold it (our own claims); ``note``: a remark printed with it.
        metric: the leaderboard metric it reads (``metrics``: another metric per role); ``variants``: role ->
            variant name; ``paper``: role -> the paper's value; ``rule``: how it is judged (``kind`` and its
            parameters); ``protocol``: the protocol (``claims/protocols.yaml``) its numbers need;
            ``evidence``: ``sanity check`` for an identity the code guarantees; ``chance_at``: ``{role, d, n}``, the
            random-key null at the paper's own key counts ``n`` and dimension ``d``, shown beside its value of ``role``;
            ``above_chance``: the role whose unselectable fraction the claim says exists or grows, which must also
            lie above its matched random-key null for the claim to hold.
    """

    id: str = required(str)
    use: str | None = optional(str)
    owner: str | None = optional(str)
    source: str | None = optional(str)
    statement: str | None = optional(str)
    why: str | None = optional(str)
    note: str | None = optional(str)
    metric: str | None = optional(str)
    metrics: dict[str, str] | None = optional(dict)
    variants: dict[str, str] | None = optional(dict)
    paper: dict[str, float | str] | None = optional(dict)
    rule: Rule | None = optional(dict)
    protocol: str | None = optional(str)
    evidence: str | None = optional(str)
    chance_at: ChanceAt | None = optional(dict)
    above_chance: str | None = optional(str)

    WHAT = "claim"

    @classmethod
    def from_json(cls, data: Any, where: str | None = None) -> ClaimSpec:
        """A claims file entry; a key it may not hold is one line naming it and the keys allowed."""
        where = where or (f"claim {data.get('id')!r}" if isinstance(data, dict) else cls.WHAT)
        spec = super().from_json(data, where)
        if spec.extra:
            names = ", ".join(f.name for f in cls.own_fields())
            raise SchemaError(f"{where}: unknown key {next(iter(spec.extra))!r}; a claim may hold {names}")
        if spec.owner is not None and spec.owner not in OWNERS:
            raise SchemaError(f"{where}.owner: {spec.owner!r} is not one of {', '.join(OWNERS)}")
        return spec


@dataclasses.dataclass(frozen=True, kw_only=True)
class JudgedClaim(JsonObject):
    """A claim with its verdict, as a board stores it (:func:`normbench.judge.claims.judge`).

    Attributes:
        id, owner, source, statement, why, note, metric, metrics, variants, paper: as in :class:`ClaimSpec`.
        measured: role -> mean over the counted seeds; ``per_seed``: role -> each seed's value.
        difference: the 95% interval of the difference the rule reads (``None``: none); ``gap_to_paper``:
            role -> mean minus the paper's value with its interval; ``margin``, ``equivalence``: an
            equivalence rule's margin and test; ``holds_for``: the cells a grid claim holds for.
        verdict: one of :data:`VERDICTS`; ``rule``: how it was decided, in words.
        layers, explanation: a claim over many cells says what it found; ``counted``: seeds left out and why;
        protocol: whether the runs met the claim's protocol; ``evidence``: ``sanity check`` or absent.
        power: the smallest difference the seeds could detect (``detectable``, at 80% power) and where the point
            estimate leans (``leaning``); ``borderline``: an equivalence within the metric's tolerance of its margin
            (the verdict it had, the distance, the tolerance); ``margin_declared``: ``after the runs`` where the
            margin was registered after the claim's runs were trained (:mod:`normbench.judge.verdicts.qualify`).
        paper_chance: the random-key null at the paper's own key counts beside the paper's value (its ``chance_at``).
        rates: on a board judged at shared and tuned learning rates, role -> the rate its variant was judged at.
        failures: a stability claim's counts, role -> learning rate -> ``{failed, runs}``
            (:mod:`normbench.judge.rules.stability`).
        provisional: ``{finished, declared}`` where the claim was judged on fewer finished seeds (failed ones
            included) than its protocol declares: the verdict is not final.
        against_null: for a claim with ``above_chance``, that role's fraction against its matched random-key null
            (``{role, metric, null, difference, position}``, ``position``: above, at or below chance).
        censored: for a steps-to-threshold claim, the seeds that never reached the threshold (role -> ``[{seed,
            at_step}]``), how they were counted and the difference with them counted at their last step.
    """

    id: str = required(str)
    owner: str | None = optional(str)
    source: str | None = optional(str)
    statement: str | None = optional(str)
    why: str | None = optional(str)
    note: str | None = optional(str)
    metric: str | None = optional(str)
    metrics: dict[str, str] | None = optional(dict)
    variants: dict[str, str] | None = optional(dict)
    paper: dict[str, float | str] = required(dict)
    measured: Mapping[str, float | None] = required(dict)
    per_seed: dict[str, list[float | None]] | None = optional(dict)
    holds_for: Any = optional(dict, list)
    margin: float | None = optional(*NUMBER)
    equivalence: EquivalenceDoc | None = optional(dict)
    gap_to_paper: dict[str, GapDoc | None] | None = optional(dict)
    difference: IntervalDoc | None = optional(dict)
    verdict: str = required(str)
    rule: str = required(str)
    counted: list[str] | None = optional(list)
    layers: Any = optional(dict, list)
    explanation: str | None = optional(str)
    evidence: str | None = optional(str)
    protocol: ProtocolCheck | None = optional(dict)
    power: Power | None = optional(dict)
    borderline: Borderline | None = optional(dict)
    margin_declared: str | None = optional(str)
    paper_chance: PaperChance | None = optional(dict)
    rates: dict[str, str] | None = optional(dict)
    failures: dict[str, dict[str, FailureCount]] | None = optional(dict)
    provisional: Provisional | None = optional(dict)
    against_null: AgainstNull | None = optional(dict)
    censored: Censored | None = optional(dict)

    WHAT = "claim"

    @classmethod
    def from_json(cls, data: Any, where: str | None = None) -> JudgedClaim:
        claim = super().from_json(data, where)
        if claim.verdict not in VERDICTS:
            raise SchemaError(f"{where or cls.WHAT}.verdict: {claim.verdict!r} is not one of {', '.join(VERDICTS)}")
        return claim

    @property
    def whose(self) -> str:
        """``paper`` or ``normbench`` (a claim that names no owner is the paper's)."""
        return self.owner or "paper"
