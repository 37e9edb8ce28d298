"""A grid board's headline figure: its metric against the grid's value, one line per base variant.

A board that crosses its variants with a labelled axis (``pre/both,lr=0.004``: a learning-rate grid, DyT's
alpha0, the stability grid) draws ``by_<axis>.png``. Each seed's value is a dot, the mean over the seeds with a
finite value a line, and a seed that diverged (no finite value) a cross above the plotted values, so where a norm
stops training shows on the figure. A numeric axis spanning 10x or more is logarithmic; an axis whose values are not
all numbers (alpha0 per position, ``50.0;20.0;20.0``) keeps the grid's order, evenly spaced. On a choice board the
chosen value is ringed. Spec (``bench.grid_plot``): ``axis`` and ``metric``, each defaulting to the board's choice;
``title`` and ``ylabel`` optional.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from normbench.reporting.choice import sort_key, split_name  # noqa: E402
from normbench.reporting.plots import save_png  # noqa: E402


def check_spec(spec: Any, board: dict[str, Any]) -> tuple[str, str]:
    """(axis, metric) of a ``bench.grid_plot`` spec (``true``: the board's choice), or a one-line error."""
    spec = spec if isinstance(spec, dict) else {}
    choice = board.get("choice") or {}
    axis, metric = spec.get("axis", choice.get("axis")), spec.get("metric", choice.get("metric"))
    if not isinstance(axis, str) or not axis:
        raise ValueError(f"bench.grid_plot.axis: must name the grid's label (e.g. lr), got {axis!r}")
    if not isinstance(metric, str) or not metric:
        raise ValueError(f"bench.grid_plot.metric: must name one of the board's metrics, got {metric!r}")
    return axis, metric


def grid_points(
    variants: list[dict[str, Any]], axis: str, metric: str
) -> dict[str, list[tuple[str, list[float], int]]]:
    """Base variant -> its grid values in order, each with its seeds' finite values and its diverged seeds."""
    out: dict[str, list[tuple[str, list[float], int]]] = {}
    for variant in variants:
        split = split_name(str(variant.get("name", "")), axis)
        if split is None:
            continue
        per_seed = ((variant.get("metrics") or {}).get(metric) or {}).get("per_seed") or []
        finite = [float(v) for v in per_seed if isinstance(v, (int, float)) and math.isfinite(v)]
        diverged = len(variant.get("diverged_at_step") or {})
        out.setdefault(split[0], []).append((split[1], finite, diverged))
    return {base: sorted(points, key=lambda p: sort_key(p[0])) for base, points in out.items()}


def positions(values: list[str]) -> tuple[dict[str, float], bool]:
    """Each grid value's x position, and whether the axis is logarithmic (numbers spanning 10x or more); values
    that are not all positive numbers are placed 0, 1, 2, ... in the grid's order."""
    ordered = sorted(set(values), key=sort_key)
    try:
        numbers = {v: float(v) for v in ordered}
    except ValueError:
        return {v: float(i) for i, v in enumerate(ordered)}, False
    if min(numbers.values()) <= 0:
        return {v: float(i) for i, v in enumerate(ordered)}, False
    return numbers, max(numbers.values()) >= 10 * min(numbers.values())


def plot_grid(board: dict[str, Any], spec: Any, path: str | Path) -> Path:
    """Write the figure described in the module docstring for ``board`` (its variants and choice) to ``path``."""
    axis, metric = check_spec(spec, board)
    spec = spec if isinstance(spec, dict) else {}
    points = grid_points(board.get("variants") or [], axis, metric)
    x_of, logx = positions([value for rows in points.values() for value, _, _ in rows])
    chosen = {g["base"]: g.get("chosen") for g in (board.get("choice") or {}).get("groups") or []}
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=120)
    finite_all = [v for rows in points.values() for _, values, _ in rows for v in values]
    top = max(finite_all) if finite_all else 1.0
    span = (top - min(finite_all)) if len(finite_all) > 1 else 1.0
    cross_y = top + 0.06 * (span or 1.0)
    crossed = False
    for base, rows in points.items():
        xs = [x_of[value] for value, values, _ in rows if values]
        means = [sum(values) / len(values) for _, values, _ in rows if values]
        (line,) = ax.plot(xs, means, marker="o", ms=4, lw=1.6, label=base)
        color = line.get_color()
        for value, values, diverged in rows:
            ax.scatter([x_of[value]] * len(values), values, s=10, color=color, alpha=0.5, lw=0)
            if diverged:
                crossed = True
                ax.scatter([x_of[value]], [cross_y], marker="x", s=40, color=color, clip_on=False)
                ax.annotate(str(diverged), (x_of[value], cross_y), textcoords="offset points", xytext=(4, 2),
                            fontsize=7, color=color)  # fmt: skip
            if chosen.get(base) == value and values:
                ax.scatter([x_of[value]], [sum(values) / len(values)], s=110, facecolors="none", edgecolors=color)
    if logx:
        ax.set_xscale("log")
        ax.minorticks_off()
    ordered = sorted(x_of, key=sort_key)  # a tick at every grid value, labelled as the grid names it
    ax.set_xticks([x_of[v] for v in ordered], ordered, rotation=30 if len(ordered) > 6 else 0, fontsize=8)
    ax.set_xlabel(axis)
    ax.set_ylabel(spec.get("ylabel", metric))
    notes = ["dots: seeds", "line: mean"]
    if crossed:
        notes.append("x: diverged seeds (count)")
    if any(chosen.values()):
        notes.append("ring: chosen")
    ax.set_title(f"{spec.get('title', f'{metric} by {axis}')} ({'; '.join(notes)})", fontsize=9)
    ax.grid(alpha=0.3)
    if points:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return save_png(fig, path)
