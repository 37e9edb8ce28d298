"""The placement x component matrix (``bench.matrix``): one cell per planned variant, a table per headline metric
and a heat map (:mod:`normbench.render.matrix`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from normbench.render.board_sections.matrix_tables import render_matrix
from normbench.render.matrix import MatrixDoc, build_matrix, check_spec, plot_matrix
from normbench.render.views import View, ViewDoc, ViewInputs


def check(spec: Any) -> None:
    """``bench.matrix``: a mapping with its ``headline`` metrics (:func:`normbench.render.matrix.check_spec`)."""
    check_spec(spec if isinstance(spec, Mapping) else {})


def build(inputs: ViewInputs) -> ViewDoc:
    """The matrix document of the board's variants and the sweep's planned variants."""
    return cast(ViewDoc, build_matrix(inputs.spec, inputs.variants, dict(inputs.planned)))


def plot(inputs: ViewInputs, doc: ViewDoc | None, out: Path) -> Sequence[Path]:
    """``matrix.png``: the heat map of each headline metric."""
    if doc is None:
        return []
    title = f"{inputs.task}: placement x component, preset {inputs.preset} (mean ± std over seeds)"
    return [plot_matrix(cast(MatrixDoc, doc), out / "matrix.png", title)]


VIEW = View("matrix", order=10, check=check, build=build, render=render_matrix, plot=plot, first=True)
