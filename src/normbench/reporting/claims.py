"""The claims registry: the papers' reported numbers (YAML data) and verdicts against measurements.

A claim names a leaderboard metric, the variants it compares (role -> variant name), the paper's
numbers and a rule (``values``, ``ratio``, ``ordering``, ``positive_zero``, ``within_spread``,
``all_zero`` or ``attention_feed``,
documented in each claims file). A claim may read a different metric per role (``metrics: {role:
metric}``), e.g. one model's keys before and after its norm. Every claim says whose it is (``owner``: ``paper`` for a number the
paper reports, ``normbench`` for a target of our own, with ``why``). :func:`judge` returns one of
``reproduced``, ``direction only``, ``inconclusive``, ``not reproduced`` or ``not run``; an
ordering counts only when it is significant over seeds (:mod:`normbench.reporting.stats`). Only
seeds that finished without diverging are judged; the rule text names the others.
"""

from __future__ import annotations

import statistics
from importlib import resources
from typing import Any

import numpy as np
import yaml

from normbench.nn.norms import get_component
from normbench.nn.placement import attention_input_norm
from normbench.reporting.stats import Interval, difference_interval, mean_interval, values_of

VERDICTS = ("reproduced", "direction only", "inconclusive", "not reproduced", "not run")
OWNERS = ("paper", "normbench")


def load_claims(claims_id: str) -> list[dict[str, Any]]:
    """The claims of ``src/normbench/reporting/claims/<claims_id>.yaml``, each marked whose it is."""
    path = resources.files("normbench.reporting") / "claims" / f"{claims_id}.yaml"
    if not path.is_file():
        raise ValueError(f"bench.claims: no claims file named {claims_id!r}")
    claims = yaml.safe_load(path.read_text(encoding="utf-8"))["claims"]
    for claim in claims:
        if claim.get("owner") not in OWNERS:
            raise ValueError(f"claim {claim.get('id')!r}: owner must be one of {', '.join(OWNERS)}")
        rule = claim.get("rule") or {}
        if rule.get("kind") == "within_spread":
            roles = list(claim.get("variants") or {})
            if len(roles) != 2 or rule.get("reference") not in roles:
                raise ValueError(f"claim {claim.get('id')!r}: rule.reference must name one of its two roles, "
                                 f"got {rule.get('reference')!r} (roles: {', '.join(roles)})")
            if rule.get("better") not in (None, "higher", "lower"):
                raise ValueError(f"claim {claim.get('id')!r}: rule.better must be higher or lower, got {rule['better']!r}")
    return claims


def _fmt(x: float | str | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:.4g}" if isinstance(x, (int, float)) else str(x)


SIGNIFICANCE = ("the ordering counts only when the 95% Welch interval of the difference of the seed means "
                "excludes 0; otherwise inconclusive")


def ordering_verdict(diff: Interval | None, sign: int) -> str | None:
    """``None`` if the ordering (``sign`` = +1: first > second) is significant, else the verdict it forces."""
    if diff is None or not diff.excludes_zero():
        return "inconclusive"
    return None if (diff.estimate > 0) == (sign > 0) else "not reproduced"


