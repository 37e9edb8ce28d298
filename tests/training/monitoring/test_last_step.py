"""A run whose ``max_steps`` its validation interval does not divide is evaluated at its last step too."""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.training.monitoring.last_step import misses_last_step
from tests.training.test_cli import fit


def test_a_run_cut_short_by_max_steps_is_evaluated_at_its_last_step(tmp_path: Path) -> None:
    rec = fit(tmp_path, "--trainer.max_steps=8", "--trainer.val_check_interval=6")
    assert rec["status"] == "done" and rec["final_step"] == 8
    assert [s for s, _ in rec["series"]["test/acc"]] == [6, 8]


def test_a_run_whose_steps_the_interval_divides_is_evaluated_as_before(tmp_path: Path) -> None:
    rec = fit(tmp_path)  # 12 steps, every 6
    assert [s for s, _ in rec["series"]["test/acc"]] == [6, 12]


@pytest.mark.parametrize(
    ("max_steps", "interval", "misses"),
    [(50, 500, True), (5000, 500, False), (-1, 500, False), (7, 0.5, False), (7, True, False), (8, 6, True)],
)
def test_which_runs_would_miss_their_last_step(max_steps: int, interval: object, misses: bool) -> None:
    assert misses_last_step(max_steps, interval) is misses
