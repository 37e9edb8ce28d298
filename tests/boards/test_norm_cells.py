"""A norm leaderboard's cell: its standing against the best complete cell, and the difference its seeds resolve."""

from __future__ import annotations

import math
import statistics

import pytest
from scipy import stats as scipy_stats

from normbench.boards.norm_cells import complete, resolution, standings


def cell(values: list[float | None], declared: int | None = None, failed: list[str] | None = None) -> dict:
    finite = [v for v in values if v is not None]
    return {
        "per_seed": values,
        "seeds": list(range(len(values))),
        "finished": len(values),
        "declared": len(values) if declared is None else declared,
        "failed": failed or [],
        "mean": statistics.fmean(finite) if finite else None,
    }


def test_standings_best_tied_worse_undecided_in_progress_and_failed() -> None:
    best = cell([0.900, 0.901, 0.902, 0.9005, 0.9015])
    tied = cell([0.899, 0.900, 0.901, 0.8995, 0.9005])
    worse = cell([0.70, 0.71, 0.72, 0.705, 0.715])
    undecided = cell([0.80, 0.95, 0.85, 0.99, 0.90])
    partial = cell([0.99, 0.99], declared=5)
    diverged = cell([0.99, None, 0.99, 0.99, 0.99], failed=["1"])
    cells = [best, tied, worse, undecided, partial, diverged]
    standings(cells, "higher", margin=0.01)
    assert best["standing"] == "best so far (1 in progress)"
    assert tied["standing"] == "tied"
    assert worse["standing"] == "worse"
    assert undecided["standing"] == "undecided"
    assert partial["standing"] == "in progress 2 of 5"  # no standing before its seeds, however good its mean
    assert diverged["standing"] == "failed: 1 of 5 seeds"  # a diverged seed is a miss, never averaged away
    assert not complete(diverged)


def test_lower_is_better_flips_the_best() -> None:
    low, high = cell([1.0, 1.01, 1.02]), cell([2.0, 2.01, 2.02])
    standings([low, high], "lower", margin=0.02)
    assert (low["standing"], high["standing"]) == ("best", "worse")


def test_resolution_is_the_half_width_of_a_difference_of_two_cells() -> None:
    a, b = cell([1.0, 2.0, 3.0]), cell([2.0, 4.0, 6.0])
    pooled = math.sqrt((statistics.variance([1.0, 2.0, 3.0]) + statistics.variance([2.0, 4.0, 6.0])) / 2)
    expected = scipy_stats.t.ppf(0.975, 4) * pooled * math.sqrt(2 / 3)
    assert resolution([a, b], 3) == pytest.approx(expected)
