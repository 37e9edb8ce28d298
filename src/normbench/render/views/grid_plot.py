"""A grid's figure (``bench.grid_plot``): each base variant's metric along a grid axis (a learning-rate grid), every
seed and failure drawn, the chosen value marked (:mod:`normbench.render.grid_plot`). It adds no document."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from normbench.render.grid_plot import check_spec, plot_grid
from normbench.render.views import View, ViewDoc, ViewInputs


def check(spec: Any) -> None:
    """``bench.grid_plot``: ``true`` (the board's choice names axis and metric) or a mapping of ``axis``, ``metric``
    (names), ``goal`` (min or max), ``title`` and ``ylabel``; checked against the board's variants when drawn."""
    if spec is True:
        return
    if not isinstance(spec, Mapping):
        raise ValueError(f"bench.grid_plot: must be true or a mapping of axis, metric and goal, got {spec!r}")
    unknown = sorted(set(spec) - {"axis", "metric", "goal", "title", "ylabel"})
    if unknown:
        raise ValueError(f"bench.grid_plot: unknown key {unknown[0]!r}; allowed: axis, metric, goal, title, ylabel")
    for key in ("axis", "metric"):
        if key in spec and (not isinstance(spec[key], str) or not spec[key]):
            raise ValueError(f"bench.grid_plot.{key}: must be a name, got {spec[key]!r}")
    if spec.get("goal", "min") not in ("min", "max"):
        raise ValueError(f"bench.grid_plot.goal: must be min or max, got {spec['goal']!r}")


def plot(inputs: ViewInputs, doc: ViewDoc | None, out: Path) -> Sequence[Path]:
    """``by_<axis>.png``: the grid's figure."""
    axis = check_spec(inputs.spec, inputs.board).axis
    return [plot_grid(inputs.board, inputs.spec, out / f"by_{axis}.png")]


VIEW = View("grid_plot", order=30, check=check, plot=plot, first=True, style=3)  # 2: failures, 3: set apart
