"""Claims: what a claims file entry may hold (:class:`ClaimSpec`) and a claim judged on a board (:class:`JudgedClaim`).

The claims files live in ``src/normbench/judge/claims/<id>.yaml`` (a list under ``claims:``); their rules
and verdicts are :mod:`normbench.judge.claims`. This module fixes the shape only.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from normbench.archive._json import NUMBER, JsonObject, SchemaError, optional, required

VERDICTS = ("reproduced", "direction only", "borderline", "inconclusive", "not reproduced", "not run")
OWNERS = ("paper", "normbench")


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
    paper: dict[str, Any] | None = optional(dict)
    rule: dict[str, Any] | None = optional(dict)
    protocol: str | None = optional(str)
    evidence: str | None = optional(str)
    chance_at: dict[str, Any] | None = optional(dict)
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
    paper: dict[str, Any] = required(dict)
    measured: dict[str, Any] = required(dict)
    per_seed: dict[str, list[float | None]] | None = optional(dict)
    holds_for: Any = optional(dict, list)
    margin: float | None = optional(*NUMBER)
    equivalence: dict[str, Any] | None = optional(dict)
    gap_to_paper: dict[str, Any] | None = optional(dict)
    difference: dict[str, Any] | None = optional(dict)
    verdict: str = required(str)
    rule: str = required(str)
    counted: list[str] | None = optional(list)
    layers: Any = optional(dict, list)
    explanation: str | None = optional(str)
    evidence: str | None = optional(str)
    protocol: dict[str, Any] | None = optional(dict)
    power: dict[str, Any] | None = optional(dict)
    borderline: dict[str, Any] | None = optional(dict)
    margin_declared: str | None = optional(str)
    paper_chance: dict[str, Any] | None = optional(dict)
    rates: dict[str, str] | None = optional(dict)
    failures: dict[str, Any] | None = optional(dict)
    provisional: dict[str, Any] | None = optional(dict)
    against_null: dict[str, Any] | None = optional(dict)
    censored: dict[str, Any] | None = optional(dict)

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
