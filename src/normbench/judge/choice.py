"""A grid value chosen on the leaderboard: per base variant, the grid point with the best mean the rule keeps.

A sweep that tunes a setting (the ``lr`` preset of every task tunes the learning rate; the ``dyt-alpha`` preset of the
LM tunes DyT's initial alpha) crosses its variants with a labelled grid axis (``bench.grid_labels``), so each
variant's name carries the value: ``pre/dyt,alpha0=2.0``. The preset declares its tuning budget once, and every
variant (every norm, a report card's too) gets the same: the grid (``bench.grid``), the tuning seeds (``bench.seeds``)
and ``bench.choice``, which names the axis, the metric the choice is made on and its goal, the rule, and the number of
tuning seeds each grid value needs (:func:`budget` reads and checks it)::

    choice: {axis: lr, metric: val_acc, goal: max, report: [val_loss], rule: robust, min_seeds: 3}

The variants are grouped by their name without the axis (the base), and in each group the chosen value is
argmin_v mean over seeds of the metric (``goal: max``: argmax) over the values the rule keeps:

* ``stable`` (the default): a value where a seed diverged or failed is unstable there and cannot be chosen, however
  good its surviving seeds' mean (each row names those seeds);
* ``robust`` (the learning-rate grids): a value where any tuning seed failed to train (diverged, failed, collapsed
  or at chance: :func:`normbench.judge.collapse.collapsed_seeds`, set by each task's ``bench.chance`` or
  ``bench.collapse``) is never chosen, nor a value next to one in the grid: the edge of stability is not an
  optimum. Every excluded value is listed with why.

Collapsed and at-chance seeds stay in every mean. ``report`` metrics are shown beside it, e.g. a loss on data the
choice did not see. The choice is final only once every value of the grid has runs of every declared tuning seed
(at least ``min_seeds``); until then each group says which seeds it waits for and the value leading so far, and the
boards judged at the chosen values (:mod:`normbench.judge.tuned`) wait for it. A chosen value at either end of a
numeric grid is marked ``at_edge``: the best value may lie beyond the grid, so it is a bound, not an optimum. On an
axis that joins several keys (``50.0;20.0;20.0``) the edge is taken in each key: the chosen point is at the edge where
one of its numbers is that key's smallest or largest over the grid.

Its wording (the Markdown table and the sentences a board prints) is :mod:`normbench.judge.choice_text`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, cast

from normbench.archive.documents.views import ChoiceDoc, ChoiceGroup, ChoiceRow, ChoiceSpec, Excluded, Missing
from normbench.judge.collapse import collapsed_seeds
from normbench.judge.rows import variant_rows

RULES = {
    "stable": "a value where a seed diverged or failed is never chosen",
    "robust": "a value where a tuning seed diverged, failed, collapsed or stayed at chance is never chosen, nor a "
    "value next to one in the grid (the edge of stability is not an optimum)",
}
"""The choice rules ``bench.choice.rule`` may name, each with the sentence a board prints."""


class Budget(ChoiceSpec):
    """A preset's tuning budget (:func:`budget`): its :class:`ChoiceSpec` and the axis's grid ``values`` as the config
    lists them (a number, a name, or one number per joined key; ``None``: the preset declares no grid)."""

    values: list[object] | None


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def choice_doc(choice: Mapping[str, object] | None) -> ChoiceDoc | None:
    """A board's ``choice`` as the choice document: :class:`normbench.archive.Board` keeps the document
    :func:`build_choice` wrote as a JSON object (the archive lies below the judge)."""
    return cast("ChoiceDoc | None", choice)


def check_spec(spec: Any, metrics: Collection[str], seeds: Any = None) -> ChoiceSpec:
    """``bench.choice`` as ``{axis, metric, goal, report, rule, min_seeds, seeds}``, or a one-line error naming the
    field. ``seeds``: the tuning seeds the preset declares (``bench.seeds``; ``None``: not known, the choice is final
    once every value has ``min_seeds`` seeds)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("axis"), str) or not spec["axis"]:
        raise ValueError(f"bench.choice.axis: must name a labelled grid axis (bench.grid_labels), got {spec!r}")
    report = list(spec.get("report") or [])
    for field, names in (("metric", [spec.get("metric")]), ("report", report)):
        unknown = [n for n in names if n not in metrics]
        if unknown:
            raise ValueError(
                f"bench.choice.{field}: {unknown[0]!r} is not a leaderboard metric; choose one of {', '.join(metrics)}"
            )
    goal = spec.get("goal", "min")
    if goal not in ("min", "max"):
        raise ValueError(f"bench.choice.goal: must be min or max, got {goal!r}")
    rule = spec.get("rule", "stable")
    if rule not in RULES:
        raise ValueError(f"bench.choice.rule: must be {' or '.join(RULES)}, got {rule!r}")
    min_seeds = spec.get("min_seeds", 1)
    if not _whole(min_seeds) or min_seeds < 1:
        raise ValueError(f"bench.choice.min_seeds: must be a whole number of tuning seeds >= 1, got {min_seeds!r}")
    declared = spec.get("seeds") if seeds is None else seeds
    if declared is not None:
        if (
            not isinstance(declared, (list, tuple))
            or not declared
            or not all(_whole(s) or str(s).isdigit() for s in declared)
        ):
            raise ValueError(f"bench.seeds: the tuning seeds must be a list of whole numbers, got {declared!r}")
        declared = [int(s) for s in declared]
        if len(set(declared)) < min_seeds:
            raise ValueError(
                f"bench.choice.min_seeds: {min_seeds} tuning seeds per value, but bench.seeds declares "
                f"{len(set(declared))} ({', '.join(map(str, declared))})"
            )
    return {
        "axis": spec["axis"],
        "metric": spec["metric"],
        "goal": goal,
        "report": report,
        "rule": rule,
        "min_seeds": min_seeds,
        "seeds": [str(s) for s in declared] if declared is not None else None,
    }


