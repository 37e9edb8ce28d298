"""The claims registry: the papers' reported numbers (YAML data) and verdicts against measurements.

A claim names a leaderboard metric, the variants it compares (role -> variant name), the paper's
numbers and a rule (``values``, ``ratio``, ``ordering`` or ``positive_zero``, documented in each claims file). A
claim may read a different metric per role (``metrics: {role: metric}``), e.g. one model's keys
before and after its norm. :func:`judge` returns one of ``reproduced``, ``direction only``,
``not reproduced`` or ``not run``.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np
import yaml

VERDICTS = ("reproduced", "direction only", "not reproduced", "not run")


def load_claims(claims_id: str) -> list[dict[str, Any]]:
    """The claims of ``src/normbench/reporting/claims/<claims_id>.yaml``."""
    path = resources.files("normbench.reporting") / "claims" / f"{claims_id}.yaml"
    if not path.is_file():
        raise ValueError(f"bench.claims: no claims file named {claims_id!r}")
    return yaml.safe_load(path.read_text(encoding="utf-8"))["claims"]


def _fmt(x: float | str | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:.4g}" if isinstance(x, (int, float)) else str(x)


def judge_values(rule: dict[str, Any], paper: dict[str, float], measured: dict[str, float | None],
                 per_seed: dict[str, list[float | None]] | None = None) -> tuple[str, str]:
    """Ordering + tolerance rule; see the claims files for the wording.

    ``tolerance`` is absolute; ``rel_tolerance`` is a fraction of the paper's value; roles listed in
    ``exact`` must equal the paper's value in every seed (e.g. "0% after LayerNorm").
    """
    higher = rule["higher"]
    lower = next(r for r in paper if r != higher)
    exact = list(rule.get("exact") or [])
    if "rel_tolerance" in rule:
        rel = float(rule["rel_tolerance"])
        bound = {r: rel * abs(paper[r]) for r in paper}
        how = f"within ±{rel:.0%} of the paper's value"
    else:
        tol = float(rule["tolerance"])
        bound = {r: tol for r in paper}
        how = f"within ±{tol:g} of the paper"
    text = (
        f"reproduced if {higher} > {lower}"
        + "".join(f", {r} equals the paper's {paper[r]:g} in every seed," for r in exact)
        + f" and each {'other ' if exact else ''}measured mean is {how}; direction only if only the ordering holds; "
        "not reproduced if it is reversed"
    )
    if any(measured.get(r) is None for r in paper):
        return "not run", text + " (a measured value is missing)"
    ordered = measured[higher] > measured[lower]
    seeds = per_seed or {}
    close = all(all(v == paper[r] for v in (seeds.get(r) or [measured[r]])) if r in exact
                else abs(measured[r] - paper[r]) <= bound[r] for r in paper)
    if ordered and close:
        return "reproduced", text
    return ("direction only" if ordered else "not reproduced"), text


def judge_ratio(rule: dict[str, Any], measured: dict[str, float | None], bounds: dict[str, float | None]) -> tuple[str, str, float | None]:
    """Ratio rule on step counts; a role that never reached the target contributes a lower bound."""
    num, den, target, tol = rule["numerator"], rule["denominator"], float(rule["target"]), float(rule["tolerance"])
    text = f"r = {num} / {den}; reproduced if |r - {target:g}| <= {tol:g}; direction only if r is on the same side of 1"
    if measured.get(den) is None:
        return "not run", text + f" ({den} never reached the target within the run)", None
    if measured.get(num) is None:
        if bounds.get(num) is None:
            return "not run", text + f" ({num} missing)", None
        lower = bounds[num] / measured[den]
        verdict = "direction only" if (lower > 1) == (target > 1) and lower > 1 else "not run"
        return verdict, text + f" ({num} never reached it: r > {lower:.3g}, a lower bound)", None
    r = measured[num] / measured[den]
    if abs(r - target) <= tol:
        return "reproduced", text, r
    return ("direction only" if (r > 1) == (target > 1) else "not reproduced"), text, r


def judge_ordering(rule: dict[str, Any], measured: dict[str, float | None],
                   per_seed: dict[str, list[float | None]]) -> tuple[str, str]:
    """``lower`` role below the other: in the mean and in every seed (paired by position)."""
    lower = rule["lower"]
    other = next(r for r in measured if r != lower)
    text = (f"reproduced if {lower} < {other} in the mean and in every seed; direction only if only the "
            f"mean ordering holds; not reproduced if it is reversed")
    if measured.get(lower) is None or measured.get(other) is None:
        return "not run", text + " (a measured value is missing)"
    if measured[lower] >= measured[other]:
        return "not reproduced", text
    pairs = list(zip(per_seed.get(lower) or [], per_seed.get(other) or []))
    every = bool(pairs) and all(a is not None and b is not None and a < b for a, b in pairs)
    return ("reproduced" if every else "direction only"), text


def judge_positive_zero(rule: dict[str, Any], measured: dict[str, float | None],
                        per_seed: dict[str, list[float | None]]) -> tuple[str, str]:
    """``positive`` role above 0 and ``zero`` role exactly 0 in every seed."""
    pos, zero = rule["positive"], rule["zero"]
    text = (f"reproduced if {pos} > 0 and {zero} = 0 exactly in every seed; direction only if {pos} > {zero} "
            f"in the mean but {zero} is not always 0; not reproduced otherwise")
    if measured.get(pos) is None or measured.get(zero) is None:
        return "not run", text + " (a measured value is missing)"
    if all(v is not None and v > 0 for v in per_seed.get(pos) or []) and all(v == 0 for v in per_seed.get(zero) or []):
        return "reproduced", text
    return ("direction only" if measured[pos] > measured[zero] else "not reproduced"), text


def judge(claim: dict[str, Any], variants: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The leaderboard entry of ``claim`` given the leaderboard's variants (name -> entry)."""
    roles: dict[str, str] = claim["variants"]
    role_metrics: dict[str, str] = {role: (claim.get("metrics") or {}).get(role, claim["metric"]) for role in roles}
    measured: dict[str, float | None] = {}
    bounds: dict[str, float | None] = {}
    per_seed: dict[str, list[float | None]] = {}
    for role, name in roles.items():
        metric = (variants.get(name) or {}).get("metrics", {}).get(role_metrics[role]) or {}
        measured[role] = metric.get("mean")
        bounds[role] = metric.get("lower_bound")
        per_seed[role] = metric.get("per_seed") or []
    rule = claim["rule"]
    entry = {
        "id": claim["id"],
        "source": claim["source"],
        "statement": claim.get("statement", ""),
        "metric": claim["metric"],
        "metrics": role_metrics,
        "variants": roles,
        "paper": claim["paper"],
        "measured": measured,
    }
    if rule["kind"] == "values":
        verdict, text = judge_values(rule, claim["paper"], measured, per_seed)
    elif rule["kind"] == "ratio":
        verdict, text, ratio = judge_ratio(rule, measured, bounds)
        entry["measured"] = {**measured, "ratio_without_to_with": ratio}
    elif rule["kind"] == "ordering":
        verdict, text = judge_ordering(rule, measured, per_seed)
    elif rule["kind"] == "positive_zero":
        verdict, text = judge_positive_zero(rule, measured, per_seed)
    else:
        raise ValueError(f"claim {claim['id']}: unknown rule kind {rule['kind']!r}")
    return {**entry, "verdict": verdict, "rule": text}


