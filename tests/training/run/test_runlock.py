"""One process trains a run at a time: another `normbench fit` or sweep of it skips it in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.sweep.plan import plan_runs
from normbench.training.run.runlock import BUSY_STATUS, RunBusy, is_locked, run_lock
from tests.tiny_runs import sweep_args, tiny_config


def test_a_held_lock_makes_the_run_busy(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert not is_locked(run) and not run.exists()
    with run_lock(run):
        assert is_locked(run)
        with pytest.raises(RunBusy) as err, run_lock(run):
            pass
        assert str(err.value) == f"{run} is being trained by another process; skipped"
    assert not is_locked(run)
    with run_lock(run):  # released: taken again
        pass


def test_a_run_another_process_trains_is_skipped_by_fit_and_sweep(tmp_path: Path, normbench_in_process) -> None:  # noqa: ANN001
    config = tiny_config(tmp_path)
    _, (run,) = plan_runs(preset="quick", config_path=str(config), runs_dir=str(tmp_path / "runs"))
    folder = run.record_path.parent
    busy = f"normbench: {folder} is being trained by another process; skipped"
    with run_lock(folder):
        fit = normbench_in_process("fit", *run.args, cwd=tmp_path)
        assert fit.returncode == BUSY_STATUS and busy in fit.stderr.splitlines(), fit.stderr[-2000:]
        sweep = normbench_in_process(*sweep_args(config, tmp_path), cwd=tmp_path)
        assert sweep.returncode == 0, sweep.stderr[-2000:]
        assert busy in sweep.stderr.splitlines()
        assert "normbench: no leaderboard: 1 runs are being trained by another process" in sweep.stderr
    assert [p.name for p in folder.iterdir()] == [".lock"]  # nothing trained, nothing written beside the lock
    assert not (tmp_path / "results").exists()
