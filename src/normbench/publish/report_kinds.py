"""The extra reports a task's ``bench`` block asks for by key, beside its leaderboard: a registry.

Each kind may enrich the finished records before the board is built (an analysis of each run's checkpoint,
with the metrics and tables it adds) and draw figures after (with fields it adds to the board). A new kind
is one :class:`ReportKind` and one entry in :data:`REPORT_KINDS`; :func:`normbench.publish.write.write_results`
applies every kind whose key the ``bench`` block sets, in the registry's order. The views a board shows from its
variants alone (the matrix, the width axis, a grid's figure) are board views, :mod:`normbench.render.views`, drawn
after the kinds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from normbench.archive.record import RecordDocument
from normbench.boards.variants import group_by_variant
from normbench.publish.settings import Bench
from normbench.render.views import ViewInputs, asked
from normbench.run_analyses import class_keys, head_keys, key_sets
from normbench.run_analyses.decomposition import Decomposition, plot_decomposition, with_decomposition


class AnalysedRecord(RecordDocument, total=False):
    """A finished run's record as a board's build reads it (named by its planned variant): with the series the report
    kinds add from its checkpoint's analyses and, where the ``decomposition`` kind ran, that analysis itself."""

    decomposition: Decomposition


Records = list[AnalysedRecord]
"""The records a board's build shows, in the order of its planned runs."""


BoardJson = Mapping[str, Any]
"""A built board as its ``leaderboard.json`` holds it (:meth:`normbench.archive.Board.to_json`), the views the kinds
drawn before added: what the renderers draw the figures from."""

Added = dict[str, object]
"""The fields a build's drawing adds to its board: each board view's document under its key, and ``figure_styles``
(file name -> style) for the figures drawn above style 1."""


@dataclass
class Sweep:
    """What a report kind may read of the sweep whose board is being built."""

    task: str
    preset: str | None
    out: Path
    n_layers: int
    planned: dict[str, list[int]] = field(default_factory=dict)  # variant -> its planned seeds, in order


def keep(records: Records, spec: Any, bench: Bench, sweep: Sweep) -> tuple[Records, Bench]:
    """The records and ``bench`` block as they are: the enrichment of a kind that adds nothing to them."""
    return records, bench


def nothing(board: BoardJson, spec: Any, records: Records, sweep: Sweep) -> Sequence[Path]:
    """No figure: the drawing of a kind that draws nothing."""
    return []


@dataclass(frozen=True)
class ReportKind:
    """One kind of extra report.

    Attributes:
        enrich: ``(records, spec, bench, sweep) -> (records, bench)``: each record with the kind's values,
            and the ``bench`` block with the metrics and tables that show them.
        draw: ``(board, spec, records, sweep) -> figures``: the kind's figures.
        first: its figures lead the board's (the board's headline figure, e.g. the matrix).
        style: the version of its drawing, raised when a change to it should reach the published boards: a board
            records the style of each figure drawn above style 1 (``figure_styles``), so a rebuild from the same
            runs whose figure is drawn in a new style is written, not kept as published.
    """

    enrich: Callable[[Records, Any, Bench, Sweep], tuple[Records, Bench]] = keep
    draw: Callable[[BoardJson, Any, Records, Sweep], Sequence[Path]] = nothing
    first: bool = False
    style: int = 1


def _decomposition(records: Records, spec: Any, bench: Bench, sweep: Sweep) -> tuple[Records, Bench]:
    return with_decomposition(records, int(spec.get("sequences", 256))), bench


def _draw_decomposition(board: BoardJson, spec: Any, records: Records, sweep: Sweep) -> Sequence[Path]:
    panels = {
        v: [r["decomposition"] for r in rs if "decomposition" in r] for v, rs in group_by_variant(records).items()
    }
    if not any(panels.values()):
        return []
    shown = {v: rs for v, rs in panels.items() if rs}
    return [plot_decomposition(shown, sweep.out / "decomposition.png", spec.get("title", ""))]


def _head_keys(records: Records, spec: Any, bench: Bench, sweep: Sweep) -> tuple[Records, Bench]:
    return head_keys.with_head_keys(records), bench


def _class_keys(records: Records, spec: Any, bench: Bench, sweep: Sweep) -> tuple[Records, Bench]:
    metrics = {**(bench.get("metrics") or {}), **class_keys.metrics()}
    return class_keys.with_class_keys(records), {**bench, "metrics": metrics}


def _key_sets(records: Records, spec: Any, bench: Bench, sweep: Sweep) -> tuple[Records, Bench]:
    metrics = key_sets.metrics(key_sets.check_spec(spec)[0], sweep.n_layers)
    tables = {**(bench.get("tables") or {}), "key_sets": key_sets.table_spec(spec, sweep.n_layers)}
    bench = {**bench, "metrics": {**(bench.get("metrics") or {}), **metrics}, "tables": tables}
    return key_sets.with_key_sets(records, spec), bench


def _draw_key_sets(board: BoardJson, spec: Any, records: Records, sweep: Sweep) -> Sequence[Path]:
    by_name = {v["name"]: v for v in board["variants"]}
    return [key_sets.plot_key_sets(by_name, spec, sweep.n_layers, sweep.out / "key_sets.png")]


# bench key -> its report; applied in this order (a later `first` figure leads an earlier one)
REPORT_KINDS: dict[str, ReportKind] = {
    "decomposition": ReportKind(enrich=_decomposition, draw=_draw_decomposition),
    "head_keys": ReportKind(enrich=_head_keys),
    "class_keys": ReportKind(enrich=_class_keys),
    "key_sets": ReportKind(enrich=_key_sets, draw=_draw_key_sets),
}


def enrich(records: Records, bench: Bench, sweep: Sweep) -> tuple[Records, Bench]:
    """The records and ``bench`` block after every kind the block asks for has enriched them."""
    for key, kind in REPORT_KINDS.items():
        if bench.get(key):
            records, bench = kind.enrich(records, bench[key], bench, sweep)
    return records, bench


def draw(board: BoardJson, bench: Bench, records: Records, sweep: Sweep, plots: list[str]) -> tuple[list[str], Added]:
    """``plots`` with every asked-for kind's figures and then every asked-for board view's
    (:mod:`normbench.render.views`), leading ones first, and the fields they add to the board (:data:`Added`). Each
    view builds from ``board`` with the documents of the views before it."""
    added: Added = {}
    styles: dict[str, int] = {}

    def place(first: bool, style: int, figures: Sequence[Path]) -> None:
        nonlocal plots
        drawn = [str(p) for p in figures]
        plots = drawn + plots if first else plots + drawn
        if style > 1:
            styles.update({Path(p).name: style for p in drawn})

    for key, kind in REPORT_KINDS.items():
        if bench.get(key):
            place(kind.first, kind.style, kind.draw(board, bench[key], records, sweep))
    configs = {r["variant"]: r["config"] for r in records}
    for view in asked(bench):
        inputs = ViewInputs(bench[view.key], {**board, **added}, configs, sweep.planned, sweep.task, sweep.preset)
        doc = view.build(inputs) if view.build is not None else None
        if doc is not None:
            added[view.key] = doc
        place(view.first, view.style, view.plot(inputs, doc, sweep.out))
    if styles:
        added["figure_styles"] = {**(board.get("figure_styles") or {}), **styles}
    return plots, added
