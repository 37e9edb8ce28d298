"""Claims against chance: trained keys beside random keys of the same count and dimension.

An unselectable fraction means little on its own: in low dimensions most random keys lie inside the hull of the
others. Every fraction a board shows has its null beside it (:func:`normbench.judge.chance.board.with_chance`:
the matched null, drawn until its standard error is below a tenth of the seed spread). Three rules read it:

* ``chance`` (one cell: a variant's column): the trained keys are unselectable *more* often than random keys,
  the premise of reading an unselectable fraction as something training did. d = mean over seeds − the null's
  mean, Welch 95% interval with SE² = s²/n + SE_null² (:func:`normbench.judge.stats.null_difference`);
  reproduced if the interval lies above 0, not reproduced if below ("below chance": the trained keys are *more*
  selectable than random keys), inconclusive otherwise. :func:`chance_claims` makes one per cell of a board.
* ``chance_growth`` (one variant, two key counts): the fraction grows with the number of keys faster than the
  null's does. Per seed g = f(large) − f(small) against the null's g0 = c(large) − c(small), SE_null² the sum of
  both nulls' SE², the same interval and verdicts.
* ``chance_at`` (a field of a paper's claim): the null at the paper's own key counts and dimension beside the
  paper's value, and whether that value lies below, at or above it (:func:`paper_chance`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import cast

from normbench.formatting import significant
from normbench.judge.chance.null import chance_fraction
from normbench.judge.entries import ClaimEntry, JudgedEntry, NullAtKeys, PaperChance
from normbench.judge.rows import NullBlock, VariantRow
from normbench.judge.stats import Interval, null_difference, values_of
from normbench.judge.verdicts.counting import counted, counted_note, entry_head, finished_seeds, reasons

OWNER_WHY = (
    "A fraction of unselectable keys is evidence about training only beside what random keys of the same count "
    "and dimension give (in low dimensions most random keys are unselectable too)."
)
# the layer-level columns that get a claim per cell (the first-k key-set columns are judged by chance_growth; SST-2's
# any-layer token fraction has no single null: its layers share the residual stream, so its chance lies between the
# one-layer value and the independent-layers value the board shows, and its per-layer columns are judged instead)
CELL_COLUMN = re.compile(
    r"unselectable_(?:(?:after|before)_)?L\d+|unselectable_heads_L\d+|class_keys_unselectable(?:_heads)?"
)
PAPER_CHANCE_SETS = 64  # d = 7-8, n = 768-1024: standard error about 0.002, a few seconds a value


def verdict_of(diff: Interval | None) -> str:
    """reproduced (above the null), not reproduced (below), inconclusive (the interval holds 0, or no interval)."""
    if diff is None:
        return "not run"
    if diff.low is None or diff.high is None:
        return "inconclusive"
    return "reproduced" if diff.low > 0 else "not reproduced" if diff.high < 0 else "inconclusive"


def in_words(diff: Interval | None, what: str = "unselectable") -> str:
    """Where the trained value sits against the null, in words."""
    if diff is None:
        return "no value"
    if diff.low is not None and diff.high is not None and diff.high < 0:
        return f"below chance: the trained keys are {what} less often than random keys (more selectable)"
    if diff.low is not None and diff.high is not None and diff.low > 0:
        return f"above chance: the trained keys are {what} more often than random keys"
    return "at chance within the seeds' resolution: the 95% interval holds the null"


def _entry(claim: ClaimEntry, per_seed: dict[str, list[float | None]], measured: Mapping[str, float | None],
           diff: Interval | None, text: str, explanation: str, notes: list[str]) -> JudgedEntry:  # fmt: skip
    entry: JudgedEntry = {
        **entry_head(claim),
        "metrics": dict(claim.get("metrics") or {}),
        "variants": dict(claim["variants"]),
        "measured": measured,
        "per_seed": per_seed,
        "difference": None if diff is None else diff.as_dict(),
        "verdict": verdict_of(diff),
        "rule": text + counted_note(notes),
        "explanation": explanation,
    }
    entry.update(reasons(claim))
    if notes:
        entry["counted"] = notes
    return entry


def _cell(
    variants: dict[str, VariantRow], name: str, metric: str
) -> tuple[list[float | None], NullBlock | None, list[str]]:
    """(the counted per-seed values, the null, notes on seeds left out) of one variant's column."""
    variant = variants.get(name) or {}
    keep, note = finished_seeds(variant, geometric=True)
    agg = (variant.get("metrics") or {}).get(metric) or {}
    chance = agg.get("chance")
    return counted(list(agg.get("per_seed") or []), keep), chance, [f"{name}: {note}"] if note else []


