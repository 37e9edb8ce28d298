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
"""

from __future__ import annotations

from typing import Any

from normbench.judge.collapse import collapsed_seeds

RULES = {
    "stable": "a value where a seed diverged or failed is never chosen",
    "robust": "a value where a tuning seed diverged, failed, collapsed or stayed at chance is never chosen, nor a "
    "value next to one in the grid (the edge of stability is not an optimum)",
}
"""The choice rules ``bench.choice.rule`` may name, each with the sentence a board prints."""


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_spec(spec: Any, metrics: dict[str, Any], seeds: Any = None) -> dict[str, Any]:
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


def budget(bench: Any, metrics: dict[str, Any] | None = None) -> dict[str, Any]:
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


def _failure(row: dict[str, Any], rule: str) -> str | None:
    """Why the rule rules a value out by its own seeds (``None``: it does not): the seeds that diverged or failed
    (``stable``), or collapsed or stayed at chance too (``robust``)."""
    if row["diverged"] or row["failed"] or (rule == "robust" and row["collapsed"]):
        return _flagged(row, collapsed=rule == "robust")
    return None


def _missing(values: list[str], by_value: dict[str, dict[str, Any]], spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The grid values short of the tuning budget: ``{value, lacking, have}`` for each value (in grid order) without a
    run of every declared tuning seed (``lacking``) or with fewer than ``min_seeds`` (``have``: the seeds it has)."""
    out = []
    for value in values:
        row = by_value.get(value)
        have = set(row["seeds"]) | set(row["failed"]) if row else set()
        lacking = [s for s in spec["seeds"] or [] if s not in have]
        if lacking or len(have) < spec["min_seeds"]:
            out.append({"value": value, "lacking": lacking, "have": len(have)})
    return out


def build_choice(
    spec: dict[str, Any],
    variants: list[dict[str, Any]],
    metrics: dict[str, Any],
    seeds: list[int] | None = None,
    planned: list[str] | None = None,
) -> dict[str, Any]:
    """The choice document: per base, one row per grid value (sorted), the values the rule excludes (``excluded``:
    ``{value, why}``), the chosen value (``None`` if none is kept and measured) and whether the choice is ``final``
    (``missing``: the values short of the budget). ``seeds``: the declared tuning seeds (``bench.seeds``); ``planned``:
    the build's variant names, whose grid values count for the neighbours and the budget even before they have runs."""
    spec = check_spec(spec, metrics, seeds)
    rule = spec["rule"]
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
    grid: dict[str, list[str]] = {}
    for split in (split_name(n, spec["axis"]) for n in planned or []):
        if split is not None:
            grid.setdefault(split[0], []).append(split[1])
    out = []
    for base, rows in groups.items():
        rows.sort(key=lambda r: sort_key(r["value"]))
        by_value = {r["value"]: r for r in rows}
        values = sorted(dict.fromkeys([*by_value, *grid.get(base, [])]), key=sort_key)  # the grid, in its order
        failing = {r["value"]: why for r in rows if (why := _failure(r, rule)) is not None}
        excluded = []
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
        best = min(kept, key=lambda r: sign * r["metric"]["mean"]) if kept and trained > 1 else None
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


def _mean_std(m: dict[str, Any]) -> str:
    """``mean ± std``; the mean alone where one seed has a value (its std is not a spread)."""
    if m.get("mean") is None:
        return "–"
    one_seed = m.get("n") is not None and m["n"] < 2
    return f"{m['mean']:.3f} ± {m['std']:.3f}" if m.get("std") is not None and not one_seed else f"{m['mean']:.3f}"


def seed_span(seeds: list[str]) -> str:
    """``100-102`` for consecutive seeds, else ``100, 105``."""
    numbers = sorted(int(s) for s in seeds)
    if len(numbers) > 2 and numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"{numbers[0]}-{numbers[-1]}"
    return ", ".join(map(str, numbers))


