"""The claims registry: the papers' reported numbers (YAML data) and verdicts against measurements.

A claim names a leaderboard metric, the variants it compares (role -> variant name), the paper's
numbers and a rule (``values``, ``ratio``, ``ordering``, ``positive_zero``, ``equivalence``,
``all_zero``, ``attention_feed``, ``stability`` (failed runs over a learning-rate grid,
:mod:`normbench.judge.stability`), or against the random-key null ``chance`` and ``chance_growth``
(:mod:`normbench.judge.chance_rules`), documented in each claims file). A claim may read a
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
import statistics
from collections.abc import Callable
from importlib import resources
from typing import Any, NamedTuple

import numpy as np

from normbench.archive.claim import OWNERS, VERDICTS, ClaimSpec  # noqa: F401 - VERDICTS re-exported
from normbench.io import read_yaml
from normbench.judge import tuned
from normbench.judge.chance_rules import (
    above_null,
    chance_claims,
    judge_chance,
    judge_chance_growth,
    paper_chance,
)
from normbench.judge.counting import counted, counted_note, entry_head, finished_seeds, reasons
from normbench.judge.qualify import qualify
from normbench.judge.stability import check_rule as check_stability
from normbench.judge.stability import judge_stability
from normbench.judge.stats import (
    Interval,
    aggregate,
    difference_equivalence,
    difference_interval,
    finite,
    gap,
    mean_interval,
    target_equivalence,
    values_of,
)
from normbench.nn.norms import get_component
from normbench.nn.placement import attention_input_norm
from normbench.training.config import config_value


def claims_file(claims_id: str) -> Any:
    path = resources.files("normbench.judge") / "claims" / f"{claims_id}.yaml"
    if not path.is_file():
        raise ValueError(f"bench.claims: no claims file named {claims_id!r}")
    return read_yaml(path, "bench.claims")


@functools.cache
def load_protocols() -> dict[str, dict[str, Any]]:
    """The protocols claims may name (``claims/protocols.yaml``), each with its ``extends`` merged in.

    Read once per process (every claim checks its protocol against it); callers must not modify it."""
    raw = claims_file("protocols")["protocols"]

    def resolve(name: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
        if name not in raw or name in seen:
            raise ValueError(
                f"protocol: {name!r} is not a protocol (or extends itself); choose one of {', '.join(raw)}"
            )
        own = raw[name]
        parent = resolve(own["extends"], (*seen, name))["settings"] if own.get("extends") else {}
        return {"name": name, "description": own["description"], "settings": {**parent, **own["settings"]}}

    return {name: resolve(name) for name in raw}


def load_claims(claims_id: str) -> list[dict[str, Any]]:
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


def check_claim(claim: dict[str, Any]) -> dict[str, Any]:
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
    if rule.get("kind") == "stability":
        check_stability(claim)
    if rule.get("kind") == "equivalence":
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
    if (
        rule.get("kind") == "values"
        and "exact" not in rule
        and not (rule.get("tolerance") or rule.get("rel_tolerance"))
    ):
        raise ValueError(
            f"claim {cid!r}: rule.tolerance (or rel_tolerance) must be positive: the equivalence margin "
            f"around each paper value"
        )
    return claim


def _fmt(x: float | str | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:.4g}" if isinstance(x, (int, float)) else str(x)


SIGNIFICANCE = (
    "the ordering counts only when the 95% Welch interval of the difference of the seed means "
    "excludes 0; otherwise inconclusive"
)


def ordering_verdict(diff: Interval | None, sign: int) -> str | None:
    """``None`` if the ordering (``sign`` = +1: first > second) is significant, else the verdict it forces."""
    if diff is None or not diff.excludes_zero():
        return "inconclusive"
    return None if (diff.estimate > 0) == (sign > 0) else "not reproduced"


def judge_values(
    rule: dict[str, Any], paper: dict[str, float], per_seed: dict[str, list[float | None]]
) -> tuple[str, str, Interval | None, dict[str, Any]]:
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


def paper_gaps(entry: dict[str, Any]) -> dict[str, Any]:
    """Each role's :func:`gap` to the paper's value, from a judged claim's per-seed values (``{}`` without paper
    values)."""
    roles = entry.get("variants") or {}
    paper = {r: v for r, v in (entry.get("paper") or {}).items() if isinstance(v, (int, float)) and r in roles}
    return {r: gap(values_of((entry.get("per_seed") or {}).get(r)), float(v)) for r, v in paper.items()}


def censored_seeds(
    role: str, per_seed: dict[str, list[float | None]], bounds: dict[str, list[float | None]],
    seeds: dict[str, list[Any]] | None = None,
) -> list[dict[str, Any]]:  # fmt: skip
    """The seeds of ``role`` that never reached the threshold within the run: ``[{seed, at_step}]``, ``at_step`` the
    run's last step (where the seed is censored); a seed is named by its position where no seed ids line up."""
    values, lower = per_seed.get(role) or [], bounds.get(role) or []
    ids = (seeds or {}).get(role) or []
    ids = ids if len(ids) == len(values) else list(range(len(values)))
    return [
        {"seed": s, "at_step": b}
        for v, b, s in zip(values, lower, ids, strict=False)
        if finite(v) is None and finite(b) is not None
    ]