def budget(bench: Any, metrics: Collection[str] | None = None) -> Budget:
    """The tuning budget a preset's ``bench`` declares: :func:`check_spec`'s fields and ``values``, the axis's grid
    (``bench.grid`` under the key ``bench.grid_labels`` names ``axis``; ``None`` where the preset declares no grid).
    ``metrics``: the leaderboard's (default: ``bench.metrics``). One-line errors naming the field."""
    if not isinstance(bench, dict):
        raise ValueError(f"bench: must be a mapping, got {type(bench).__name__}")
    if not bench.get("choice"):
        raise ValueError("bench.choice: the preset declares no choice (axis, metric, goal, rule, min_seeds)")
    known = metrics if metrics is not None else dict(bench.get("metrics") or {})
    spec = check_spec(bench["choice"], known, bench.get("seeds"))
    grid, labels = bench.get("grid"), bench.get("grid_labels") or {}
    if grid is None:
        return {**spec, "values": None}
    if not isinstance(grid, dict) or not isinstance(labels, dict):
        raise ValueError(f"bench.grid: must map a config key to its values, got {grid!r}")
    keys = [key for key, label in labels.items() if label == spec["axis"]]
    if len(keys) != 1 or keys[0] not in grid:
        raise ValueError(
            f"bench.grid_labels: no grid key is labelled {spec['axis']!r} (bench.choice.axis); label the key of "
            f"bench.grid the choice is made over"
        )
    values = grid[keys[0]]
    if not isinstance(values, list) or len(values) < 2:
        raise ValueError(f"bench.grid.{keys[0]}: a choice needs two values at least, got {values!r}")
    return {**spec, "values": values}


def split_name(name: str, axis: str) -> tuple[str, str] | None:
    """``("pre/dyt", "2.0")`` for ``pre/dyt,alpha0=2.0`` and axis ``alpha0``; ``None`` if the name lacks the axis."""
    parts = name.split(",")
    found = [p for p in parts if p.partition("=")[0] == axis and "=" in p]
    if len(found) != 1:
        return None
    return ",".join(p for p in parts if p != found[0]), found[0].partition("=")[2]


def sort_key(value: str) -> tuple[int, tuple[float, ...], str]:
    """Numbers in numeric order, then values of several numbers (``50.0;20.0;20.0``: an axis that joins keys, one
    number per key) in numeric order, then other values by name. The first element says which of the three."""
    try:
        return (0, (float(value),), value)
    except ValueError:
        pass
    try:
        return (1, tuple(float(x) for x in value.split(";")), value)
    except ValueError:
        return (2, (), value)


def coordinates(rows: list[ChoiceRow]) -> list[tuple[float, ...]] | None:
    """Each row's grid value as numbers, one per key of its axis: ``50.0;20.0;20.0`` (an axis that joins three keys),
    a single number standing for every key (``10.0``: 10 in each). ``None`` where a value is not numeric or the values
    disagree on the number of keys."""
    keys = [sort_key(str(r["value"])) for r in rows]  # one parse of a grid value: sort_key's numbers
    if any(kind == 2 for kind, _, _ in keys):
        return None
    points = [numbers for _, numbers, _ in keys]
    width = max((len(p) for p in points), default=1)
    full = [p * width if len(p) == 1 else p for p in points]
    return full if all(len(p) == width for p in full) else None


def edges(value: str, rows: list[ChoiceRow]) -> list[tuple[int, str]]:
    """Where the grid value ``value`` lies on the grid's edge: ``(position, "smallest" | "largest")`` for each key of
    the axis at which no row's value is smaller (larger). A best value there may lie beyond the grid; ``[]``: it lies
    inside the grid in every key (or the grid is not numeric)."""
    points = coordinates(rows)
    index = next((i for i, r in enumerate(rows) if r["value"] == value), None)
    if points is None or index is None or len(points) < 2:
        return []
    out = []
    for k, x in enumerate(points[index]):
        column = [p[k] for p in points]
        out += [(k, end) for end, bound in (("smallest", min(column)), ("largest", max(column))) if x == bound]
    return out


def _failure(row: ChoiceRow, rule: str) -> str | None:
    """Why the rule rules a value out by its own seeds (``None``: it does not): the seeds that diverged or failed
    (``stable``), or collapsed or stayed at chance too (``robust``)."""
    if row["diverged"] or row["failed"] or (rule == "robust" and row["collapsed"]):
        return flagged(row, collapsed=rule == "robust")
    return None


