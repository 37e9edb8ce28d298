"""A board's placement x component matrix in Markdown: one table per panel, each cell mean ± std over seeds with
every seed's value, then the cells not done."""

from __future__ import annotations

from collections.abc import Mapping

from normbench.judge.chance.board import chance_text
from normbench.render.board_sections.cells import fmt_value
from normbench.render.markdown import Lines
from normbench.render.matrix import UNSELECTABLE, MatrixCell, matrix_doc, panels


def matrix_cell(c: MatrixCell | None, key: str) -> str:
    """One cell of a matrix panel: mean ± std over seeds, then every seed's value."""
    if c is None:
        return "–"
    m = c.get("metrics", {}).get(key) or {}
    if m.get("mean") is None:
        return c["status"] if c["status"] != "done" else "not measured"
    scale = 100 if key == UNSELECTABLE else 1
    fmt = (lambda v: "–" if v is None else f"{scale * v:.1f}") if scale != 1 else fmt_value
    seeds = ", ".join(fmt(v) for v in m.get("per_seed") or [])
    flag = " ⚑" if c.get("flagged") else ""
    n = sum(v is not None for v in m.get("per_seed") or [])
    spread = f" ± {fmt(m.get('std') or 0.0)}" if n > 1 else " (one seed)"
    digits = 1 if scale != 1 else 3
    return f"{fmt(m['mean'])}{spread}{flag}{chance_text(m.get('chance'), scale, digits)}<br>({seeds})"


def render_matrix(board_matrix: Mapping[str, object] | None) -> Lines:
    """Markdown of a placement x component matrix (:mod:`normbench.render.matrix`; a board's ``matrix``): one table
    per panel, each cell mean ± std over seeds with every seed's value, then the cells' status."""
    matrix = matrix_doc(board_matrix)
    if not matrix:
        return []
    lines = [
        "## Matrix: placement x component",
        "",
        "Rows: where the norms sit; columns: the component of the attention norm (the variant "
        "`<placement>/<component>`). Each cell: mean ± std over seeds, then every seed's value; "
        "– : no such variant in this sweep.",
        "",
    ]
    by_cell = {(c["placement"], c["component"]): c for c in matrix["cells"]}
    for key, title in panels(matrix):
        lines += [
            f"**{title}{' (%)' if key == UNSELECTABLE else ''}**",
            "",
            "| placement | " + " | ".join(f"`{c}`" for c in matrix["columns"]) + " |",
            "|---|" + "---|" * len(matrix["columns"]),
        ]
        for row in matrix["rows"]:
            cells = [matrix_cell(by_cell.get((row, col)), key) for col in matrix["columns"]]
            lines.append(f"| `{row}` | " + " | ".join(cells) + " |")
        lines.append("")
    unfinished = [c for c in matrix["cells"] if c["status"] not in ("done",)]
    if unfinished:
        lines += ["Cells not done (shown, never dropped):", ""]
        for c in unfinished:
            why = "; ".join(f"seed {s}: {w}" for s, w in (c.get("flagged") or {}).items())
            lines.append(f"- `{c['variant']}`: {c['status']}{f' ({why})' if why else ''}")
        lines.append("")
    return lines