def judge_values(rule: dict[str, Any], paper: dict[str, float], per_seed: dict[str, list[float | None]]
                 ) -> tuple[str, str, Interval | None]:
    """Significant ordering, then the paper's values: each inside its role's 95% interval of the mean
    or within the stated tolerance (``tolerance`` absolute, ``rel_tolerance`` a fraction of the
    paper's value); roles in ``exact`` must equal the paper's value in every seed."""
    higher = rule["higher"]
    lower = next(r for r in paper if r != higher)
    exact = list(rule.get("exact") or [])
    if "rel_tolerance" in rule:
        bound = {r: float(rule["rel_tolerance"]) * abs(paper[r]) for r in paper}
        how = f"within ±{float(rule['rel_tolerance']):.0%} of it"
    else:
        bound = {r: float(rule["tolerance"]) for r in paper}
        how = f"within ±{float(rule['tolerance']):g} of it"
    text = (f"reproduced if {higher} > {lower} significantly"
            + "".join(f", {r} equals the paper's {paper[r]:g} in every seed" for r in exact)
            + f" and each {'other ' if exact else ''}paper value lies in the measured 95% interval or {how}; "
            f"direction only if only the ordering is significant; not reproduced if significantly reversed; "
            f"{SIGNIFICANCE}")
    samples = {r: values_of(per_seed.get(r)) for r in paper}
    if any(not samples[r] or len(samples[r]) < len(per_seed.get(r) or []) for r in paper):
        return "not run", text + " (a measured value is missing)", None
    diff = difference_interval(samples[higher], samples[lower], (higher, lower))
    forced = ordering_verdict(diff, +1)
    if forced:
        return forced, text, diff

    def close(role: str) -> bool:
        if role in exact:
            return all(v == paper[role] for v in samples[role])
        interval = mean_interval(samples[role])
        return (interval is not None and interval.contains(paper[role])) or \
            abs(statistics.fmean(samples[role]) - paper[role]) <= bound[role]

    return ("reproduced" if all(close(r) for r in paper) else "direction only"), text, diff


def judge_ratio(rule: dict[str, Any], per_seed: dict[str, list[float | None]],
                bounds: dict[str, list[float | None]]) -> tuple[str, str, float | None, Interval | None]:
    """Ratio of mean step counts; a seed that never reached the target counts with its last step (a
    lower bound, which can only understate a numerator > denominator)."""
    num, den, target, tol = rule["numerator"], rule["denominator"], float(rule["target"]), float(rule["tolerance"])
    text = (f"r = {num} / {den} (mean steps); reproduced if |r - {target:g}| <= {tol:g} and the ordering is "
            f"significant; direction only if only the ordering is; {SIGNIFICANCE}")
    den_steps = values_of(per_seed.get(den))
    if not den_steps or len(den_steps) < len(per_seed.get(den) or []):
        return "not run", text + f" ({den} never reached the target within the run)", None, None
    num_steps = values_of(per_seed.get(num))
    complete = bool(num_steps) and len(num_steps) == len(per_seed.get(num) or [])
    if not complete:  # seeds that never reached the target count with their last step, a lower bound
        num_steps = values_of(bounds.get(num))
        if not num_steps or len(num_steps) < len(per_seed.get(num) or []):
            return "not run", text + f" ({num} missing in some seed)", None, None
    diff = difference_interval(num_steps, den_steps, (num, den))
    sign = 1 if target > 1 else -1
    forced = ordering_verdict(diff, sign)
    r = statistics.fmean(num_steps) / statistics.fmean(den_steps)
    if not complete:
        # lower bounds can only show the numerator significantly larger; anything else is undecided
        text += f" ({num} did not reach it in every seed: r > {r:.3g}, a lower bound)"
        shows_larger = diff is not None and diff.excludes_zero() and diff.estimate > 0
        return ("direction only" if sign > 0 and shows_larger else "inconclusive"), text, None, diff
    if forced:
        return forced, text, r, diff
    return ("reproduced" if abs(r - target) <= tol else "direction only"), text, r, diff


def judge_ordering(rule: dict[str, Any], per_seed: dict[str, list[float | None]],
                   bounds: dict[str, list[float | None]] | None = None) -> tuple[str, str, Interval | None]:
    """``lower`` role below the other, significantly over seeds. Every seed of ``lower`` needs a value;
    the other role's seeds that never reached a threshold count with their lower bounds (which can
    only understate how much higher it is)."""
    bounds = bounds or {}
    lower = rule["lower"]
    other = next(r for r in per_seed if r != lower)
    text = f"reproduced if {lower} < {other} significantly; not reproduced if significantly reversed; {SIGNIFICANCE}"
    a, b = values_of(per_seed.get(lower)), values_of(per_seed.get(other))
    if len(b) < len(per_seed.get(other) or []):  # seeds that never reached a threshold: their lower bounds
        b = values_of(bounds.get(other))
        if len(b) < len(per_seed.get(other) or []):
            b = []
        else:
            text += f" ({other} did not reach it in every seed: its last steps are used, lower bounds)"
    if not a or not b or len(a) < len(per_seed.get(lower) or []):
        return "not run", text + " (a measured value is missing)", None
    diff = difference_interval(a, b, (lower, other))
    return (ordering_verdict(diff, -1) or "reproduced"), text, diff