def _missing(values: list[str], by_value: dict[str, ChoiceRow], spec: ChoiceSpec) -> list[Missing]:
    """The grid values short of the tuning budget: ``{value, lacking, have}`` for each value (in grid order) without a
    run of every declared tuning seed (``lacking``) or with fewer than ``min_seeds`` (``have``: the seeds it has)."""
    out: list[Missing] = []
    for value in values:
        row = by_value.get(value)
        have = set(row["seeds"]) | set(row["failed"]) if row else set()
        lacking = [s for s in spec["seeds"] or [] if s not in have]
        if lacking or len(have) < spec["min_seeds"]:
            out.append({"value": value, "lacking": lacking, "have": len(have)})
    return out


def build_choice(
    spec: Mapping[str, object],
    variants: Sequence[Mapping[str, object]],
    metrics: Collection[str],
    seeds: list[int] | None = None,
    planned: list[str] | None = None,
) -> ChoiceDoc:
    """The choice document: per base, one row per grid value (sorted), the values the rule excludes (``excluded``:
    ``{value, why}``), the chosen value (``None`` if none is kept and measured) and whether the choice is ``final``
    (``missing``: the values short of the budget). ``seeds``: the declared tuning seeds (``bench.seeds``); ``planned``:
    the build's variant names, whose grid values count for the neighbours and the budget even before they have runs."""
    spec = check_spec(spec, metrics, seeds)
    rule = spec["rule"]
    groups: dict[str, list[ChoiceRow]] = {}
    for v in variant_rows(variants):
        split = split_name(v["name"], spec["axis"])
        if split is None:
            continue
        base, value = split
        m = v["metrics"]
        groups.setdefault(base, []).append(
            {
                "variant": v["name"],
                "value": value,
                "seeds": [str(s) for s in v["seeds"]],
                "metric": m.get(spec["metric"]) or {},
                "report": {r: m.get(r) or {} for r in spec["report"]},
                "collapsed": collapsed_seeds(v),
                "diverged": {str(k): step for k, step in (v.get("diverged_at_step") or {}).items()},
                "failed": sorted(str(k) for k in (v.get("failed") or {})),
            }
        )
    grid: dict[str, list[str]] = {}
    for split in (split_name(n, spec["axis"]) for n in planned or []):
        if split is not None:
            grid.setdefault(split[0], []).append(split[1])
    out: list[ChoiceGroup] = []
    for base, rows in groups.items():
        rows.sort(key=lambda r: sort_key(r["value"]))
        by_value = {r["value"]: r for r in rows}
        values = sorted(dict.fromkeys([*by_value, *grid.get(base, [])]), key=sort_key)  # the grid, in its order
        failing = {r["value"]: why for r in rows if (why := _failure(r, rule)) is not None}
        excluded: list[Excluded] = []
        for i, value in enumerate(values):
            if value in failing:
                excluded.append({"value": value, "why": failing[value]})
            elif rule == "robust" and value in by_value:
                near = [n for n in values[max(i - 1, 0) : i + 2] if n != value and n in failing]
                if near:
                    excluded.append(
                        {"value": value, "why": f"next to {' and '.join(near)} in the grid, where a tuning seed failed"}
                    )
        out_values = {e["value"] for e in excluded}
        scored = [r for r in rows if r["metric"].get("mean") is not None]
        unstable = [r for r in rows if r["diverged"] or r["failed"]]
        kept = [r for r in scored if r["value"] not in out_values]
        sign = 1.0 if spec["goal"] == "min" else -1.0
        # a choice needs two trained values at least (a value whose seeds diverged counts: it lost): one is no choice
        trained = len(scored) + sum(1 for r in unstable if r not in scored)
        # kept: rows of scored, each with a mean
        best = min(kept, key=lambda r: sign * cast(float, r["metric"]["mean"])) if kept and trained > 1 else None
        at_edge = best is not None and bool(edges(best["value"], rows))
        missing = _missing(values, by_value, spec)
        out.append(
            {
                "base": base,
                "rows": rows,
                "chosen": best["value"] if best else None,
                "chosen_variant": best["variant"] if best else None,
                "measured": len(scored),
                "unstable": [r["value"] for r in unstable],
                "excluded": excluded,
                "at_edge": at_edge,
                "final": not missing,
                "missing": missing,
            }
        )
    return {**spec, "groups": out}


def flagged(row: ChoiceRow, collapsed: bool = True) -> str:
    """The row's flagged seeds, ``seed 101 diverged at step 261; seeds 0, 1 collapsed or at chance``, or ``–``."""
    parts = [
        f"seed {seed} diverged" + (f" at step {step}" if step is not None else "")
        for seed, step in (row.get("diverged") or {}).items()
    ]
    parts += [f"seed {seed} failed" for seed in row.get("failed") or []]
    if collapsed and row.get("collapsed"):
        seeds = row["collapsed"]
        parts.append(f"seed{'s' if len(seeds) > 1 else ''} {', '.join(seeds)} collapsed or at chance")
    return "; ".join(parts) or "–"
