"""A bake starts a run that cannot be carried to the next bake only when it is expected to finish in the time left."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from normbench.archive.files.writing import MAX_CHECKPOINT_BYTES
from normbench.archive.store import Archive
from normbench.sweep.baking import fits
from normbench.sweep.baking.fits import RunTimes, checkpoint_bytes, lost_if_stopped
from normbench.sweep.baking.launch import BakeState, hold_back
from normbench.sweep.baking.queue import BakeReport
from normbench.sweep.plan import plan_runs


def archived(results: Path, task: str, config_hash: str, seed: int, **record: object) -> None:
    """A finished run in the archive at ``results``, its record holding ``record``."""
    folder = results / "archive" / task / config_hash / f"seed{seed}" / "cpu-test-t1"
    folder.mkdir(parents=True)
    doc = {"task": task, "config_hash": config_hash, "seed": seed, "status": "done", **record}
    (folder / "record.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode(), mtime=0))


def slot(task: str, config_hash: str, max_steps: int, step: int = 0, params: int = 0) -> SimpleNamespace:
    """A queued run as the bake sees it (its network: ``params`` trainable parameters, see :func:`counted`)."""
    run = SimpleNamespace(
        variant="pre/both", seed=0, config_hash=config_hash, trainer={"max_steps": max_steps}, config={"n": params}
    )
    item = SimpleNamespace(task=task, board=f"{task}/board")
    return SimpleNamespace(item=item, run=run, steps_left=max_steps - step)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parameter counts read from the stand-in runs' configs."""
    monkeypatch.setattr(fits, "parameter_count", lambda config: config["n"])


def test_the_checkpoint_of_the_sst2_encoder_is_too_large_to_carry_and_the_majority_models_is_not(
    tmp_path: Path,
) -> None:
    for task, preset, too_large in (("sst2", "quick", True), ("majority", "quick", False)):
        _, runs = plan_runs(task, preset, seeds=[0], variants=["pre/both"], runs_dir=str(tmp_path))
        size = checkpoint_bytes(SimpleNamespace(run=runs[0]))  # type: ignore[arg-type]
        assert size is not None and (size > MAX_CHECKPOINT_BYTES) is too_large, (task, size)


def test_a_runs_time_is_read_from_its_configs_other_seeds_else_from_the_task_at_its_steps(tmp_path: Path) -> None:
    archived(tmp_path, "sst2", "aaa", 1, wall_time_s=3000.0, final_step=3000)
    archived(tmp_path, "sst2", "bbb", 0, wall_time_s=600.0, final_step=3000)
    archived(tmp_path, "sst2", "ccc", 0, wall_time_s=10.0, final_step=10)
    times = RunTimes(Archive(tmp_path))
    assert times.expected_s(slot("sst2", "aaa", 3000, step=1000)) == pytest.approx(2000.0)  # its own: 1 s a step
    # no seed of its own: the task's runs at 3000 steps (0.2 and 1 s a step: their median)
    assert times.expected_s(slot("sst2", "new", 3000)) == pytest.approx(1800.0)
    assert times.expected_s(slot("lm", "new", 3000)) is None  # nothing to read it from: unknown


def test_only_a_run_that_would_be_lost_is_held_back(tmp_path: Path, counted: None) -> None:
    archived(tmp_path, "sst2", "big", 1, wall_time_s=3000.0, final_step=3000)
    archived(tmp_path, "majority", "small", 1, wall_time_s=500.0, final_step=5000)
    times = RunTimes(Archive(tmp_path))
    large, small = MAX_CHECKPOINT_BYTES // 12 + 1, 1000
    assert lost_if_stopped(slot("sst2", "big", 3000, params=large), times, 600.0) == pytest.approx(3000.0)
    assert lost_if_stopped(slot("sst2", "big", 3000, step=2500, params=large), times, 600.0) is None  # fits
    assert lost_if_stopped(slot("majority", "small", 5000, params=small), times, 60.0) is None  # carried over
    assert lost_if_stopped(slot("sst2", "other", 3000, params=large), times, 600.0) == pytest.approx(3000.0)  # task's
    assert lost_if_stopped(slot("lm", "unknown", 3000, params=large), times, 60.0) is None  # time unknown: started


def test_the_bake_starts_the_next_run_that_fits_and_says_which_it_held_back(
    tmp_path: Path, counted: None, capsys: pytest.CaptureFixture[str]
) -> None:
    archived(tmp_path, "sst2", "big", 1, wall_time_s=3000.0, final_step=3000)
    archived(tmp_path, "majority", "small", 1, wall_time_s=500.0, final_step=5000)
    lost = slot("sst2", "big", 3000, params=MAX_CHECKPOINT_BYTES)
    fits_in = slot("majority", "small", 5000, params=1000)
    state = BakeState(items=[], archive=Archive(tmp_path), report=BakeReport())
    state.queue_left = [lost, fits_in]  # type: ignore[list-item]
    hold_back(state, 1200.0)
    assert state.queue_left == [fits_in] and state.held == [lost]
    out = capsys.readouterr().out
    assert "pre/both seed 0 (sst2/board) not started: expected to take 50 min with 20 min left" in out
    hold_back(state, 1200.0)  # the head fits: nothing more is held
    assert state.queue_left == [fits_in]
