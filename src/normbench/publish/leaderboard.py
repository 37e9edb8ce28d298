"""Leaderboards: ``results/<task>/[<name>/]leaderboard.json`` and ``leaderboard.md``, written as one unit.

:mod:`normbench.boards.build` turns run records into a :class:`~normbench.archive.Board` (the contract
in the design notes); :mod:`normbench.render.board` turns a Board into Markdown; :func:`write` stores
both with the board's figures, so a failure leaves the folder as it was. The names other modules import
from here (``build``, ``render_markdown``, ``fmt_metric``...) are re-exported.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from normbench.archive import Board, dumps_board
from normbench.boards.build import (  # noqa: F401 - re-exported
    REDO,
    build,
    build_protocol,
    build_tables,
    distinct,
    fill_note,
    flag_seeds,
    group_by_variant,
    load_records,
    n_layers_of,
    reproducibility,
    unique_platforms,
    variant_entry,
)
from normbench.io import atomic_files, atomic_write_text
from normbench.judge.stats import aggregate  # noqa: F401 - re-exported
from normbench.render.board import (  # noqa: F401 - re-exported
    closed_text,
    diverged_text,
    fmt_metric,
    fmt_value,
    gap_text,
    measured_anywhere,
    measured_cell,
    paper_cell,
    render,
    render_collapse,
    render_incomplete,
    render_matrix,
    render_protocol,
    render_reproducibility,
    render_superseded,
    render_table,
    seed_status,
    seeds_cell,
    status_cell,
)
from normbench.render.citation import bibtex
from normbench.render.claims_view import (  # noqa: F401 - re-exported
    VERDICT_WORDS,
    describe_gaps,
    finding,
    metric_names_of,
    verdict_cell,
    whose,
)
from normbench.render.markdown import cell  # noqa: F401 - re-exported

BOARD_FILES = ("leaderboard.json", "leaderboard.md")


def with_figures(board: Board, plots: Sequence[str | Path] | None) -> Board:
    """``board`` showing the figures ``plots`` (their file names, in this order); unchanged for ``None``."""
    return board if plots is None else board.replace(figures=tuple(Path(p).name for p in plots))


def render_markdown(board: Board, plots: Sequence[str | Path] | None = None) -> str:
    """``leaderboard.md`` of ``board`` (:func:`normbench.render.board.render`), with ``plots`` as its figures
    when given."""
    return render(with_figures(board, plots))


def write(
    board: Board, out_dir: str | Path, plots: Sequence[str | Path] | None = None, stage: Path | None = None
) -> tuple[Path, Path]:
    """Write ``leaderboard.json`` and ``leaderboard.md`` of ``board`` (its figures ``plots``, when given, and
    its citation for ``out_dir``) into ``out_dir`` as one unit.

    ``stage``: a folder of :func:`normbench.io.atomic_files` for ``out_dir`` that the caller holds (with the
    board's figures drawn into it); without one, the two files are staged and moved into place here.
    """
    out_dir = Path(out_dir)
    board = with_figures(board, plots)
    board = board.replace(citation={"bibtex": bibtex(board, (out_dir / "leaderboard.json").as_posix())})
    if stage is None:
        with atomic_files(out_dir) as own:
            return write(board, out_dir, None, own)
    atomic_write_text(stage / "leaderboard.json", dumps_board(board))
    atomic_write_text(stage / "leaderboard.md", render(board))
    return out_dir / "leaderboard.json", out_dir / "leaderboard.md"
