"""The leaderboard path: a run's broken record or final checkpoint is one line naming the file and the fix, never
a traceback or a silently empty cell; an unwritable results folder is found before anything is built."""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.sweep.options import SweepOptions
from normbench.sweep.run import run_sweep
from tests.sweep.test_backends import FAULTS, break_run
from tests.tiny_runs import copy_of


@pytest.mark.parametrize("fault", FAULTS)
def test_a_broken_run_is_named_with_its_fix(tiny_sweep: Path, tmp_path: Path, fault: str) -> None:
    config, run = copy_of(tiny_sweep, tmp_path)
    broken = break_run(run, fault)
    with pytest.raises(ValueError) as err:  # `normbench leaderboard`: the records only, nothing trained
        run_sweep(
            SweepOptions(str(config), runs_dir=str(tmp_path / "runs"), results_dir=str(tmp_path / "results")),
            train=False,
        )
    message = str(err.value)
    assert "\n" not in message and str(broken) in message
    assert message.endswith("; the sweep's own `normbench sweep` (or `bench`) command redoes that run")
    assert not (tmp_path / "results").exists()


def test_the_intact_run_builds_its_leaderboard(tiny_sweep: Path, tmp_path: Path) -> None:
    config, _ = copy_of(tiny_sweep, tmp_path)
    out = run_sweep(
        SweepOptions(str(config), runs_dir=str(tmp_path / "runs"), results_dir=str(tmp_path / "results")), train=False
    )
    assert out is not None and (out / "leaderboard.json").is_file()


def test_a_read_only_results_dir_is_found_before_the_leaderboard_is_built(
    tiny_sweep: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    config, _ = copy_of(tiny_sweep, tmp_path)
    results = tmp_path / "results"
    results.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if Path(path) == results else real(path, mode))
    with pytest.raises(
        ValueError, match=f"results_dir: {results} is not writable; make it writable or choose another results_dir"
    ):
        run_sweep(SweepOptions(str(config), runs_dir=str(tmp_path / "runs"), results_dir=str(results)), train=False)
    assert list(results.iterdir()) == []
