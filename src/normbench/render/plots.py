"""Figures next to the leaderboards: one logged series per variant, mean and min-max band over seeds."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from normbench.io import write_png  # noqa: E402
from normbench.tasks.series import smooth  # noqa: E402

MANY = 8  # more variants than this: the legend goes beside the axes
GEOMETRY_FIGURES = ("geometry_3d.png", "query_angle_histograms.png")  # drawn beside the majority board by its own
# command (`normbench geometry`): a rebuilt board keeps listing them (:func:`normbench.publish.write.figures_kept`)


class PlotSpec(TypedDict, total=False):
    """One figure of a preset's ``bench.plots`` (file name -> spec): the logged ``series`` drawn (always there), its
    moving-mean window (``smooth``, default 1), a log y axis (``logy``) and the axis label and title (``ylabel``,
    ``title``, each defaulting to the series' name)."""

    series: str
    smooth: int
    logy: bool
    ylabel: str
    title: str


def finite_points(points: list[list[float | None]]) -> np.ndarray:
    """The ``[step, value]`` points whose value is finite, as an (n, 2) array (``null``, NaN and ±inf skipped)."""
    rows = [(float(step), float(v)) for step, v in points if step is not None and v is not None and math.isfinite(v)]
    return np.asarray(rows, dtype=float).reshape(-1, 2)


def seed_band(runs: list[list[list[float | None]]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Steps, mean, min and max over seeds, each seed's finite points interpolated on the common
    steps (up to the shortest seed's last one); empty arrays when no seed has a finite point."""
    arrays = [a for a in map(finite_points, runs) if len(a)]
    if not arrays:
        empty = np.empty(0)
        return empty, empty, empty, empty
    end = min(a[-1, 0] for a in arrays)
    steps = np.unique(np.concatenate([a[:, 0] for a in arrays]))
    steps = steps[steps <= end]
    values = np.stack([np.interp(steps, a[:, 0], a[:, 1]) for a in arrays])
    return steps, values.mean(0), values.min(0), values.max(0)


def variant_label(name: str, records: Sequence[Mapping[str, Any]], plotted: int) -> str:
    """``name (n=k)``, naming the seeds left out: ``name (n=1; seed 1 diverged at step 40)`` (``records``: the
    variant's run records, JSON objects)."""
    out = [
        f"seed {r['seed']} diverged"
        + (f" at step {r['diverged_at_step']}" if r.get("diverged_at_step") is not None else "")
        for r in records
        if r.get("status") == "diverged"
    ]
    if not plotted:
        out.append("no finite values")
    return f"{name} (n={plotted}{'; ' if out else ''}{'; '.join(out)})"


def plot_series(
    records_by_variant: Mapping[str, Sequence[Mapping[str, Any]]], spec: PlotSpec, path: str | Path
) -> Path:
    """Write one PNG of ``spec['series']`` for every variant (mean line, min-max band over seeds; its run records,
    JSON objects).

    With more than :data:`MANY` variants (a grid board) the legend stands beside the axes, in columns. The band is
    over the seeds that did not diverge (the diverged ones' finite points when every
    seed diverged); values that are not finite are skipped, and a variant with none still gets its
    legend entry. A log axis (``logy``) shows only positive values, and stays linear without any.
    """
    many = len(records_by_variant) > MANY  # a grid board's variants: the legend beside the axes, not over the curves
    fig, ax = plt.subplots(figsize=(10.5 if many else 7, 4.2), dpi=120)
    if len(records_by_variant) > 10:  # more lines than the default cycle's ten colours
        ax.set_prop_cycle(color=matplotlib.color_sequences["tab20"])  # the "tab20" colormap's 20 colours
    logy, positive = bool(spec.get("logy")), False
    for name, records in records_by_variant.items():
        runs = [smooth(r["series"].get(spec["series"], []), int(spec.get("smooth", 1))) for r in records]
        if not any(runs):
            continue
        kept = [run for run, r in zip(runs, records, strict=False) if r.get("status") != "diverged"]
        if not any(len(finite_points(run)) for run in kept):
            kept = runs  # every seed diverged: what they logged before it
        if logy:
            kept = [[[step, v] for step, v in run if v is None or v > 0] for run in kept]
        steps, mean, lo, hi = seed_band(kept)
        plotted = sum(len(finite_points(run)) > 0 for run in kept)
        (line,) = ax.plot(steps, mean, label=variant_label(name, records, plotted), lw=1.6)
        if len(steps):
            ax.fill_between(steps, lo, hi, color=line.get_color(), alpha=0.2, lw=0)
            positive = positive or bool((mean > 0).any())
    ax.set_xlabel("training step")
    ax.set_ylabel(spec.get("ylabel", spec["series"]))
    ax.set_title(spec.get("title", spec["series"]), fontsize=10)
    if logy and positive:
        ax.set_yscale("log")
    ax.grid(alpha=0.3)
    handles = ax.get_legend_handles_labels()[0]
    if handles and many:
        columns = math.ceil(len(handles) / 22)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), ncol=columns, frameon=False)
    elif handles:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return save_png(fig, path)


def save_png(fig: Any, path: str | Path) -> Path:
    """Write ``fig`` as PNG atomically and deterministically (:func:`normbench.io.write_png`: a file that already shows
    the same image is left as it is) and close it."""
    try:
        return write_png(fig, path)
    finally:
        plt.close(fig)
