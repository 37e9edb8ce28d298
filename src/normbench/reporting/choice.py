"""A grid value chosen on the leaderboard: per base variant, the grid point with the best mean metric.

A sweep that tunes a setting (the ``dyt-alpha`` preset of the LM tunes DyT's initial alpha) crosses its
variants with a labelled grid axis (``bench.grid_labels``), so each variant's name carries the value:
``pre/dyt,alpha0=2.0``. ``bench.choice`` names that axis and the metric the choice is made on::

    choice: {axis: alpha0, metric: final_val_loss, goal: min, report: [analysis_loss]}

The variants are grouped by their name without the axis (the base), and in each group the chosen value is
argmin_v mean over seeds of the metric (``goal: max``: argmax) over the values where every seed trained: a value
where a seed diverged or failed is unstable there and cannot be chosen, however good its surviving seeds' mean
(each row names those seeds). ``report`` metrics are shown beside it, e.g. a loss on data the choice did not see.
A chosen value at either end of a numeric grid is marked ``at_edge``: the best value may lie beyond the grid. On an
axis that joins several keys (``50.0;20.0;20.0``) the edge is taken in each key: the chosen point is at the edge where
one of its numbers is that key's smallest or largest over the grid.
"""

from __future__ import annotations

from typing import Any

from normbench.reporting.collapse import collapsed_seeds


def check_spec(spec: Any, metrics: dict[str, Any]) -> dict[str, Any]:
    """``bench.choice`` as ``{axis, metric, goal, report}``, or a one-line error naming the field."""
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
    return {"axis": spec["axis"], "metric": spec["metric"], "goal": goal, "report": report}


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


def coordinates(rows: list[dict[str, Any]]) -> list[tuple[float, ...]] | None:
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


def edges(value: str, rows: list[dict[str, Any]]) -> list[tuple[int, str]]:
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


def build_choice(spec: dict[str, Any], variants: list[dict[str, Any]], metrics: dict[str, Any]) -> dict[str, Any]:
    """The choice document: per base, one row per grid value (sorted) and the chosen value (``None`` if none has
    a mean)."""
    spec = check_spec(spec, metrics)
    groups: dict[str, list[dict[str, Any]]] = {}
    for v in variants:
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
    out = []
    for base, rows in groups.items():
        rows.sort(key=lambda r: sort_key(r["value"]))
        scored = [r for r in rows if r["metric"].get("mean") is not None]
        unstable = [r for r in rows if r["diverged"] or r["failed"]]
        stable = [r for r in scored if r not in unstable]
        sign = 1.0 if spec["goal"] == "min" else -1.0
        # a choice needs two trained values at least (a value whose seeds diverged counts: it lost): one is no choice
        trained = len(scored) + sum(1 for r in unstable if r not in scored)
        best = min(stable, key=lambda r: sign * r["metric"]["mean"]) if stable and trained > 1 else None
        at_edge = bool(best) and bool(edges(best["value"], rows))
        out.append(
            {
                "base": base,
                "rows": rows,
                "chosen": best["value"] if best else None,
                "chosen_variant": best["variant"] if best else None,
                "measured": len(scored),
                "unstable": [r["value"] for r in unstable],
                "at_edge": at_edge,
            }
        )
    return {**spec, "groups": out}


def _mean_std(m: dict[str, Any]) -> str:
    """``mean ± std``; the mean alone where one seed has a value (its std is not a spread)."""
    if m.get("mean") is None:
        return "–"
    one_seed = m.get("n") is not None and m["n"] < 2
    return f"{m['mean']:.3f} ± {m['std']:.3f}" if m.get("std") is not None and not one_seed else f"{m['mean']:.3f}"