def censored_entry(
    role: str, censored: list[dict[str, Any]], reached: int, with_censored: Interval | None
) -> dict[str, Any]:
    """The judged claim's ``censored`` field: the role, its censored seeds, the seeds the verdict is judged on and the
    interval with the censored seeds at their last steps (shown only)."""
    return {
        "role": role,
        "seeds": censored,
        "judged_on": f"the {reached} seeds of {role} that reached it",
        "with_censored": with_censored.as_dict() if with_censored else None,
    }


def censored_text(role: str, censored: list[dict[str, Any]], reached: int, with_censored: Interval | None) -> str:
    """How a steps-to-threshold claim counted the seeds that never reached it: which seed, censored at which step, the
    interval of the seeds that reached it (the verdict's) and the one with the censored seeds at their last steps
    (lower bounds), shown only."""
    named = ", ".join(f"seed {c['seed']}" for c in censored)
    steps = sorted({f"{c['at_step']:g}" for c in censored})
    both = "" if with_censored is None else f": {describe_difference({'difference': with_censored.as_dict()})}"
    return (
        f" ({role}: {named} never reached it within the run, counted as censored at step {' / '.join(steps)}; the "
        f"interval and the verdict are of the {reached} seed{'s' if reached != 1 else ''} that reached it, a subset "
        f"that can only understate {role}'s steps; with the censored seeds counted at their last steps (lower "
        f"bounds){both}, shown, not judged)"
    )