def judge_chance(claim: ClaimEntry, variants: dict[str, VariantRow]) -> JudgedEntry:
    """The ``chance`` rule on one cell (role ``trained``: the variant; ``metric``: its column)."""
    (name,) = claim["variants"].values()
    values, null, notes = _cell(variants, name, claim["metric"])
    text = (
        "d = mean over seeds − the null's mean (random keys of the same count and dimension, drawn with the trained "
        "keys' own mean and covariance: the i.i.d. Gaussian value by affine invariance); Welch 95% interval with the "
        "null's standard error; reproduced if it lies above 0, not reproduced if below, inconclusive otherwise"
    )
    if not null or null.get("sanity_check") or not values_of(values):
        why = "no null for these keys" if not null or null.get("sanity_check") else "no seed has a value"
        return _entry(claim, {"trained": values}, {}, None, text, why, notes)  # no interval: not run
    diff = null_difference(values, null["mean"], null.get("sem"), int(null.get("sets") or 1), ("trained", "null"))
    measured = {"trained": sum(values_of(values)) / len(values_of(values)), "null": null["mean"],
                "null_sem": null.get("sem"), "null_draws": null.get("sets")}  # fmt: skip
    return _entry(claim, {"trained": values}, measured, diff, text, in_words(diff), notes)


def judge_chance_growth(claim: ClaimEntry, variants: dict[str, VariantRow]) -> JudgedEntry:
    """The ``chance_growth`` rule: roles ``small``/``large`` name one variant's columns at two key counts."""
    roles, metrics = claim["variants"], claim["metrics"]
    names = set(roles.values())
    if set(roles) != {"small", "large"} or len(names) != 1:
        raise ValueError(f"claim {claim['id']}: chance_growth needs roles small and large naming one variant")
    (name,) = names
    small, null_s, notes = _cell(variants, name, metrics["small"])
    large, null_l, _ = _cell(variants, name, metrics["large"])
    text = (
        "per seed g = fraction among the larger key sets − among the smaller; the null's growth g0 = its value at the "
        "larger count − at the smaller, its standard error the two nulls' combined; Welch 95% interval of "
        "mean(g) − g0; reproduced if it lies above 0 (the trained keys' fraction grows faster than random keys'), "
        "not reproduced if below, inconclusive otherwise"
    )
    growth = [None if a is None or b is None else b - a for a, b in zip(small, large, strict=False)]
    if not null_s or not null_l or null_s.get("sanity_check") or not values_of(growth):
        why = "no null for these keys" if not null_s or not null_l else "no seed has both values"
        return _entry(claim, {"growth": growth}, {}, None, text, why, notes)  # no interval: not run
    g0 = null_l["mean"] - null_s["mean"]
    sem = math.hypot(float(null_s.get("sem") or 0.0), float(null_l.get("sem") or 0.0))
    draws = min(int(null_s.get("sets") or 1), int(null_l.get("sets") or 1))
    diff = null_difference(growth, g0, sem, draws, ("trained growth", "null growth"))
    measured = {"trained growth": sum(values_of(growth)) / len(values_of(growth)), "null growth": g0,
                "null growth sem": sem}  # fmt: skip
    words = (
        in_words(diff, "unselectable")
        .replace("are unselectable", "grow")
        .replace("at chance within", "grows as random keys' does within")
    )
    return _entry(claim, {"growth": growth}, measured, diff, text, words, notes)


def chance_claims(variants: Sequence[VariantRow]) -> list[ClaimEntry]:
    """One ``chance`` claim per cell (variant, layer-level unselectable column) that has a null (not a sanity check:
    keys on a sphere are never unselectable), in the board's order."""
    claims: list[ClaimEntry] = []
    for variant in variants:
        for metric, agg in (variant.get("metrics") or {}).items():
            chance = agg.get("chance") if isinstance(agg, dict) else None
            if not chance or chance.get("sanity_check") or not CELL_COLUMN.fullmatch(metric):
                continue
            claims.append(
                {
                    "id": f"normbench.chance.{variant['name']}.{metric}",
                    "owner": "normbench",
                    "source": "normbench (matched random-key null)",
                    "statement": f"{variant['name']}, {metric}: the trained keys are unselectable more often than "
                    "random keys of the same count and dimension",
                    "why": OWNER_WHY,
                    "metric": metric,
                    "variants": {"trained": variant["name"]},
                    "rule": {"kind": "chance"},
                }
            )
    return claims


