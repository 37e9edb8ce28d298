"""A grid board's headline figure: its metric against the grid's value, one line per base variant.

A board that crosses its variants with a labelled axis (``pre/both,lr=0.004``: a learning-rate grid, DyT's
alpha0, the stability grid) draws ``by_<axis>.png``. Each seed's value is a dot, the mean over the seeds with a
finite value a line (broken where every seed diverged). A seed that collapsed or stayed at chance (the board's
``collapsed`` seeds) is a hollow square at its value, and seeds that diverged (no finite value) are a cross with
their count at the figure's worse edge (above the values for ``goal: min``, below them for ``goal: max``; one row
per variant that diverges), so where a norm stops training shows on the figure. A numeric axis spanning 10x or more
is logarithmic; an axis whose values are not all numbers keeps the grid's order, evenly spaced: on alpha0 per
position, the single numbers (``10.0``, the same in every key) first, then the values of several numbers
(``50.0;20.0;20.0``), each in numeric order, the mean line broken between the two. On a choice board the chosen
value is ringed. Spec (``bench.grid_plot``): ``axis`` and ``metric``, each defaulting to the board's choice, and
``goal`` (min or max: the choice's for the choice's metric, else min, a loss); ``title`` and ``ylabel`` optional.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.transforms import offset_copy  # noqa: E402

from normbench.judge.choice import choice_doc, sort_key, split_name  # noqa: E402
from normbench.judge.collapse import collapsed_seeds  # noqa: E402
from normbench.judge.rows import VariantRow, variant_rows  # noqa: E402
from normbench.render.plots import save_png  # noqa: E402


class GridSpec(NamedTuple):
    """What a ``bench.grid_plot`` spec asks for: the grid's label, the metric drawn, and which way is better."""

    axis: str
    metric: str
    goal: str


class GridPoint(NamedTuple):
    """One grid value of one base variant: its seeds' finite values, those of them that collapsed or stayed at
    chance, and how many seeds diverged."""

    value: str
    values: list[float]
    collapsed: list[float]
    diverged: int


def check_spec(spec: Any, board: Mapping[str, Any]) -> GridSpec:
    """A ``bench.grid_plot`` spec (``true``: the board's choice) checked against the board (its JSON object), or a
    one-line error."""
    spec = spec if isinstance(spec, dict) else {}
    choice = board.get("choice") or {}
    axis, metric = spec.get("axis", choice.get("axis")), spec.get("metric", choice.get("metric"))
    goal = spec.get("goal", choice.get("goal", "min") if metric == choice.get("metric") else "min")
    if not isinstance(axis, str) or not axis:
        raise ValueError(f"bench.grid_plot.axis: must name the grid's label (e.g. lr), got {axis!r}")
    if not isinstance(metric, str) or not metric:
        raise ValueError(f"bench.grid_plot.metric: must name one of the board's metrics, got {metric!r}")
    if goal not in ("min", "max"):
        raise ValueError(f"bench.grid_plot.goal: must be min or max, got {goal!r}")
    variants = variant_rows(board.get("variants") or [])
    if variants and not any(split_name(str(v.get("name", "")), axis) for v in variants):
        raise ValueError(f"bench.grid_plot.axis: no variant of the board is labelled {axis}=..., got {axis!r}")
    known = sorted({m for v in variants for m in v.get("metrics") or {}})
    if known and metric not in known:
        raise ValueError(
            f"bench.grid_plot.metric: {metric!r} is not a metric of the board; choose one of {', '.join(known)}"
        )
    return GridSpec(axis, metric, goal)


def grid_points(variants: Sequence[VariantRow], axis: str, metric: str) -> dict[str, list[GridPoint]]:
    """Base variant -> its grid points in the grid's order."""
    out: dict[str, list[GridPoint]] = {}
    for variant in variants:
        split = split_name(str(variant.get("name", "")), axis)
        if split is None:
            continue
        per_seed = ((variant.get("metrics") or {}).get(metric) or {}).get("per_seed") or []
        by_seed = dict(zip((str(s) for s in variant.get("seeds") or []), per_seed, strict=False))
        finite = [float(v) for v in per_seed if isinstance(v, (int, float)) and math.isfinite(v)]
        collapsed = [
            float(v) for s in sorted(set(collapsed_seeds(variant))) if isinstance(v := by_seed.get(s), (int, float))
        ]
        diverged = len(variant.get("diverged_at_step") or {})
        out.setdefault(split[0], []).append(GridPoint(split[1], finite, collapsed, diverged))
    return {base: sorted(points, key=lambda p: sort_key(p.value)) for base, points in out.items()}


