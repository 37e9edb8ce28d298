"""Leaderboards: ``results/<key>/leaderboard.json`` and ``leaderboard.md``, written as one unit.

:mod:`normbench.boards.build` turns run records into a :class:`~normbench.archive.Board` (the contract
in the design notes); :mod:`normbench.render.board` turns a Board into Markdown; :func:`write` stores
both with the board's figures, so a failure leaves the folder as it was. Each name lives in one module and is
imported from there, never through this one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from normbench.archive import Board, dumps_board
from normbench.io import atomic_files, atomic_write_text
from normbench.render.board import render
from normbench.render.citation import bibtex

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