def paper_chance(claim: ClaimEntry) -> PaperChance | None:
    """The null at the paper's own key counts beside its value (a claim's ``chance_at: {role, d, n: [...]}``):
    ``{role, d, n, null: [{n, mean, sem, sets}], paper, position, text}``; ``None`` for a claim without one."""
    spec = claim.get("chance_at")
    if not spec:
        return None
    role, d, ns = spec["role"], int(spec["d"]), [int(n) for n in spec["n"]]
    paper = cast("float | None", (claim.get("paper") or {}).get(role))  # chance_at.role: a fraction the paper reports
    if paper is None:
        raise ValueError(f"claim {claim['id']}: chance_at.role {role!r} has no paper value")
    nulls = [chance_fraction(d, n, sets=PAPER_CHANCE_SETS) for n in ns]
    rows: list[NullAtKeys] = [
        {"n": n, "mean": r["mean"], "sem": r["sem"], "sets": r["sets"]} for n, r in zip(ns, nulls, strict=True)
    ]
    low = min(r["mean"] - 2 * (r["sem"] or 0) for r in rows)
    high = max(r["mean"] + 2 * (r["sem"] or 0) for r in rows)
    position = "below" if paper < low else "above" if paper > high else "at"
    span = " to ".join(f"{r['mean']:.3f} ({r['n']} keys)" for r in rows)
    text = (
        f"the paper's {paper:.3f} ({role}) lies {position} chance at its own key counts: random keys in d = {d} give "
        f"{span}"
    )
    return {"role": role, "d": d, "n": ns, "null": rows, "paper": paper, "position": position, "text": text}


def position_of(diff: Interval | None) -> str:
    """``above``, ``below`` or ``at`` chance: where the Welch 95% interval of trained − null lies (``at`` without an
    interval)."""
    if diff is None or diff.low is None or diff.high is None:
        return "at"
    return "above" if diff.low > 0 else "below" if diff.high < 0 else "at"


def above_null(claim: ClaimEntry, entry: JudgedEntry, variants: dict[str, VariantRow]) -> JudgedEntry:
    """``entry`` (a judged paper claim that unselectable keys exist or grow, ``above_chance: <role>``) with that role's
    fraction against its matched random-key null, as the ``chance`` rule judges a cell: d = mean over the counted
    seeds − the null's mean, Welch 95% interval with the null's standard error. The claim may be reproduced (or hold
    in direction only) only where d lies above 0; at or below chance its verdict is "not reproduced"
    (``against_null.position`` says which), and with no null beside the fraction it is at most inconclusive."""
    role = claim.get("above_chance")
    if not role or entry["verdict"] == "not run":
        return entry
    if role not in (claim.get("variants") or {}):
        raise ValueError(f"claim {claim['id']}: above_chance {role!r} is not one of its roles")
    name = claim["variants"][role]
    metric = (claim.get("metrics") or {}).get(role, claim["metric"])
    values, null, _ = _cell(variants, name, metric)
    out = entry.copy()
    if not null or null.get("sanity_check") or not values_of(values):
        out["against_null"] = {"role": role, "metric": metric, "null": None, "difference": None, "position": None}
        if out["verdict"] in ("reproduced", "direction only"):
            out["verdict"] = "inconclusive"
        out["rule"] += (
            f"; {role}'s fraction must also lie above its matched random-key null, and no null stands beside it "
            "here, so at most inconclusive"
        )
        return out
    diff = null_difference(values, null["mean"], null.get("sem"), int(null.get("sets") or 1), (role, "null"))
    position = position_of(diff)
    upper_end = not CELL_COLUMN.fullmatch(metric)  # e.g. the any-layer token fraction: its null an upper end
    if upper_end and position == "below":
        position = "at"  # below the upper end of the null is not below chance
    out["against_null"] = {
        "role": role,
        "metric": metric,
        "null": {"mean": null["mean"], "sem": null.get("sem"), "sets": null.get("sets")},
        "difference": None if diff is None else diff.as_dict(),
        "position": position,
    }
    interval = (
        "no interval"
        if diff is None or diff.low is None
        else f"[{significant(diff.low, 4)}, {significant(diff.high, 4)}]"
    )
    out["rule"] += (
        f"; and only where {role}'s fraction lies above its matched random-key null ({significant(null['mean'], 4)} ± "
        f"{significant(null.get('sem'), 4)}, {null.get('sets')} draws): the Welch 95% interval of mean − null, with"
        f" the null's "
        f"standard error, as the chance rule; not reproduced at or below it (here {role} − null = "
        f"{significant(diff.estimate if diff else None, 4)} {interval}: {position} chance"
        + (
            "; this column's null is the value of independent layers, an upper end (the layers share the residual "
            "stream, so its chance lies between one layer's null and it): above it is above chance, below it is not "
            "below chance"
            if upper_end
            else ""
        )
        + ")"
    )
    if position != "above":
        out["verdict"] = "not reproduced"
    return out