def judge_positive_zero(rule: dict[str, Any], per_seed: dict[str, list[float | None]]
                        ) -> tuple[str, str, Interval | None]:
    """``positive`` role above 0 and ``zero`` role exactly 0, in every seed of at least two."""
    pos, zero = rule["positive"], rule["zero"]
    text = (f"reproduced if {pos} > 0 and {zero} = 0 exactly in every seed (at least 2 seeds each); "
            f"direction only if {pos} > {zero} significantly but {zero} is not always 0; inconclusive with one "
            f"seed or no significant difference; not reproduced otherwise")
    a, b = values_of(per_seed.get(pos)), values_of(per_seed.get(zero))
    if not a or not b:
        return "not run", text + " (a measured value is missing)", None
    diff = difference_interval(a, b, (pos, zero))
    if min(len(a), len(b)) < 2:
        return "inconclusive", text + " (one seed)", diff
    if all(v > 0 for v in a) and all(v == 0 for v in b):
        return "reproduced", text, diff
    forced = ordering_verdict(diff, +1)
    return (forced or "direction only"), text, diff


def judge_within_spread(rule: dict[str, Any], per_seed: dict[str, list[float | None]]
                        ) -> tuple[str, str, Interval | None]:
    """"Matches the reference": the candidate's mean inside the range of the reference's seeds.

    With ``better: higher`` (or ``lower``) the claim is "matches or beats": a mean beyond the range
    on the better side counts as reproduced too.
    """
    ref, better = rule["reference"], rule.get("better")
    if better not in (None, "higher", "lower"):
        raise ValueError(f"rule.better: must be higher or lower, got {better!r}")
    cand = next(r for r in per_seed if r != ref)
    bound = {"higher": f"at least the lowest of {ref}'s seeds", "lower": f"at most the highest of {ref}'s seeds",
             None: f"within the range of {ref}'s seeds (min to max)"}[better]
    text = (f"reproduced if the mean of {cand} is {bound}; not reproduced if it is outside and the difference is "
            f"significant; inconclusive otherwise; {SIGNIFICANCE}")
    a, b = values_of(per_seed.get(cand)), values_of(per_seed.get(ref))
    if not a or not b or len(a) < len(per_seed.get(cand) or []) or len(b) < len(per_seed.get(ref) or []):
        return "not run", text + " (a measured value is missing)", None
    diff = difference_interval(a, b, (cand, ref))
    mean = statistics.fmean(a)
    low = min(b) if better != "lower" else float("-inf")
    high = max(b) if better != "higher" else float("inf")
    if low <= mean <= high:
        return "reproduced", text, diff
    significant = diff is not None and diff.excludes_zero()
    return ("not reproduced" if significant else "inconclusive"), text, diff


def finished_seeds(variant: dict[str, Any]) -> tuple[list[bool], str]:
    """Which of a leaderboard variant's seeds a verdict counts (those that did not diverge), and a
    note naming the others, e.g. ``2 of 3 seeds; seed 1 diverged at step 40`` (``""`` when all count)."""
    seeds = list(variant.get("seeds") or [])
    diverged = variant.get("diverged_at_step") or {}
    failed = variant.get("failed") or {}
    keep = [str(seed) not in diverged for seed in seeds]
    if not diverged and not failed:
        return keep, ""
    why = [f"seed {seed} diverged" + (f" at step {step}" if step is not None else "") for seed, step in diverged.items()]
    why += [f"seed {seed} failed" for seed in failed]
    return keep, f"{sum(keep)} of {len(seeds) + len(failed)} seeds; {', '.join(why)}"


