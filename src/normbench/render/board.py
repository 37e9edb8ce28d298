"""A board in Markdown: ``leaderboard.md`` is :func:`render` of ``leaderboard.json``: its header and warnings here,
then each section in order, one function each (:mod:`normbench.render.board_sections`, the views beside it and the
registered board views of :mod:`normbench.render.views`).

The Markdown is a pure function of the :class:`~normbench.archive.Board` (its figures included), so any
clone renders every published board again byte for byte; it is never edited by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from normbench.archive import Board
from normbench.boards.progress import render_progress
from normbench.judge.choice_text import render_choice
from normbench.judge.reference_runs import render_reference
from normbench.render.board_sections.paper import paper_tables, render_protocol
from normbench.render.board_sections.provenance import provenance_table, render_reproducibility
from normbench.render.board_sections.superseded import render_superseded
from normbench.render.board_sections.variants import (
    chance_note,
    failed_runs,
    flagged_seeds,
    metric_definitions,
    per_seed_table,
    render_collapse,
    variants_table,
    without_flagged_table,
)
from normbench.render.chance_view import against_chance_table
from normbench.render.claims_view import claims_table, findings
from normbench.render.markdown import Lines
from normbench.render.tuned_view import rates_table, side_by_side
from normbench.render.views import sections


def header(board: Board) -> Lines:
    p = board.provenance
    return [
        f"# normbench leaderboard: `{board.task}` (preset `{board.preset}`)",
        "",
        "Generated from the run records by `normbench leaderboard`; do not edit by hand.",
        f"Values are mean ± sample std over seeds. Built {board.generated_at} at commit "
        f"`{(p.get('git_commit') or 'unknown')[:12]}`{' (dirty)' if p.get('dirty') else ''}, "
        f"torch {p['torch']}, lightning {p['lightning']}, {p['device']}, {p['threads']} threads; "
        f"training wall time summed over runs {p['wall_time_s']:.0f} s.",
        "",
    ]


def render_uncommitted(marked: Any) -> Lines:
    """A warning line when some runs were trained from code that no commit holds (published with ``--force``)."""
    if not marked:
        return []
    return [
        "**Trained from uncommitted code: some runs of this board name a commit whose tree had changes, so no "
        "commit retrains them exactly; their values are shown but not reproducible from the repository.**",
        "",
    ]


def render_incomplete(planned: int | None, finished: int | None) -> Lines:
    """A warning line when some planned runs of the sweep have no finished record."""
    if planned is None or finished is None or finished >= planned:
        return []
    return [
        f"**Incomplete sweep: {planned - finished} of its {planned} planned runs have no finished record yet. "
        f"Every value and verdict below is computed on the {finished} finished runs only; the same command "
        f"trains the rest.**",
        "",
    ]


def figures(board: Board) -> Lines:
    if not board.figures:
        return []
    return ["", "## Figures", ""] + [f"![{Path(p).stem}]({Path(p).name})" for p in board.figures]


def citation(board: Board) -> Lines:
    if not board.citation:
        return []
    return ["", "## How to cite", "", "```bibtex", board.citation["bibtex"], "```"]


def render(board: Board) -> str:
    """``leaderboard.md`` of ``board``: every section in order, each from the board alone."""
    lines = [
        *header(board),
        *render_uncommitted(board.uncommitted_code),
        *render_incomplete(board.planned_runs, board.finished_runs),
        *render_progress(board.in_progress),
        *render_protocol(board.protocol),
        *sections(board),
        *render_choice(
            board.choice, complete=not board.planned_runs or (board.finished_runs or 0) >= board.planned_runs
        ),
        *rates_table(board),
        *variants_table(board),
        *chance_note(board),
        *flagged_seeds(board),
        *render_collapse(board.collapse, board.variants),
        *failed_runs(board),
        *without_flagged_table(board),
        *per_seed_table(board),
        *metric_definitions(board),
        *paper_tables(board),
        *render_reference(board.reference_runs),
        *claims_table(board),
        *side_by_side(board),
        *against_chance_table(board),
        *render_superseded(board.supersedes, board.claims, board.variants),
        *provenance_table(board),
        *render_reproducibility(board.reproducibility),
        *figures(board),
        *findings(board),
        *citation(board),
    ]
    return "\n".join(lines) + "\n"
