"""What a board sets beside the paper, in Markdown: the sweep's settings next to the paper's, then each paper table
(measured mean ± std beside the paper's value)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from normbench.archive import Board
from normbench.judge.chance.board import chance_text
from normbench.judge.rows import MetricRow
from normbench.render.markdown import Lines, cell


def render_protocol(protocol: Mapping[str, Any] | None) -> Lines:
    """The sweep's settings beside the paper's, then the protocol's notes."""
    if not protocol or not (protocol.get("settings") or protocol.get("notes")):
        return []
    lines = ["## Protocol", ""]
    if protocol.get("settings"):
        lines += ["| setting | this sweep | paper |", "|---|---|---|"]
        for row in protocol["settings"]:
            paper = row["paper"] if row["paper"] is not None else "–"
            lines.append(f"| {cell(row['setting'])} | {cell(row['this_sweep'])} | {cell(paper)} |")
        lines.append("")
    lines += [f"- {note}" for note in protocol.get("notes") or []]
    return lines + [""]


def measured_cell(m: MetricRow) -> str:
    """A table cell (a paper table's measured aggregate, its ``mean``, ``std`` and ``chance`` scaled as the table
    shows them): ``mean ± std`` to one decimal, ``n/a`` when not measured."""
    return "n/a" if m["mean"] is None else f"{m['mean']:.1f} ± {m['std']:.1f}{chance_text(m.get('chance'), 1.0, 1)}"


def paper_cell(value: float | None) -> str:
    """A table cell of the paper's value, ``–`` where it reports none."""
    return "–" if value is None else f"{value:g}"


def render_table(table: Mapping[str, Any]) -> Lines:
    """Markdown of one paper table (:func:`normbench.boards.paper.build_tables`): measured mean ± std,
    then the paper's value."""
    lines = [f"### {table['title']}", ""]
    if table["note"]:
        lines += [table["note"], ""]
    if table.get("paper_column"):  # one paper value per row, measured apart from the columns
        lines.append("| model | " + " | ".join(table["columns"]) + f" | {table['paper_column']} |")
        lines.append("|---|" + "---|" * (len(table["columns"]) + 1))
        for row in table["rows"]:
            cells = [measured_cell(m) for m in row["measured"]]
            null = row.get("paper_null")
            at = (
                f" (chance {'–'.join(f'{m:.1f}' for m in null['mean'])} at {'–'.join(map(str, null['n']))} keys)"
                if null
                else ""
            )
            cells.append(paper_cell(row["paper"]) + at)
            lines.append(f"| {cell(row['label'])} (`{row['variant']}`) | " + " | ".join(cells) + " |")
        return lines + [""]
    lines.append("| model | " + " | ".join(f"{c} measured | {c} paper" for c in table["columns"]) + " |")
    lines.append("|---|" + "---|---|" * len(table["columns"]))
    for row in table["rows"]:
        paper = row["paper"] or [None] * len(table["columns"])
        cells = []
        for m, p in zip(row["measured"], paper, strict=False):
            cells.append(measured_cell(m))
            cells.append(paper_cell(p))
        lines.append(f"| {cell(row['label'])} (`{row['variant']}`) | " + " | ".join(cells) + " |")
    return lines + [""]


def paper_tables(board: Board) -> Lines:
    if not board.tables:
        return []
    lines = ["", "## Paper tables", ""]
    for table in board.tables:
        lines += render_table(table)
    return lines