def render_choice(choice: dict[str, Any] | None, complete: bool = True) -> list[str]:
    """Markdown of the choice document: the grid with every value's mean ± std, and the value chosen (with the grid
    not ``complete``: the value leading so far, since the choice is made once on the whole grid)."""
    if not choice:
        return []
    axis, metric, best = choice["axis"], choice["metric"], "lowest" if choice["goal"] == "min" else "highest"
    report = choice["report"]
    mark = "chosen" if complete else "leading"
    lines = [
        f"## Choice of `{axis}`",
        "",
        f"The grid of `{axis}` per base variant, mean ± std over seeds. Chosen: the value with the {best} mean "
        f"`{metric}`" + (f"; {', '.join(f'`{r}`' for r in report)} beside it" if report else "") + ". "
        "Flagged: seeds that diverged or failed (their value cannot be chosen: it is unstable there, whatever the "
        "other seeds' mean) and seeds collapsed or at chance (kept in the means).",
        "",
        *(
            []
            if complete
            else [
                "**The grid is not finished: nothing is chosen yet.** *Leading* marks the best value among the runs "
                "finished so far; the choice is made once, on the whole grid, and boards judged at the chosen "
                "values wait for it.",
                "",
            ]
        ),
        f"| variant | {axis} | seeds | {metric} | " + "".join(f"{r} | " for r in report) + f"flagged | {mark} |",
        "|---|---|---|---|" + "---|" * len(report) + "---|---|",
    ]
    for group in choice["groups"]:
        for r in group["rows"]:
            chosen = f"**{mark}**" if r["value"] == group["chosen"] else ""
            collapsed = _flagged(r)
            lines.append(
                f"| `{group['base']}` | {r['value']} | {len(r['seeds'])} | {_mean_std(r['metric'])} | "
                + "".join(f"{_mean_std(r['report'][x])} | " for x in report)
                + f"{collapsed} | {chosen} |"
            )
    lines.append("")
    for group in choice["groups"]:
        unstable = group.get("unstable") or []
        if group["chosen"] is None:
            if unstable and all(r["value"] in unstable for r in group["rows"] if r["metric"].get("mean") is not None):
                why = f"a seed diverged or failed at every value trained: {', '.join(unstable)}"
            else:
                why = ("only one value has" if group.get("measured") == 1 else "no value has") + (
                    f" a mean `{metric}`; the grid is not trained yet"
                )
            lines.append(f"- `{group['base']}`: no `{axis}` chosen ({why}).")
            continue
        row = next(r for r in group["rows"] if r["value"] == group["chosen"])
        edge = _edge_text(group, complete) if group.get("at_edge") else ""
        sign = 1.0 if choice["goal"] == "min" else -1.0
        passed = [
            r
            for r in group["rows"]
            if r["value"] in unstable
            and r["metric"].get("mean") is not None
            and sign * r["metric"]["mean"] < sign * row["metric"]["mean"]
        ]
        ruled_out = "".join(
            f" {r['value']} had a {'lower' if sign > 0 else 'higher'} mean over its other seeds "
            f"({_mean_std(r['metric'])}) but is unstable there ({_flagged(r, collapsed=False)})."
            for r in passed
        )
        lines.append(
            f"- `{group['base']}`: `{axis}` = {group['chosen']}{'' if complete else ' leads so far'} "
            f"({best} mean `{metric}` of the values where no seed diverged or failed, "
            f"{_mean_std(row['metric'])}; variant `{group['chosen_variant']}`).{edge}{ruled_out}"
        )
    return [*lines, ""]


def _edge_text(group: dict[str, Any], complete: bool) -> str:
    """A sentence saying where the chosen value lies on the grid's edge (:func:`edges`)."""
    at = edges(group["chosen"], group["rows"])
    width = len((coordinates(group["rows"]) or [(0.0,)])[0])
    if width == 1:
        end = at[0][1] if at else "largest"
        return (
            f" It is the grid's {end} value: a value beyond the grid may be better."
            if complete
            else f" It is the {end} value trained so far."
        )
    ends = {end: [k for k, e in at if e == end] for end in ("smallest", "largest")}
    where = "; ".join(
        f"the {end} in every key" if len(keys) == width else f"its value {k + 1} of {width} is the {end}"
        for end, keys in ends.items()
        for k in (keys[:1] if len(keys) == width else keys)
    )
    return f" It lies on the grid's edge ({where}{' of the grid' if complete else ' trained so far'})" + (
        ": a value beyond the grid may be better." if complete else "."
    )


def _flagged(row: dict[str, Any], collapsed: bool = True) -> str:
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
