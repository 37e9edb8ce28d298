"""The claims registry: the papers' reported numbers (YAML data) and verdicts against measurements.

A claim names a leaderboard metric, the variants it compares (role -> variant name), the paper's
numbers and a rule (``values``, ``ratio``, ``ordering``, ``positive_zero``, ``equivalence``,
``all_zero``, ``attention_feed``, ``stability`` (failed runs over a learning-rate grid), each in
its module of :mod:`normbench.judge.rules` (:mod:`normbench.judge.rules.registry` maps a kind to
its function), or against the random-key null ``chance`` and ``chance_growth``
(:mod:`normbench.judge.chance.rules`), documented in each claims file). A claim may read a
different metric per role (``metrics: {role: metric}``), e.g. one model's keys before and after
its norm. Every claim says whose it is (``owner``: ``paper`` for a number the paper reports,
``normbench`` for a target of our own, with ``why``). :func:`judge` returns one of
``reproduced``, ``direction only``, ``inconclusive``, ``not reproduced`` or ``not run``; an
ordering counts only when it is significant over seeds, an equivalence ("as good as", "no worse
than") only when a TOST shows it within its declared margin (:mod:`normbench.judge.stats`).
Only seeds that finished without diverging are judged; the rule text names the others.

A claim is defined once: a claims file may take another file's definition with ``{id: <id>, use:
<file>}``, so the same runs get the same verdict on every board. A claim that names a ``protocol``
(``claims/protocols.yaml``) is reproduced only on runs with every setting of that protocol; on
other runs the board says which settings differ and the verdict is at most "direction only".
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any, NamedTuple, TypedDict

from normbench.archive._json import JsonDict
from normbench.archive.claim import OWNERS, ClaimSpec
from normbench.io import read_yaml
from normbench.judge import tuned
from normbench.judge.chance.rules import above_null, chance_claims, paper_chance
from normbench.judge.entries import ClaimEntry, JudgedEntry, ProtocolCheck
from normbench.judge.rows import VariantRow, variant_rows
from normbench.judge.rules.registry import CLAIM_RULES, RULE_CHECKS, RULE_KINDS, SEED_RULES
from normbench.judge.stats import GapDoc, aggregate, gap, values_of
from normbench.judge.tuned import TunedView
from normbench.judge.verdicts.counting import counted, counted_note, entry_head, finished_seeds, reasons
from normbench.judge.verdicts.qualify import qualify
from normbench.training.config import config_value


class Protocol(TypedDict):
    """A protocol claims may name (``claims/protocols.yaml``): its ``name``, what it is (``description``) and the
    config ``settings`` its runs need (dotted key -> value), its ``extends`` merged in."""

    name: str
    description: str
    settings: dict[str, object]


def claims_file(claims_id: str) -> Any:
    path = resources.files("normbench.judge") / "claims" / f"{claims_id}.yaml"
    if not path.is_file():
        raise ValueError(f"bench.claims: no claims file named {claims_id!r}")
    return read_yaml(path, "bench.claims")


@functools.cache
def load_protocols() -> dict[str, Protocol]:
    """The protocols claims may name (``claims/protocols.yaml``), each with its ``extends`` merged in.

    Read once per process (every claim checks its protocol against it); callers must not modify it."""
    raw = claims_file("protocols")["protocols"]

    def resolve(name: str, seen: tuple[str, ...] = ()) -> Protocol:
        if name not in raw or name in seen:
            raise ValueError(
                f"protocol: {name!r} is not a protocol (or extends itself); choose one of {', '.join(raw)}"
            )
        own = raw[name]
        parent = resolve(own["extends"], (*seen, name))["settings"] if own.get("extends") else {}
        return {"name": name, "description": own["description"], "settings": {**parent, **own["settings"]}}

    return {name: resolve(name) for name in raw}


def load_claims(claims_id: str) -> list[ClaimEntry]:
    """The claims of ``src/normbench/judge/claims/<claims_id>.yaml``, each marked whose it is.

    An entry ``{id: <id>, use: <file>}`` is the claim ``<id>`` as ``<file>`` defines it.
    """
    claims = []
    for entry in claims_file(claims_id)["claims"]:
        if "use" in entry:
            source = entry["use"]
            found = [c for c in claims_file(source)["claims"] if c.get("id") == entry.get("id") and "use" not in c]
            if len(found) != 1 or set(entry) != {"id", "use"}:
                raise ValueError(
                    f"claim {entry.get('id')!r}: `use: {source}` must name a claim that {source}.yaml "
                    f"defines, with no other field"
                )
            entry = found[0]
        claims.append(check_claim(entry))
    return claims


def check_claim(claim: ClaimEntry) -> ClaimEntry:
    """One-line errors for a claim that cannot be judged as written (a key a claim may not hold, a value of the
    wrong type: :class:`normbench.archive.ClaimSpec`; then the rule's own needs); the claim otherwise."""
    cid = claim.get("id")
    if claim.get("owner") not in OWNERS:
        raise ValueError(f"claim {cid!r}: owner must be one of {', '.join(OWNERS)}")
    ClaimSpec.from_json(claim)
    rule = claim.get("rule") or {}
    if rule.get("kind") not in RULE_KINDS:
        raise ValueError(
            f"claim {cid!r}: rule.kind {rule.get('kind')!r} is not allowed; choose one of {', '.join(RULE_KINDS)}"
        )
    if claim.get("protocol") is not None and claim["protocol"] not in load_protocols():
        raise ValueError(f"claim {cid!r}: protocol {claim['protocol']!r} is not in claims/protocols.yaml")
    if claim.get("evidence") not in (None, "sanity check"):
        raise ValueError(f"claim {cid!r}: evidence must be `sanity check` (an identity the code guarantees) or absent")
    check_rule = RULE_CHECKS.get(str(rule.get("kind")))
    if check_rule is not None:
        check_rule(claim)
    return claim


def paper_gaps(entry: JudgedEntry) -> dict[str, GapDoc | None]:
    """Each role's :func:`gap` to the paper's value, from a judged claim's per-seed values (``{}`` without paper
    values)."""
    roles = entry.get("variants") or {}
    paper = {r: v for r, v in (entry.get("paper") or {}).items() if isinstance(v, (int, float)) and r in roles}
    return {r: gap(values_of((entry.get("per_seed") or {}).get(r)), float(v)) for r, v in paper.items()}


def protocol_check(claim: ClaimEntry, config: JsonDict | None) -> ProtocolCheck | None:
    """Whether runs with the resolved ``config`` follow the protocol the claim names:
    ``{name, description, met, differences: ["key: run value, protocol value", ...]}``; ``None`` if it names none."""
    name = claim.get("protocol")
    if not name:
        return None
    protocol = load_protocols()[name]
    have = {key: config_value(config or {}, key) for key in protocol["settings"]}
    differences = [
        f"{key}: {have[key]!r}, protocol {want!r}"
        for key, want in protocol["settings"].items()
        if not same_setting(have[key], want)
    ]
    return {"name": name, "description": protocol["description"], "met": not differences, "differences": differences}


def same_setting(value: Any, want: Any) -> bool:
    """Config values compare as numbers when both are (6000 == 6000.0), else as given."""
    if isinstance(value, (int, float)) and isinstance(want, (int, float)) and not isinstance(value, bool):
        return float(value) == float(want)
    return value == want


def judge(
    claim: ClaimEntry,
    variants: dict[str, VariantRow],
    config: JsonDict | None = None,
    declared: int | None = None,
) -> JudgedEntry:
    """The verdict on ``claim`` from runs: the leaderboard's variants (name -> entry, per-seed values)
    and the runs' resolved ``config`` (for the protocol the claim names; ``None``: unknown, so no
    protocol is met). The one function every board calls: the same runs give the same verdict
    wherever they are judged. ``declared``: the number of seeds the protocol declares (a board's
    ``bench.seeds``, a card's protocol ``seeds``); a verdict on fewer finished seeds is marked
    ``provisional`` (:func:`mark_provisional`)."""
    entry = above_null(claim, qualify(judge_runs(claim, variants), claim), variants)
    if (at_paper_keys := paper_chance(claim)) is not None:
        entry["paper_chance"] = at_paper_keys
    if claim.get("evidence"):
        entry["evidence"] = claim["evidence"]
    protocol = protocol_check(claim, config)
    if protocol is not None:
        entry["protocol"] = protocol
        if not protocol["met"]:
            if entry["verdict"] == "reproduced":
                entry["verdict"] = "direction only"
            entry["rule"] += (
                f"; judged on another protocol than the claim's ({protocol['name']}: "
                f"{'; '.join(protocol['differences'])}), so at most direction only"
            )
    return mark_provisional(entry, finished_count(claim, variants), declared)


def finished_count(claim: ClaimEntry, variants: dict[str, VariantRow]) -> int | None:
    """The fewest finished seeds of a variant the claim reads (its seeds and its failed seeds: a seed that diverged,
    collapsed, stayed at chance or failed has finished, and failed); a grid point ``<name>,lr=...`` counts for its
    base. A claim over every variant (``attention_feed``) reads them all. ``None`` where no variant is there."""
    names = set((claim.get("variants") or {}).values())
    every = (claim.get("rule") or {}).get("kind") == "attention_feed"
    read = [v for n, v in variants.items() if every or n in names or n.partition(",")[0] in names]
    counts = [
        len({str(s) for s in v.get("seeds") or []} | {str(s) for s in (v.get("failed") or {})}) for v in read if v
    ]
    return min(counts) if counts else None


def mark_provisional(entry: JudgedEntry, finished: int | None, declared: int | None) -> JudgedEntry:
    """``entry`` marked ``provisional: {finished, declared}`` where it was judged on fewer finished seeds than the
    protocol declares (a verdict before its seeds: not final, never counted or indexed as one); a claim not run is
    left as it is."""
    if not declared or finished is None or finished >= declared or entry["verdict"] == "not run":
        return entry
    return {
        **entry,
        "provisional": {"finished": finished, "declared": declared},
        "rule": entry["rule"] + f"; provisional: judged on {finished} of the {declared} seeds its protocol declares, "
        "the others not trained yet",
    }


class ClaimFields(TypedDict, total=False):
    """The board's keys its judged claims give (:meth:`BoardClaims.fields`): ``claims``, ``against_chance`` (where
    any), and on a board judged at tuned rates the ``tuned`` view with the ``tuned_claims``."""

    claims: list[JudgedEntry]
    against_chance: list[JudgedEntry]
    tuned: TunedView
    tuned_claims: list[JudgedEntry]


class BoardClaims(NamedTuple):
    """A board's judged claims: its claims file's, one against chance per unselectable fraction with a null, and (a
    board with ``bench.tuned``) its claims file's again at each variant's tuned rate."""

    claims: list[JudgedEntry]
    against_chance: list[JudgedEntry]
    tuned: list[JudgedEntry]

    def fields(self, bench: JsonDict) -> ClaimFields:
        """The board's keys these give: ``claims``, ``against_chance`` (when any) and, with ``bench.tuned``, the
        ``tuned`` view with the ``tuned_claims``."""
        out: ClaimFields = {"claims": self.claims}
        if self.against_chance:
            out["against_chance"] = self.against_chance
        if bench.get("tuned"):
            out["tuned"] = bench["tuned"]
            out["tuned_claims"] = self.tuned
        return out


def board_claims(bench: JsonDict, variants: Sequence[Mapping[str, object]], config: JsonDict | None) -> BoardClaims:
    """A board's judged claims: those of its claims file (``bench.claims``), and one against chance per unselectable
    fraction with a null (:func:`normbench.judge.chance.rules.chance_claims`). With ``bench.tuned`` (the resolved
    view, :mod:`normbench.judge.tuned`) the claims file's claims are judged at the shared rate and again at the
    tuned rates, each claim's variants read at that rate (``variants``: the board's rows, :func:`variant_rows`)."""
    variants = variant_rows(variants)
    specs = load_claims(bench["claims"]) if bench.get("claims") else []
    declared = len(bench.get("seeds") or []) or None
    against_chance = [judge(c, {v["name"]: v for v in variants}, None, declared) for c in chance_claims(variants)]
    view = bench.get("tuned")
    if not view:
        by_name = {v["name"]: v for v in variants}
        return BoardClaims([judge(c, by_name, config, declared) for c in specs], against_chance, [])
    judged: dict[str, list[JudgedEntry]] = {}
    for rate in tuned.RATES:
        by_name = {v["name"]: v for v in tuned.at_rate(view, variants, rate)}
        judged[rate] = [
            {**judge(c, by_name, config, declared), "rates": tuned.rates_of(view, c.get("variants"), rate)}
            for c in specs
        ]
    return BoardClaims(judged["shared"], against_chance, judged["tuned"])


def judge_runs(claim: ClaimEntry, variants: dict[str, VariantRow]) -> JudgedEntry:
    """The rule of ``claim`` applied to the variants' per-seed values (see :func:`judge`)."""
    if claim["rule"]["kind"] in CLAIM_RULES:
        return CLAIM_RULES[claim["rule"]["kind"]](claim, variants)
    roles: dict[str, str] = claim["variants"]
    role_metrics: dict[str, str] = {role: (claim.get("metrics") or {}).get(role, claim["metric"]) for role in roles}
    measured: dict[str, float | None] = {}
    per_seed: dict[str, list[float | None]] = {}
    bounds: dict[str, list[float | None]] = {}
    seeds: dict[str, list[int]] = {}  # each role's counted seeds, to name a censored one
    notes: list[str] = []
    for role, name in roles.items():
        variant = variants.get(name) or {}
        metric = variant.get("metrics", {}).get(role_metrics[role]) or {}
        # only seeds that finished without diverging are judged (and, on unselectable keys, did not collapse)
        keep, note = finished_seeds(variant, geometric="unselectable" in role_metrics[role])
        notes += [f"{name}: {note}"] if note else []
        values = metric.get("per_seed") or []
        per_seed[role] = counted(values, keep)
        # the mean beside the values judged: over the counted seeds where some are left out (the board's own rule)
        lined_up = len(values) == len(keep)
        measured[role] = (
            aggregate(values, [None] * len(values), keep)["mean"] if lined_up and not all(keep) else metric.get("mean")
        )
        bounds[role] = counted(metric.get("per_seed_lower_bound") or [], keep)
        seeds[role] = counted(list(variant.get("seeds") or []), keep)
    rule = claim["rule"]
    entry: JudgedEntry = {
        **entry_head(claim),
        "metrics": role_metrics,
        "variants": roles,
        "measured": measured,
        "per_seed": per_seed,
    }
    entry.update(reasons(claim))
    judge_seeds = SEED_RULES.get(rule["kind"])
    if judge_seeds is None:
        raise ValueError(f"claim {claim['id']}: unknown rule kind {rule['kind']!r}")
    verdict, text, diff, extra = judge_seeds(rule, claim, per_seed, bounds, measured, seeds)
    entry.update(extra)
    entry["difference"] = None if diff is None else diff.as_dict()
    if notes:
        entry["counted"] = notes
    return {**entry, "verdict": verdict, "rule": text + counted_note(notes)}
