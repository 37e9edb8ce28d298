"""The tuned boards the norm leaderboard reads its cells from: a cell whose grid still waits has no standing."""

from __future__ import annotations

from pathlib import Path

from normbench.boards.norm_cells import complete, standings
from normbench.boards.norm_sources import Sources
from tests.boards.test_norm_cells import cell

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_a_tuned_cell_whose_grid_still_waits_for_tuning_seeds_has_no_standing() -> None:
    """SST-2's grid tunes on seeds 100-102: until seed 102 has run, the rate a tuned board used is not final."""
    sources = Sources("sst2", "tuned", RESULTS)
    key, board, base = sources.index["post/both"]
    waiting = sources.choice_waits(board, "post/both", base["chosen"])
    assert waiting is not None and "102" in waiting
    c = sources.cell("post/both", "tuned", "val_acc", 5)
    standings([c, cell([0.8] * 5)], "higher", 0.01)
    assert c["standing"].startswith("in progress: the choice waits") and not complete(c)