def positions(values: list[str]) -> tuple[dict[str, float], bool]:
    """Each grid value's x position, and whether the axis is logarithmic (numbers spanning 10x or more); values
    that are not all positive numbers are placed 0, 1, 2, ... in the grid's order."""
    ordered = sorted(set(values), key=sort_key)
    if not ordered:
        return {}, False
    try:
        numbers = {v: float(v) for v in ordered}
    except ValueError:
        return {v: float(i) for i, v in enumerate(ordered)}, False
    if min(numbers.values()) <= 0:
        return {v: float(i) for i, v in enumerate(ordered)}, False
    return numbers, max(numbers.values()) >= 10 * min(numbers.values())


def mean_line(rows: list[GridPoint], x_of: dict[str, float]) -> tuple[list[float], list[float]]:
    """The mean line's points: each grid value's mean over its finite seeds, broken (NaN) where every seed diverged
    and between a single number and a value of several (``10.0`` then ``20.0;10.0;10.0``), which no line joins."""
    xs = [x_of[p.value] for p in rows]
    means = [sum(p.values) / len(p.values) if p.values else math.nan for p in rows]
    for k in reversed(range(1, len(rows))):
        if sort_key(rows[k].value)[0] != sort_key(rows[k - 1].value)[0]:
            xs.insert(k, math.nan)
            means.insert(k, math.nan)
    return xs, means


def worse_edge(values: list[float], goal: str, n_bases: int) -> list[float]:
    """Where each base's diverged-seed crosses sit: just past the worst plotted value (above it for ``goal: min``,
    below it for ``goal: max``), one row per base so that two bases' crosses at one grid value do not overlap."""
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    step = 0.06 * ((high - low) or 1.0)
    if goal == "min":
        return [high + step * (i + 1) for i in range(n_bases)]
    return [low - step * (i + 1) for i in range(n_bases)]


def plot_grid(board: Mapping[str, Any], spec: Any, path: str | Path) -> Path:
    """Write the figure described in the module docstring for ``board`` (its variants and choice; the board's JSON
    object) to ``path``."""
    axis, metric, goal = check_spec(spec, board)
    spec = spec if isinstance(spec, dict) else {}
    points = grid_points(variant_rows(board.get("variants") or []), axis, metric)
    x_of, logx = positions([p.value for rows in points.values() for p in rows])
    choice = choice_doc(board.get("choice"))
    chosen = {g["base"]: g.get("chosen") for g in (choice.get("groups") if choice else None) or []}
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    diverging = [base for base, rows in points.items() if any(p.diverged for p in rows)]  # one cross row each
    edge = dict(zip(diverging, worse_edge([v for rows in points.values() for p in rows for v in p.values], goal,
                                          len(diverging)), strict=True))  # fmt: skip
    crossed = collapsed = False
    for i, (base, rows) in enumerate(points.items()):
        (line,) = ax.plot(*mean_line(rows, x_of), marker="o", ms=4, lw=1.6, label=base)
        color = line.get_color()
        # collapsed seeds of several bases often sit at one value (the unigram loss): each base's a little apart
        beside = offset_copy(ax.transData, fig=fig, x=4.0 * (i - (len(points) - 1) / 2), units="points")
        for p in rows:
            ax.scatter([x_of[p.value]] * len(p.values), p.values, s=10, color=color, alpha=0.5, lw=0)
            if p.collapsed:
                collapsed = True
                ax.scatter([x_of[p.value]] * len(p.collapsed), p.collapsed, marker="s", s=36, facecolors="none",
                           edgecolors=color, lw=1.2, transform=beside)  # fmt: skip
            if p.diverged:
                crossed = True
                ax.scatter([x_of[p.value]], [edge[base]], marker="x", s=40, color=color, clip_on=False)
                ax.annotate(f"{p.diverged} div.", (x_of[p.value], edge[base]), textcoords="offset points",
                            xytext=(0, -5), ha="center", va="top", fontsize=6, color=color)  # fmt: skip
            if chosen.get(base) == p.value and p.values:
                ax.scatter([x_of[p.value]], [sum(p.values) / len(p.values)], s=110, facecolors="none", edgecolors=color)
    if logx:
        ax.set_xscale("log")
        ax.minorticks_off()
    ordered = sorted(x_of, key=sort_key)  # a tick at every grid value, labelled as the grid names it
    ax.set_xticks([x_of[v] for v in ordered], ordered, rotation=30 if len(ordered) > 6 else 0, fontsize=8)
    ax.set_xlabel(axis)
    ax.set_ylabel(f"{spec.get('ylabel', metric)} ({'lower' if goal == 'min' else 'higher'} is better)")
    notes = ["dots: seeds", "line: mean"]
    if collapsed:
        notes.append("square: collapsed or at chance")
    if crossed:
        notes.append("x: seeds diverged")
    if any(chosen.values()):
        notes.append("ring: chosen")
    ax.set_title(f"{spec.get('title', f'{metric} by {axis}')} ({'; '.join(notes)})", fontsize=9)
    ax.grid(alpha=0.3)
    if points:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return save_png(fig, path)