def counted(values: list[Any], keep: list[bool]) -> list[Any]:
    """The entries of ``values`` (one per seed) whose seed counts; ``values`` as they are when they
    do not line up with the seeds (a leaderboard that names none)."""
    return [v for v, k in zip(values, keep) if k] if len(values) == len(keep) else list(values)


def counted_note(notes: list[str]) -> str:
    """`` (counted: NAME: 2 of 3 seeds; seed 1 diverged at step 40)`` for the variants with seeds left out."""
    return f" (counted: {'; '.join(notes)})" if notes else ""


def reasons(claim: dict[str, Any]) -> dict[str, str]:
    """The claim's ``why`` (the reasoning behind it) and ``note`` (what is known about its measurement), where given."""
    return {key: claim[key] for key in ("why", "note") if claim.get(key)}


def source_text(claim: dict[str, Any]) -> str:
    """A judged claim's source, then its ``why`` and ``note`` where given, as the leaderboards print it."""
    return claim["source"] + "".join(f" — {key}: {text}" for key, text in reasons(claim).items())


def judge_all_zero(claim: dict[str, Any], variants: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Every seed (and layer, for a metric with ``{layer}``) of every named variant measures exactly 0."""
    template, roles = claim["metric"], claim["variants"]
    cells: list[tuple[str, list[float | None]]] = []
    notes: list[str] = []
    for role, name in roles.items():
        variant = variants.get(name) or {}
        keep, note = finished_seeds(variant)
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
    verdict = ("not run" if not measured else "not reproduced" if broken
               else "inconclusive" if incomplete else "reproduced")
    text = ("reproduced if the metric is exactly 0 in every seed (and layer) of every variant named; not reproduced "
            "if any seed measures more; a seed without a value makes a reproduced inconclusive; diverged seeds do not "
            "count") + counted_note(notes)
    exceptions = [f"{c}: {' / '.join(_fmt(x) if x is not None else '–' for x in v)}" for c, v in cells
                  if c not in held or c in incomplete]
    entry = {
        "id": claim["id"], "owner": claim["owner"], "source": claim["source"], "statement": claim.get("statement", ""),
        "metric": template, "metrics": {}, "variants": roles, "paper": claim.get("paper") or {},
        "measured": {"cells judged": len(cells), "zero in every seed": len(held)},
        "per_seed": {}, "difference": None, "verdict": verdict, "rule": text, "layers": dict(cells),
        "explanation": (f"{len(held)} of {len(cells)} cells are 0 in every seed"
                        + (f"; the others: {'; '.join(exceptions)}" if exceptions else "")),
    }
    entry.update(reasons(claim))
    return entry


def attention_feed(variant: dict[str, Any], layer: int) -> str | None:
    """The component of the norm whose output is layer ``layer``'s attention input in a leaderboard
    variant (its ``placement``, ``norms`` and ``norm_roles``), ``None`` where the residual stream or
    the raw embedding is. A one-line error for a variant that does not record its norms' roles."""
    roles = variant.get("norm_roles")
    if not roles or variant.get("placement") is None:
        raise ValueError(f"variant {variant.get('name')!r}: its records name no norm roles or placement; "
                         "rebuild its leaderboard from the run records")
    components = {f"{k}_norm": spec["component"] for k, spec in (variant.get("norms") or {}).items()}
    present = {f"{k}_norm": role for k, role in roles.items() if f"{k}_norm" in components}
    # an import path names a plug-in module: never the identity, never a known scaling (and not imported here)
    identity = {name for name, c in components.items() if ":" not in c and get_component(c).identity}
    name = attention_input_norm(variant["placement"], layer, present, identity)
    return None if name is None else components[name]


FEED_EXPECTATIONS = ("scaled", "unscaled")


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
        raise ValueError(f"claim {claim['id']}: rule.expect must be one of {', '.join(FEED_EXPECTATIONS)}, "
                         f"got {rule.get('expect')!r}")
    scaled = rule["expect"] == "scaled"
    cells: list[tuple[str, list[float | None]]] = []
    notes: list[str] = []
    for name, variant in variants.items():
        n_layers = int(variant.get("n_layers") or 1)
        keep, note = finished_seeds(variant)
        judged = False
        for layer in range(1, n_layers + 1) if "{layer}" in template else [1]:
            feed = attention_feed({**variant, "name": name}, layer)
            if (feed is not None and ":" not in feed and get_component(feed).scales) != scaled:
                continue
            judged = True
            metric = (variant.get("metrics") or {}).get(template.format(layer=layer)) or {}
            cells.append((f"{name} L{layer} ({feed or 'no norm'})", counted(list(metric.get("per_seed") or [None]), keep)))
        notes += [f"{name}: {note}"] if note and judged else []
    measured_cells = [(c, values_of(v)) for c, v in cells if values_of(v)]
    incomplete = [c for c, v in cells if len(values_of(v)) < len(v)]
    if scaled:
        text = ("every (variant, layer) whose attention input a scaling norm feeds: reproduced if 0 unselectable keys "
                "in every seed; not reproduced if any seed has one")
        held = [c for c, v in measured_cells if all(x == 0 for x in v)]
        broken = [c for c, v in measured_cells if any(x > 0 for x in v)]
        verdict = "not reproduced" if broken else "reproduced"
    else:
        text = ("every (variant, layer) whose attention input no scaling norm feeds: reproduced if > 0 unselectable "
                "keys in every seed; not reproduced if a layer has none in every seed; inconclusive if seeds disagree")
        held = [c for c, v in measured_cells if all(x > 0 for x in v)]
        broken = [c for c, v in measured_cells if all(x == 0 for x in v)]
        verdict = ("reproduced" if len(held) == len(measured_cells) else "not reproduced" if broken
                   else "inconclusive")
    if not measured_cells:
        verdict = "not run"
    elif verdict == "reproduced" and incomplete:
        verdict = "inconclusive"
    text += ("; judged over the variants with finished runs (diverged seeds do not count), a seed without a value "
             "makes a reproduced inconclusive") + counted_note(notes)
    exceptions = [f"{c}: {' / '.join(_fmt(x) if x is not None else '–' for x in v)}" for c, v in cells
                  if c not in held or c in incomplete]
    entry = {
        "id": claim["id"], "owner": claim["owner"], "source": claim["source"], "statement": claim.get("statement", ""),
        "metric": template, "metrics": {}, "variants": {"cells": f"{'scaled' if scaled else 'unscaled'} attention inputs"},
        "paper": claim.get("paper") or {},
        "measured": {"layers judged": len(cells), "as expected in every seed": len(held)},
        "per_seed": {}, "difference": None, "verdict": verdict, "rule": text,
        "layers": {c: v for c, v in cells},
        "explanation": (f"{len(held)} of {len(cells)} (variant, layer) cells as expected in every seed"
                        + (f"; the others and those missing a seed: {'; '.join(exceptions)}" if exceptions else "")),
    }
    entry.update(reasons(claim))
    return entry


def judge(claim: dict[str, Any], variants: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The leaderboard entry of ``claim`` given the leaderboard's variants (name -> entry)."""
    if claim["rule"]["kind"] == "attention_feed":
        return judge_attention_feed(claim, variants)
    if claim["rule"]["kind"] == "all_zero":
        return judge_all_zero(claim, variants)
    roles: dict[str, str] = claim["variants"]
    role_metrics: dict[str, str] = {role: (claim.get("metrics") or {}).get(role, claim["metric"]) for role in roles}
    measured: dict[str, float | None] = {}
    per_seed: dict[str, list[float | None]] = {}
    bounds: dict[str, list[float | None]] = {}
    notes: list[str] = []
    for role, name in roles.items():
        variant = variants.get(name) or {}
        metric = variant.get("metrics", {}).get(role_metrics[role]) or {}
        keep, note = finished_seeds(variant)  # only seeds that finished without diverging are judged
        notes += [f"{name}: {note}"] if note else []
        measured[role] = metric.get("mean")
        per_seed[role] = counted(metric.get("per_seed") or [], keep)
        bounds[role] = counted(metric.get("per_seed_lower_bound") or [], keep)
    rule = claim["rule"]
    entry = {
        "id": claim["id"],
        "owner": claim["owner"],
        "source": claim["source"],
        "statement": claim.get("statement", ""),
        "metric": claim["metric"],
        "metrics": role_metrics,
        "variants": roles,
        "paper": claim.get("paper") or {},
        "measured": measured,
        "per_seed": per_seed,
    }
    entry.update(reasons(claim))
    if rule["kind"] == "values":
        verdict, text, diff = judge_values(rule, claim["paper"], per_seed)
    elif rule["kind"] == "ratio":
        verdict, text, ratio, diff = judge_ratio(rule, per_seed, bounds)
        entry["measured"] = {**measured, "ratio": ratio}
    elif rule["kind"] == "ordering":
        verdict, text, diff = judge_ordering(rule, per_seed, bounds)
    elif rule["kind"] == "positive_zero":
        verdict, text, diff = judge_positive_zero(rule, per_seed)
    elif rule["kind"] == "within_spread":
        verdict, text, diff = judge_within_spread(rule, per_seed)
    else:
        raise ValueError(f"claim {claim['id']}: unknown rule kind {rule['kind']!r}")
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
    reduce = {"min": np.min, "max": np.max, "mean": np.mean}[rule["reduce"]]
    text0 = f"no cell of the grid has d in {rule['d']} and n in {rule['n']}"
    if not rows.any() or not cols.any():
        return {"id": claim["id"], "owner": claim["owner"], "source": claim["source"], "statement": claim["statement"], "paper": {},
                "measured": {"any_fraction": None, "mean_fraction": None}, "holds_for": {"any_fraction": False, "mean_fraction": False},
                "verdict": "not run", "rule": text0}
    measured = {stat: float(reduce(np.asarray(values)[np.ix_(rows, cols)]))
                for stat, values in grid["stats"][rule["keys"]].items()}
    bound = ("at_least", rule["at_least"]) if "at_least" in rule else ("at_most", rule["at_most"])
    holds = {stat: (v >= bound[1]) if bound[0] == "at_least" else (v <= bound[1]) for stat, v in measured.items()}
    text = (f"{rule['reduce']} of {rule['stat']} over {rule['keys']} keys, d in [{rule['d'][0]}, {rule['d'][1]}], "
            f"n in [{rule['n'][0]}, {rule['n'][1]}]; reproduced if {'>=' if bound[0] == 'at_least' else '<='} {bound[1]:g}")
    return {
        "id": claim["id"], "owner": claim["owner"], "source": claim["source"], "statement": claim["statement"],
        **reasons(claim),
        "paper": {bound[0]: bound[1]}, "measured": measured, "holds_for": holds,
        "verdict": "reproduced" if holds[rule["stat"]] else "not reproduced", "rule": text,
    }


def describe(values: dict[str, float | None]) -> str:
    return ", ".join(f"{k}: {_fmt(v)}" for k, v in values.items())


def describe_seeds(per_seed: dict[str, list[float | None]]) -> str:
    """``role: v1 / v2 / v3`` per role (``–`` for a seed without a value)."""
    return "; ".join(f"{role}: " + " / ".join(_fmt(v) if v is not None else "–" for v in values)
                     for role, values in per_seed.items())


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
