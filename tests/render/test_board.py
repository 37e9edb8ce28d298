"""``leaderboard.md`` is a pure function of ``leaderboard.json``: every committed board renders to its Markdown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normbench.archive import load_board
from normbench.publish.unselectable import render as render_grid
from normbench.render.board import render

ROOT = Path(__file__).resolve().parents[2]
BOARDS = [p for p in sorted((ROOT / "results").rglob("leaderboard.json")) if p.parent.name != "unselectable"]


@pytest.mark.parametrize("path", BOARDS, ids=lambda p: str(p.parent.relative_to(ROOT / "results")))
def test_every_committed_board_renders_to_its_markdown(path: Path) -> None:
    board = load_board(path)
    assert board.figures is not None  # the figures are part of the board, so the Markdown needs nothing else
    assert render(board) == path.with_suffix(".md").read_text(encoding="utf-8")


def test_the_random_grid_board_renders_from_its_grid() -> None:
    folder = ROOT / "results" / "unselectable"
    board = json.loads((folder / "leaderboard.json").read_text(encoding="utf-8"))
    grid = json.loads((folder / "random_grid.json").read_text(encoding="utf-8"))
    plots = [folder / name for name in ("random_grid_raw.png", "random_grid_layernorm.png")]
    if "layernorm_eps" in grid["stats"]:
        plots.append(folder / "random_grid_layernorm_eps.png")
    assert render_grid(board, grid, plots) == (folder / "leaderboard.md").read_text(encoding="utf-8")