def judge_ratio(
    rule: dict[str, Any],
    per_seed: dict[str, list[float | None]],
    bounds: dict[str, list[float | None]],
    seeds: dict[str, list[Any]] | None = None,
    found: dict[str, Any] | None = None,
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


def judge_ordering(
    rule: dict[str, Any],
    per_seed: dict[str, list[float | None]],
    bounds: dict[str, list[float | None]] | None = None,
    seeds: dict[str, list[Any]] | None = None,
    found: dict[str, Any] | None = None,
) -> tuple[str, str, Interval | None]:
    """``lower`` role below the other, significantly over seeds. Every seed of ``lower`` needs a value; a seed of
    the other role that never reached a threshold is censored at its last step: the verdict is judged on the seeds
    that reached it (which can only understate how much higher it is), and a reversal there decides nothing
    (inconclusive); the interval with the censored seeds at their last steps is shown beside it (``found``)."""
    bounds = bounds or {}
    lower = rule["lower"]
    other = next(r for r in per_seed if r != lower)
    text = f"reproduced if {lower} < {other} significantly; not reproduced if significantly reversed; {SIGNIFICANCE}"
    a, b = values_of(per_seed.get(lower)), values_of(per_seed.get(other))
    if not a or len(a) < len(per_seed.get(lower) or []):
        return "not run", text + " (a measured value is missing)", None
    if len(b) < len(per_seed.get(other) or []):  # seeds that never reached a threshold: censored
        bound = values_of(bounds.get(other))
        if len(bound) < len(per_seed.get(other) or []):
            return "not run", text + " (a measured value is missing)", None
        censored = censored_seeds(other, per_seed, bounds, seeds)
        with_censored = difference_interval(a, bound, (lower, other))
        text += censored_text(other, censored, len(b), with_censored)
        if found is not None:
            found["censored"] = censored_entry(other, censored, len(b), with_censored)
        diff = difference_interval(a, b, (lower, other)) if len(b) >= 2 else None
        return ("reproduced" if ordering_verdict(diff, -1) is None else "inconclusive"), text, diff
    if not b:
        return "not run", text + " (a measured value is missing)", None
    diff = difference_interval(a, b, (lower, other))
    return (ordering_verdict(diff, -1) or "reproduced"), text, diff


def judge_positive_zero(
    rule: dict[str, Any], per_seed: dict[str, list[float | None]]
) -> tuple[str, str, Interval | None]:
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


def judge_equivalence(
    rule: dict[str, Any], per_seed: dict[str, list[float | None]]
) -> tuple[str, str, Interval | None, dict[str, Any] | None]:
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


def protocol_check(claim: dict[str, Any], config: dict[str, Any] | None) -> dict[str, Any] | None:
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


def source_text(claim: dict[str, Any]) -> str:
    """A judged claim's source, then its ``why`` and ``note`` where given, as the leaderboards print it."""
    return claim["source"] + "".join(f" — {key}: {text}" for key, text in reasons(claim).items())


def judge_all_zero(claim: dict[str, Any], variants: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Every seed (and layer, for a metric with ``{layer}``) of every named variant measures exactly 0."""
    template, roles = claim["metric"], claim["variants"]
    cells: list[tuple[str, list[float | None]]] = []
    notes: list[str] = []
    for name in roles.values():
        variant = variants.get(name) or {}
        keep, note = finished_seeds(variant, geometric=True)
        notes += [f"{name}: {note}"] if note else []
        n_layers = int(variant.get("n_layers") or 1)
        for layer in range(1, n_layers + 1) if "{layer}" in template else [0]:
            metric = (variant.get("metrics") or {}).get(template.format(layer=layer)) or {}
            label = f"{name} L{layer}" if layer else name
            cells.append((label, counted(list(metric.get("per_seed") or [None]), keep)))
    measured = [(c, values_of(v)) for c, v in cells if values_of(v)]
    incomplete = [c for c, v in cells if len(values_of(v)) < len(v)]
    held = [c for c, v in measured if all(x == 0 for x in v)]
    broken = [c for c, v in measured if any(x != 0 for x in v)]
    verdict = (
        "not run" if not measured else "not reproduced" if broken else "inconclusive" if incomplete else "reproduced"
    )
    text = (
        "reproduced if the metric is exactly 0 in every seed (and layer) of every variant named; not reproduced "
        "if any seed measures more; a seed without a value makes a reproduced inconclusive; diverged seeds do not "
        "count"
    ) + counted_note(notes)
    exceptions = [
        f"{c}: {' / '.join(_fmt(x) if x is not None else '–' for x in v)}"
        for c, v in cells
        if c not in held or c in incomplete
    ]
    entry = {
        "id": claim["id"],
        "owner": claim["owner"],
        "source": claim["source"],
        "statement": claim.get("statement", ""),
        "metric": template,
        "metrics": {},
        "variants": roles,
        "paper": claim.get("paper") or {},
        "measured": {"cells judged": len(cells), "zero in every seed": len(held)},
        "per_seed": {},
        "difference": None,
        "verdict": verdict,
        "rule": text,
        "layers": dict(cells),
        "explanation": (
            f"{len(held)} of {len(cells)} cells are 0 in every seed"
            + (f"; the others: {'; '.join(exceptions)}" if exceptions else "")
        ),
    }
    entry.update(reasons(claim))
    return entry


def attention_feed(variant: dict[str, Any], layer: int) -> str | None:
    """The component of the norm whose output is layer ``layer``'s attention input in a leaderboard
    variant (its ``placement``, ``norms`` and ``norm_roles``), ``None`` where the residual stream or
    the raw embedding is. A one-line error for a variant that does not record its norms' roles."""
    roles = variant.get("norm_roles")
    if not roles or variant.get("placement") is None:
        raise ValueError(
            f"variant {variant.get('name')!r}: its records name no norm roles or placement; "
            "rebuild its leaderboard from the run records"
        )
    components = {f"{k}_norm": spec["component"] for k, spec in (variant.get("norms") or {}).items()}
    present = {f"{k}_norm": role for k, role in roles.items() if f"{k}_norm" in components}
    # an import path names a plug-in module: never the identity, never a known scaling (and not imported here)
    identity = {name for name, c in components.items() if ":" not in c and get_component(c).identity}
    name = attention_input_norm(variant["placement"], layer, present, identity)
    return None if name is None else components[name]


FEED_EXPECTATIONS = ("scaled", "unscaled")


def above_zero(values: list[float]) -> bool:
    """Whether the 95% t-interval of the mean of ``values`` (two at least) lies above 0."""
    interval = mean_interval(values)
    return interval is not None and interval.low is not None and interval.low > 0


def judge_attention_feed(claim: dict[str, Any], variants: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Brody et al.'s geometry at every placement: for every variant and layer, the norm that feeds the
    attention (:func:`attention_feed`) decides what is expected of its unselectable-key fraction.

    ``expect: scaled``: where a scaling component (``Component.scales``) feeds it, 0 in every seed;
    reproduced if that holds everywhere, not reproduced if any seed has an unselectable key there.
    ``expect: unscaled``: where no scaling norm feeds it, > 0 in every seed; reproduced if that
    holds everywhere, not reproduced if some layer has none in every seed, else inconclusive.
    Judged over the variants with finished runs; a seed without a value is listed and makes a
    "reproduced" inconclusive. The metric may hold ``{layer}`` (one per layer); without it, layer 1's.
    """
    rule, template = claim["rule"], claim["metric"]
    if rule.get("expect") not in FEED_EXPECTATIONS:
        raise ValueError(
            f"claim {claim['id']}: rule.expect must be one of {', '.join(FEED_EXPECTATIONS)}, "
            f"got {rule.get('expect')!r}"
        )
    scaled = rule["expect"] == "scaled"
    cells: list[tuple[str, list[float | None]]] = []
    notes: list[str] = []
    for name, variant in variants.items():
        n_layers = int(variant.get("n_layers") or 1)
        keep, note = finished_seeds(variant, geometric=True)
        if keep and not any(keep):  # no seed counts (all diverged or collapsed): no cell to judge
            notes.append(f"{name}: {note}")
            continue
        judged = False
        for layer in range(1, n_layers + 1) if "{layer}" in template else [1]:
            feed = attention_feed({**variant, "name": name}, layer)
            if (feed is not None and ":" not in feed and get_component(feed).scales) != scaled:
                continue
            judged = True
            metric = (variant.get("metrics") or {}).get(template.format(layer=layer)) or {}
            cells.append(
                (f"{name} L{layer} ({feed or 'no norm'})", counted(list(metric.get("per_seed") or [None]), keep))
            )
        notes += [f"{name}: {note}"] if note and judged else []
    measured_cells = [(c, values_of(v)) for c, v in cells if values_of(v)]
    incomplete = [c for c, v in cells if len(values_of(v)) < len(v)]
    if scaled:
        text = (
            "every (variant, layer) whose attention input a scaling norm feeds: reproduced if 0 unselectable keys "
            "in every seed; not reproduced if any seed has one"
        )
        held = [c for c, v in measured_cells if all(x == 0 for x in v)]
        broken = [c for c, v in measured_cells if any(x > 0 for x in v)]
        verdict = "not reproduced" if broken else "reproduced"
    else:
        text = (
            "every (variant, layer) whose attention input no scaling norm feeds: reproduced if > 0 unselectable "
            "keys in every seed and the 95% interval of the mean over seeds excludes 0; not reproduced if a layer "
            "has none in every seed; inconclusive otherwise"
        )
        held = [c for c, v in measured_cells if all(x > 0 for x in v) and above_zero(v)]
        broken = [c for c, v in measured_cells if all(x == 0 for x in v)]
        verdict = "reproduced" if len(held) == len(measured_cells) else "not reproduced" if broken else "inconclusive"
    if not measured_cells:
        verdict = "not run"
    elif verdict == "reproduced" and incomplete:
        verdict = "inconclusive"
    text += (
        "; judged over the variants with finished runs (diverged seeds do not count), a seed without a value "
        "makes a reproduced inconclusive"
    ) + counted_note(notes)
    exceptions = [
        f"{c}: {' / '.join(_fmt(x) if x is not None else '–' for x in v)}"
        for c, v in cells
        if c not in held or c in incomplete
    ]
    entry = {
        "id": claim["id"],
        "owner": claim["owner"],
        "source": claim["source"],
        "statement": claim.get("statement", ""),
        "metric": template,
        "metrics": {},
        "variants": {"cells": f"{'scaled' if scaled else 'unscaled'} attention inputs"},
        "paper": claim.get("paper") or {},
        "measured": {"layers judged": len(cells), "as expected in every seed": len(held)},
        "per_seed": {},
        "difference": None,
        "verdict": verdict,
        "rule": text,
        "layers": {c: v for c, v in cells},
        "explanation": (
            f"{len(held)} of {len(cells)} (variant, layer) cells as expected in every seed"
            + (f"; the others and those missing a seed: {'; '.join(exceptions)}" if exceptions else "")
        ),
    }
    entry.update(reasons(claim))
    return entry


def judge(
    claim: dict[str, Any],
    variants: dict[str, dict[str, Any]],
    config: dict[str, Any] | None = None,
    declared: int | None = None,
) -> dict[str, Any]:
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


def finished_count(claim: dict[str, Any], variants: dict[str, dict[str, Any]]) -> int | None:
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


def mark_provisional(entry: dict[str, Any], finished: int | None, declared: int | None) -> dict[str, Any]:
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


class BoardClaims(NamedTuple):
    """A board's judged claims: its claims file's, one against chance per unselectable fraction with a null, and (a
    board with ``bench.tuned``) its claims file's again at each variant's tuned rate."""

    claims: list[dict[str, Any]]
    against_chance: list[dict[str, Any]]
    tuned: list[dict[str, Any]]

    def fields(self, bench: dict[str, Any]) -> dict[str, Any]:
        """The board's keys these give: ``claims``, ``against_chance`` (when any) and, with ``bench.tuned``, the
        ``tuned`` view with the ``tuned_claims``."""
        out: dict[str, Any] = {"claims": self.claims}
        if self.against_chance:
            out["against_chance"] = self.against_chance
        if bench.get("tuned"):
            out["tuned"] = bench["tuned"]
            out["tuned_claims"] = self.tuned
        return out


def board_claims(bench: dict[str, Any], variants: list[dict[str, Any]], config: dict[str, Any] | None) -> BoardClaims:
    """A board's judged claims: those of its claims file (``bench.claims``), and one against chance per unselectable
    fraction with a null (:func:`normbench.judge.chance_rules.chance_claims`). With ``bench.tuned`` (the resolved
    view, :mod:`normbench.judge.tuned`) the claims file's claims are judged at the shared rate and again at the
    tuned rates, each claim's variants read at that rate."""
    specs = load_claims(bench["claims"]) if bench.get("claims") else []
    declared = len(bench.get("seeds") or []) or None
    against_chance = [judge(c, {v["name"]: v for v in variants}, None, declared) for c in chance_claims(variants)]
    view = bench.get("tuned")
    if not view:
        by_name = {v["name"]: v for v in variants}
        return BoardClaims([judge(c, by_name, config, declared) for c in specs], against_chance, [])
    judged = {}
    for rate in tuned.RATES:
        by_name = {v["name"]: v for v in tuned.at_rate(view, variants, rate)}
        judged[rate] = [
            {**judge(c, by_name, config, declared), "rates": tuned.rates_of(view, c.get("variants"), rate)}
            for c in specs
        ]
    return BoardClaims(judged["shared"], against_chance, judged["tuned"])


def judge_runs(claim: dict[str, Any], variants: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The rule of ``claim`` applied to the variants' per-seed values (see :func:`judge`)."""
    if claim["rule"]["kind"] in CLAIM_RULES:
        return CLAIM_RULES[claim["rule"]["kind"]](claim, variants)
    roles: dict[str, str] = claim["variants"]
    role_metrics: dict[str, str] = {role: (claim.get("metrics") or {}).get(role, claim["metric"]) for role in roles}
    measured: dict[str, float | None] = {}
    per_seed: dict[str, list[float | None]] = {}
    bounds: dict[str, list[float | None]] = {}
    seeds: dict[str, list[Any]] = {}  # each role's counted seeds, to name a censored one
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
    entry = {
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


def judge_grid(claim: dict[str, Any], grid: dict[str, Any]) -> dict[str, Any]:
    """Verdict of a ``grid`` rule on a random-grid result, measured on both statistics."""
    rule = claim["rule"]
    ds, ns = np.asarray(grid["ds"]), np.asarray(grid["ns"])
    rows = (ds >= rule["d"][0]) & (ds <= rule["d"][1])
    cols = (ns >= rule["n"][0]) & (ns <= rule["n"][1])
    reducers: dict[str, Callable[..., Any]] = {"min": np.min, "max": np.max, "mean": np.mean}
    reduce = reducers[rule["reduce"]]
    text0 = f"no cell of the grid has d in {rule['d']} and n in {rule['n']}"
    if not rows.any() or not cols.any():
        return {
            "id": claim["id"],
            "owner": claim["owner"],
            "source": claim["source"],
            "statement": claim["statement"],
            "paper": {},
            "measured": {"any_fraction": None, "mean_fraction": None},
            "holds_for": {"any_fraction": False, "mean_fraction": False},
            "verdict": "not run",
            "rule": text0,
        }
    measured = {
        stat: float(reduce(np.asarray(values)[np.ix_(rows, cols)]))
        for stat, values in grid["stats"][rule["keys"]].items()
    }
    bound = ("at_least", rule["at_least"]) if "at_least" in rule else ("at_most", rule["at_most"])
    holds = {stat: (v >= bound[1]) if bound[0] == "at_least" else (v <= bound[1]) for stat, v in measured.items()}
    text = (
        f"{rule['reduce']} of {rule['stat']} over {rule['keys']} keys, d in [{rule['d'][0]}, {rule['d'][1]}], "
        f"n in [{rule['n'][0]}, {rule['n'][1]}]; reproduced if {'>=' if bound[0] == 'at_least' else '<='} {bound[1]:g}"
    )
    return {
        "id": claim["id"],
        "owner": claim["owner"],
        "source": claim["source"],
        "statement": claim["statement"],
        **reasons(claim),
        "paper": {bound[0]: bound[1]},
        "measured": measured,
        "holds_for": holds,
        "verdict": "reproduced" if holds[rule["stat"]] else "not reproduced",
        "rule": text,
    }


def describe(values: dict[str, float | None]) -> str:
    return ", ".join(f"{k}: {_fmt(v)}" for k, v in values.items())


def describe_seeds(per_seed: dict[str, list[float | None]]) -> str:
    """``role: v1 / v2 / v3`` per role (``–`` for a seed without a value)."""
    return "; ".join(
        f"{role}: " + " / ".join(_fmt(v) if v is not None else "–" for v in values) for role, values in per_seed.items()
    )


def describe_difference(claim: dict[str, Any]) -> str:
    """``a − b = est [low, high], p`` of a judged claim, or why there is no interval."""
    diff = claim.get("difference")
    if not diff:
        return "n/a"
    a, b = (list(diff.get("of") or []) + ["?", "?"])[:2]
    if diff["low"] is None:
        return f"{a} − {b} = {_fmt(diff['estimate'])} (no interval: seeds {'/'.join(map(str, diff['n']))})"
    p = "" if diff.get("p_value") is None else f", p = {diff['p_value']:.2g}"
    return f"{a} − {b} = {_fmt(diff['estimate'])} [{_fmt(diff['low'])}, {_fmt(diff['high'])}]{p}"


# -- the rules, by kind: a new rule is one function and one entry --

Rule = dict[str, Any]
PerSeed = dict[str, list[float | None]]  # role -> per-seed values
Judged = tuple[str, str, Any, dict[str, Any]]  # verdict, rule text, Difference or None, extra fields of the entry
SeedRule = Callable[[Rule, Rule, PerSeed, PerSeed, Rule, PerSeed], Judged]  # the last: each role's seed ids


def _values(rule: Rule, claim: Rule, per_seed: PerSeed, bounds: PerSeed, measured: Rule, seeds: PerSeed) -> Judged:
    verdict, text, diff, gaps = judge_values(rule, claim["paper"], per_seed)
    return verdict, text, diff, {"gap_to_paper": gaps}


def _ratio(rule: Rule, claim: Rule, per_seed: PerSeed, bounds: PerSeed, measured: Rule, seeds: PerSeed) -> Judged:
    found: dict[str, Any] = {}
    verdict, text, ratio, diff = judge_ratio(rule, per_seed, bounds, seeds, found)
    return verdict, text, diff, {"measured": {**measured, "ratio": ratio}, **found}


def _ordering(rule: Rule, claim: Rule, per_seed: PerSeed, bounds: PerSeed, measured: Rule, seeds: PerSeed) -> Judged:
    found: dict[str, Any] = {}
    verdict, text, diff = judge_ordering(rule, per_seed, bounds, seeds, found)
    return verdict, text, diff, found


def _positive_zero(
    rule: Rule, claim: Rule, per_seed: PerSeed, bounds: PerSeed, measured: Rule, seeds: PerSeed
) -> Judged:
    return (*judge_positive_zero(rule, per_seed), {})


def _equivalence(rule: Rule, claim: Rule, per_seed: PerSeed, bounds: PerSeed, measured: Rule, seeds: PerSeed) -> Judged:
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
CLAIM_RULES: dict[str, Callable[[dict[str, Any], dict[str, dict[str, Any]]], dict[str, Any]]] = {
    "all_zero": judge_all_zero,
    "attention_feed": judge_attention_feed,
    "chance": judge_chance,
    "chance_growth": judge_chance_growth,
    "stability": judge_stability,
}
RULE_KINDS = (*SEED_RULES, *CLAIM_RULES, "grid")  # grid: a random-grid board's rule (:func:`judge_grid`)