def waiting_text(group: dict[str, Any], choice: dict[str, Any]) -> str:
    """``waiting for tuning seed 102 (at every value; the budget: seeds 100-102, at least 3 per value)``: what a group
    short of the tuning budget waits for (``""``: nothing)."""
    missing = group.get("missing") or []
    if not missing:
        return ""
    lacking = sorted({s for m in missing for s in m["lacking"]}, key=int)
    values = [m["value"] for m in missing]
    grid = {r["value"] for r in group["rows"]} | set(values)
    where = "every value" if set(values) >= grid else ", ".join(values)
    what = (
        f"tuning seed{'s' if len(lacking) > 1 else ''} {', '.join(lacking)}"
        if lacking
        else f"{choice.get('min_seeds', 1)} tuning seeds per value"
    )
    declared = choice.get("seeds")
    said = f"seeds {seed_span(declared)}, " if declared else ""
    return f"waiting for {what} (at {where}; the budget: {said}at least {choice.get('min_seeds', 1)} per value)"


def render_choice(choice: dict[str, Any] | None, complete: bool = True) -> list[str]:
    """Markdown of the choice document: the tuning budget and rule, the grid with every value's mean ± std, every
    value the rule excludes and why, and the value chosen (with the grid not ``complete``, or a group short of its
    tuning seeds: the value leading so far, since the choice is made once on the whole budget)."""
    if not choice:
        return []
    axis, metric, best = choice["axis"], choice["metric"], "lowest" if choice["goal"] == "min" else "highest"
    report = choice["report"]
    rule = choice.get("rule", "stable")
    groups = choice["groups"]
    final = complete and all(g.get("final", True) for g in groups)
    shown = f"; {', '.join(f'`{r}`' for r in report)} beside it" if report else ""
    if rule == "robust":
        intro = (
            f"The grid of `{axis}` per base variant, mean ± std over seeds. Chosen: the value with the {best} mean "
            f"`{metric}` among those the rule keeps{shown}. Rule `robust`, the same for every variant: {RULES[rule]}. "
            "Flagged: seeds that diverged, failed, collapsed or stayed at chance (kept in the means); *excluded*: a "
            "value the rule rules out, each listed below with why."
        )
    else:
        intro = (
            f"The grid of `{axis}` per base variant, mean ± std over seeds. Chosen: the value with the {best} mean "
            f"`{metric}`{shown}. Flagged: seeds that diverged or failed (their value cannot be chosen: it is unstable "
            "there, whatever the other seeds' mean) and seeds collapsed or at chance (kept in the means)."
        )
    lines = [f"## Choice of `{axis}`", "", intro, ""]
    if choice.get("seeds") or choice.get("min_seeds", 1) > 1:
        values = sorted({r["value"] for g in groups for r in g["rows"]}, key=sort_key)
        grid = f"{len(values)} values of `{axis}` ({values[0]} to {values[-1]})" if values else f"the `{axis}` grid"
        seeds = f"tuning seeds {seed_span(choice['seeds'])}, " if choice.get("seeds") else ""
        lines += [
            f"Tuning budget (declared once by the task, the same for every variant): {grid}, {seeds}at least "
            f"{choice.get('min_seeds', 1)} per value, the {best} mean `{metric}`, rule `{rule}`.",
            "",
        ]
    if not complete:
        lines += [
            "**The grid is not finished: nothing is chosen yet.** *Leading* marks the best value among the runs "
            "finished so far; the choice is made once, on the whole grid, and boards judged at the chosen "
            "values wait for it.",
            "",
        ]
    elif not final:
        lines += [
            "**The tuning budget is not spent yet: nothing is chosen.** A value is chosen once every grid value has "
            "runs of every declared tuning seed; *leading* marks the best value the rule keeps among the runs so far, "
            "and boards judged at the chosen values wait for it (those published before stand until then).",
            "",
        ]
    mark = "chosen" if final else "leading"
    lines += [
        f"| variant | {axis} | seeds | {metric} | " + "".join(f"{r} | " for r in report) + f"flagged | {mark} |",
        "|---|---|---|---|" + "---|" * len(report) + "---|---|",
    ]
    for group in groups:
        done = complete and group.get("final", True)
        out = {e["value"] for e in group.get("excluded") or []} if rule == "robust" else set()
        for r in group["rows"]:
            chosen = (
                f"**{'chosen' if done else 'leading'}**"
                if r["value"] == group["chosen"]
                else ("excluded" if r["value"] in out else "")
            )
            lines.append(
                f"| `{group['base']}` | {r['value']} | {len(r['seeds'])} | {_mean_std(r['metric'])} | "
                + "".join(f"{_mean_std(r['report'][x])} | " for x in report)
                + f"{_flagged(r)} | {chosen} |"
            )
    lines.append("")
    for group in groups:
        lines.append(_group_line(choice, group, complete and group.get("final", True)))
    return [*lines, ""]