def judge_grid(claim: dict[str, Any], grid: dict[str, Any]) -> dict[str, Any]:
    """Verdict of a ``grid`` rule on a random-grid result, measured on both statistics."""
    rule = claim["rule"]
    ds, ns = np.asarray(grid["ds"]), np.asarray(grid["ns"])
    rows = (ds >= rule["d"][0]) & (ds <= rule["d"][1])
    cols = (ns >= rule["n"][0]) & (ns <= rule["n"][1])
    reduce = {"min": np.min, "max": np.max, "mean": np.mean}[rule["reduce"]]
    text0 = f"no cell of the grid has d in {rule['d']} and n in {rule['n']}"
    if not rows.any() or not cols.any():
        return {"id": claim["id"], "source": claim["source"], "statement": claim["statement"], "paper": {},
                "measured": {"any_fraction": None, "mean_fraction": None}, "holds_for": {"any_fraction": False, "mean_fraction": False},
                "verdict": "not run", "rule": text0}
    measured = {stat: float(reduce(np.asarray(values)[np.ix_(rows, cols)]))
                for stat, values in grid["stats"][rule["keys"]].items()}
    bound = ("at_least", rule["at_least"]) if "at_least" in rule else ("at_most", rule["at_most"])
    holds = {stat: (v >= bound[1]) if bound[0] == "at_least" else (v <= bound[1]) for stat, v in measured.items()}
    text = (f"{rule['reduce']} of {rule['stat']} over {rule['keys']} keys, d in [{rule['d'][0]}, {rule['d'][1]}], "
            f"n in [{rule['n'][0]}, {rule['n'][1]}]; reproduced if {'>=' if bound[0] == 'at_least' else '<='} {bound[1]:g}")
    return {
        "id": claim["id"], "source": claim["source"], "statement": claim["statement"],
        "paper": {bound[0]: bound[1]}, "measured": measured, "holds_for": holds,
        "verdict": "reproduced" if holds[rule["stat"]] else "not reproduced", "rule": text,
    }


def describe(values: dict[str, float | None]) -> str:
    return ", ".join(f"{k}: {_fmt(v)}" for k, v in values.items())
