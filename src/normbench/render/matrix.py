"""The placement x component matrix of a sweep: one cell per variant ``<placement>/<component>``.

A sweep whose config has ``bench.matrix`` (the ``matrix`` preset of each task) gets, next to its
leaderboard, the variants arranged as a grid: placements as rows (``pre``, ``post``, ``none``),
components as columns (the registered components in their order, then any other suffix such as
``both_nowarmup``). Each cell holds the headline metrics (``bench.matrix.headline``) and the
unselectable-key fraction (``bench.matrix.unselectable``; a metric with ``{layer}`` is averaged
over the layers, seed by seed), as mean ± std with every seed's value. A planned cell without a
finished run is shown as such, never dropped. ``matrix.png`` draws the same grid.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import cast

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from normbench.archive.documents.views import MatrixCell, MatrixDoc  # noqa: E402
from normbench.judge.rows import MetricRow, VariantRow  # noqa: E402
from normbench.judge.stats import aggregate  # noqa: E402
from normbench.nn.norms import component_names  # noqa: E402
from normbench.nn.placement import PLACEMENTS  # noqa: E402
from normbench.render.plots import save_png  # noqa: E402

UNSELECTABLE = "unselectable"


def split_variant(name: str) -> tuple[str, str]:
    """``post/both_nowarmup`` -> (``post``, ``both_nowarmup``); a one-line error for a name off the grid."""
    placement, slash, component = name.partition("/")
    if not slash or placement not in PLACEMENTS or not component:
        raise ValueError(
            f"bench.matrix: variant {name!r} is not named <placement>/<component> with a placement in "
            f"{', '.join(PLACEMENTS)}"
        )
    return placement, component


def check_spec(spec: Mapping[str, object]) -> tuple[list[str], str | None]:
    """(headline metrics, unselectable metric) of a ``bench.matrix`` spec, or a one-line error naming the field."""
    headline = spec.get("headline")
    if not isinstance(headline, list) or not headline or not all(isinstance(m, str) for m in headline):
        raise ValueError(f"bench.matrix.headline: must be a non-empty list of leaderboard metrics, got {headline!r}")
    unselectable = spec.get("unselectable")
    if unselectable is not None and not isinstance(unselectable, str):
        raise ValueError(f"bench.matrix.unselectable: must be a metric name, got {unselectable!r}")
    return headline, unselectable


def layer_mean(variant: VariantRow, template: str) -> MetricRow:
    """The aggregate over seeds of a metric, a ``{layer}`` template averaged over the layers seed by seed
    (x_s = (1/L) Σ_l x_{s,l}); a diverged seed counts in no mean, as in the leaderboard."""
    metrics = variant.get("metrics") or {}
    if "{layer}" not in template:
        return metrics.get(template) or {"per_seed": [], "mean": None, "std": None, "n": 0}
    layers = [metrics.get(template.format(layer=i)) or {} for i in range(1, int(variant.get("n_layers") or 1) + 1)]
    seeds = list(variant.get("seeds") or [])
    per_seed = []
    for i in range(len(seeds)):
        values = [(m.get("per_seed") or [None] * (i + 1))[i] for m in layers]
        known = [v for v in values if v is not None]
        per_seed.append(sum(known) / len(known) if values and len(known) == len(values) else None)
    diverged = variant.get("diverged_at_step") or {}
    out = aggregate(per_seed, [None] * len(per_seed), [str(seed) not in diverged for seed in seeds])
    chances = [c for c in (m.get("chance") for m in layers) if c]
    if chances and len(chances) == len(layers):  # chance of the layer mean: the mean of the layers' chance values
        out["chance"] = {
            "mean": sum(c["mean"] for c in chances) / len(chances),
            "sem": None,
            "sanity_check": all(c["sanity_check"] for c in chances),
            "basis": "mean over the layers of each layer's chance value",
        }
    return out


def build_matrix(
    spec: Mapping[str, object], variants: Sequence[VariantRow], planned: dict[str, list[int]]
) -> MatrixDoc:
    """The matrix document: ``rows``, ``columns`` and one ``cells`` entry per planned variant.

    ``variants`` are the leaderboard's entries (finished runs), ``planned`` every variant of the
    sweep with its seeds; a cell's ``status`` is ``done``, ``flagged`` (a seed diverged or stayed at
    chance), ``partial`` (k of n seeds finished) or ``not run``.
    """
    headline, unselectable = check_spec(spec)
    by_name = {v["name"]: v for v in variants}
    cells: list[MatrixCell] = []
    for name, seeds in planned.items():
        placement, component = split_variant(name)
        entry = by_name.get(name)
        cell: MatrixCell = {
            "variant": name,
            "placement": placement,
            "component": component,
            "planned_seeds": list(seeds),
            "seeds": [],
            "status": "not run",
            "metrics": {},
        }
        if entry is not None:
            cell["seeds"] = list(entry["seeds"])
            done = len(entry["seeds"])
            cell["status"] = (
                ("flagged" if entry.get("flagged") else "done")
                if done >= len(seeds)
                else f"partial: {done} of {len(seeds)} seeds"
            )
            if entry.get("flagged"):
                cell["flagged"] = entry["flagged"]
            for metric in headline:
                cell["metrics"][metric] = (entry.get("metrics") or {}).get(metric) or {"per_seed": [], "mean": None}
            if unselectable:
                cell["metrics"][UNSELECTABLE] = layer_mean(entry, unselectable)
        cells.append(cell)
    known = [c for c in component_names() if any(cell["component"] == c for cell in cells)]
    others = [c for c in dict.fromkeys(cell["component"] for cell in cells) if c not in known]
    rows = [p for p in PLACEMENTS if any(cell["placement"] == p for cell in cells)]
    return {"rows": rows, "columns": known + others, "headline": headline, "unselectable": unselectable, "cells": cells}


def cell_at(matrix: MatrixDoc, placement: str, component: str) -> MatrixCell | None:
    """The cell of ``placement``/``component``, or ``None`` where the sweep has no such variant."""
    return next((c for c in matrix["cells"] if c["placement"] == placement and c["component"] == component), None)


def matrix_doc(matrix: Mapping[str, object] | None) -> MatrixDoc | None:
    """A board's ``matrix`` as :func:`build_matrix` wrote it (:class:`normbench.archive.Board` keeps it a JSON
    object, read from ``leaderboard.json``)."""
    return cast("MatrixDoc | None", matrix)


def panels(matrix: MatrixDoc) -> list[tuple[str, str]]:
    """(metric key in the cells, title) of each panel: the headline metrics, then the unselectable keys."""
    out = [(m, m) for m in matrix["headline"]]
    if unselectable := matrix.get("unselectable"):
        what = unselectable.replace("{layer}", "*")
        out.append(
            (
                UNSELECTABLE,
                f"unselectable keys (`{unselectable}`{', mean over layers' if '*' in what else ''})",
            )
        )
    return out


def plot_matrix(matrix: MatrixDoc, path: str | Path, title: str = "") -> Path:
    """``matrix.png``: one heat map per panel, placement rows x component columns, each cell its mean
    ± std over seeds (n = finished seeds); cells without a run are blank."""
    rows, cols = matrix["rows"], matrix["columns"]
    shown = panels(matrix)
    fig, axes = plt.subplots(
        len(shown),
        1,
        figsize=(1.6 + 1.15 * len(cols), 0.2 + (0.75 + 0.7 * len(rows)) * len(shown)),
        dpi=120,
        squeeze=False,
    )
    for ax, (key, label) in zip(axes[:, 0], shown, strict=False):
        grid = np.full((len(rows), len(cols)), np.nan)
        for i, placement in enumerate(rows):
            for j, component in enumerate(cols):
                cell = cell_at(matrix, placement, component)
                m = (cell["metrics"].get(key) if cell else None) or {}
                if (mean := m.get("mean")) is not None:
                    grid[i, j] = mean
        finite = grid[np.isfinite(grid)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        ax.imshow(grid, cmap="viridis", vmin=lo, vmax=hi if hi > lo else lo + 1e-9, aspect="auto")
        for i, placement in enumerate(rows):
            for j, component in enumerate(cols):
                cell = cell_at(matrix, placement, component)
                if cell is None:
                    continue
                m = cell["metrics"].get(key) or {}
                if (mean := m.get("mean")) is None:
                    text = "n/a" if cell["status"] == "done" else cell["status"].replace(": ", ":\n")
                else:
                    n = sum(v is not None for v in m.get("per_seed") or [])
                    scale = 100 if key == UNSELECTABLE else 1
                    fmt = ".1f" if key == UNSELECTABLE else ".3f"
                    spread = f"±{scale * (m.get('std') or 0):{fmt}}" if n > 1 else "one seed"
                    text = f"{scale * mean:{fmt}}\n{spread}\nn={n}"
                    if cell.get("flagged"):
                        text += " (flag)"
                value = grid[i, j]
                dark = math.isfinite(value) and (hi <= lo or (value - lo) < 0.5 * (hi - lo))  # viridis: dark low end
                ax.text(j, i, text, ha="center", va="center", fontsize=6.5, color="white" if dark else "black")
        ax.set_xticks(range(len(cols)), [c.replace("_", "\n") for c in cols], fontsize=7)
        ax.set_yticks(range(len(rows)), rows, fontsize=8)
        ax.set_ylabel("placement", fontsize=8)
        ax.set_title(label + (" (%)" if key == UNSELECTABLE else ""), fontsize=8.5)
    axes[-1, 0].set_xlabel("component of the attention norm", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return save_png(fig, path)