def _group_line(choice: dict[str, Any], group: dict[str, Any], done: bool) -> str:
    """The bullet of one base: its chosen (or leading) value and why, what the rule excluded, what it waits for."""
    axis, metric, best = choice["axis"], choice["metric"], "lowest" if choice["goal"] == "min" else "highest"
    rule = choice.get("rule", "stable")
    unstable = group.get("unstable") or []
    excluded = group.get("excluded") or []
    listed = ""
    if rule == "robust" and excluded:
        listed = " Excluded: " + "; ".join(f"{e['value']} ({e['why']})" for e in excluded) + "."
    waiting = waiting_text(group, choice)
    waits = f" Not final: {waiting}." if waiting else ""
    if group["chosen"] is None:
        if (
            rule == "robust"
            and excluded
            and all(
                r["value"] in {e["value"] for e in excluded}
                for r in group["rows"]
                if r["metric"].get("mean") is not None
            )
        ):
            why = "the rule excludes every value trained"
        elif unstable and all(r["value"] in unstable for r in group["rows"] if r["metric"].get("mean") is not None):
            why = f"a seed diverged or failed at every value trained: {', '.join(unstable)}"
        else:
            why = ("only one value has" if group.get("measured") == 1 else "no value has") + (
                f" a mean `{metric}`; the grid is not trained yet"
            )
        return f"- `{group['base']}`: no `{axis}` chosen ({why}).{listed}{waits}"
    row = next(r for r in group["rows"] if r["value"] == group["chosen"])
    edge = _edge_text(group, done, rule == "robust") if group.get("at_edge") else ""
    sign = 1.0 if choice["goal"] == "min" else -1.0
    better = lambda r: r["metric"].get("mean") is not None and sign * r["metric"]["mean"] < sign * row["metric"]["mean"]  # noqa: E731
    if rule == "robust":
        excluded_why = {e["value"]: e["why"] for e in excluded}
        passed = [r for r in group["rows"] if r["value"] in excluded_why and better(r)]
        ruled_out = "".join(
            f" {r['value']} had a {'lower' if sign > 0 else 'higher'} mean ({_mean_std(r['metric'])}) but is "
            f"excluded ({excluded_why[r['value']]})."
            for r in passed
        )
        kept = "of the values the rule keeps"
    else:
        passed = [r for r in group["rows"] if r["value"] in unstable and better(r)]
        ruled_out = "".join(
            f" {r['value']} had a {'lower' if sign > 0 else 'higher'} mean over its other seeds "
            f"({_mean_std(r['metric'])}) but is unstable there ({_flagged(r, collapsed=False)})."
            for r in passed
        )
        kept = "of the values where no seed diverged or failed"
    return (
        f"- `{group['base']}`: `{axis}` = {group['chosen']}{'' if done else ' leads so far'} "
        f"({best} mean `{metric}` {kept}, {_mean_std(row['metric'])}; variant `{group['chosen_variant']}`)."
        f"{edge}{ruled_out}{listed}{waits}"
    )


BOUND = (
    " Read it as a bound, not an optimum: the best value may lie beyond the grid, so the verdicts judged at it may "
    "understate the variant; widening the grid past it settles the choice."
)


def _edge_text(group: dict[str, Any], complete: bool, bound: bool = False) -> str:
    """A sentence saying where the chosen value lies on the grid's edge (:func:`edges`); ``bound`` (a tuning budget's
    grid): and how to read it."""
    read = BOUND if bound else ""
    at = edges(group["chosen"], group["rows"])
    width = len((coordinates(group["rows"]) or [(0.0,)])[0])
    if width == 1:
        end = at[0][1] if at else "largest"
        return (
            f" It is the grid's {end} value: a value beyond the grid may be better.{read}"
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
        f": a value beyond the grid may be better.{read}" if complete else "."
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
