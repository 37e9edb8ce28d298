"""Checkpoints: atomic writes, exact resume of an interrupted run, corrupt files are not trusted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from normbench.io import atomic_write_json
from normbench.tasks import get_task
from normbench.training.fit import train
from normbench.training.reproducibility import series_mismatches
from normbench.training.run.checkpointing import AtomicCheckpointIO, resume_checkpoint
from normbench.training.run.records import read_record

CONFIG = str(get_task("majority").config_path)
# 600 sequences -> 480 training rows -> 8 batches of 64 per epoch: step 12 is mid-epoch 2
TINY = [
    "--data.init_args.num_sequences=600",
    "--data.init_args.batch_size=64",
    "--data.init_args.eval_batch_size=200",
    "--trainer.max_steps=20",
    "--trainer.max_epochs=-1",
    "--trainer.val_check_interval=5",
    "--trainer.log_every_n_steps=1",
    "--trainer.enable_progress_bar=false",
    "--trainer.enable_model_summary=false",
]


def every(n: int) -> str:
    """Checkpoint callback keeping a checkpoint every ``n`` training steps."""
    return (
        '--trainer.callbacks=[{"class_path": "lightning.pytorch.callbacks.ModelCheckpoint", "init_args": '
        f'{{"save_last": true, "save_top_k": -1, "every_n_train_steps": {n}}}}}]'
    )


def fit(runs: Path, *extra: str, checkpoint_every: int = 4) -> Path:
    return train(["--config", CONFIG, *TINY, every(checkpoint_every), f"--runs_dir={runs}", *extra])


@pytest.mark.parametrize(
    "placement_args, checkpoint_every, killed_after",
    [
        ([], 4, 12),
        (["--model.arch.dropout=0.1"], 4, 12),
        # step 10 is also a validation step: its checkpoint is written before that validation runs
        # (3 validation batches: the resumed validation must run all of them)
        (["--data.init_args.eval_batch_size=40"], 5, 10),
        (["--model.arch.dropout=0.1"], 5, 10),
        # the final step's checkpoint, written before the final validation
        ([], 5, 20),
        # the last step of epoch 2: the resumed run starts epoch 3
        (["--model.arch.dropout=0.1"], 8, 16),
    ],
)
def test_interrupted_run_resumes_exactly(
    tmp_path: Path, placement_args: list[str], checkpoint_every: int, killed_after: int
) -> None:
    """Resuming from a mid-epoch checkpoint reproduces the uninterrupted run bit for bit, validations included."""
    path = fit(tmp_path, *placement_args, checkpoint_every=checkpoint_every)
    full = read_record(path)
    run_dir = path.parent
    (mid,) = [p for p in (run_dir / "checkpoints").glob(f"*step={killed_after}.ckpt")]
    shutil.copy(mid, run_dir / "checkpoints" / "last.ckpt")  # as if killed right after that checkpoint
    atomic_write_json(path, {**full, "status": "running"})
    for stale in (run_dir / "checkpoints").glob("epoch*"):
        stale.unlink()

    resumed = read_record(fit(tmp_path, *placement_args, checkpoint_every=checkpoint_every))
    assert resumed["status"] == "done" and resumed["resumed_from"].endswith("last.ckpt")
    assert resumed["final_step"] == full["final_step"] == 20
    on_gpu = full["provenance"]["platform"]["gpu"] is not None
    assert not series_mismatches(resumed["series"], full["series"], on_gpu)  # every point once, same values


def test_corrupt_or_foreign_checkpoint_is_not_resumed(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = fit(tmp_path)
    last = path.parent / "checkpoints" / "last.ckpt"
    config_hash = read_record(path)["config_hash"]
    assert resume_checkpoint(path.parent, config_hash) == last
    assert resume_checkpoint(path.parent, "another-hash") is None
    last.write_bytes(last.read_bytes()[:100])
    assert resume_checkpoint(path.parent, config_hash) is None
    assert "unreadable" in capsys.readouterr().err


def test_corrupt_record_is_reported_and_the_run_redone(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = fit(tmp_path)
    path.write_text('{"status": "done", "series": {"test/acc": [[5, 0.1')  # half-written
    rec = read_record(fit(tmp_path))
    assert "unreadable" in capsys.readouterr().err
    assert rec["status"] == "done" and "resumed_from" not in rec and rec["final_step"] == 20


def test_checkpoint_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    io = AtomicCheckpointIO()
    target = tmp_path / "last.ckpt"
    io.save_checkpoint({"step": 1}, target)

    def torn_save(obj: object, f: object, *args: object, **kwargs: object) -> None:
        Path(f).write_bytes(b"PK\x03\x04 half a checkpoint")
        raise KeyboardInterrupt  # killed in the middle of the write

    monkeypatch.setattr(torch, "save", torn_save)
    with pytest.raises(KeyboardInterrupt):
        io.save_checkpoint({"step": 2}, target)
    monkeypatch.undo()
    assert torch.load(target, weights_only=False) == {"step": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["last.ckpt"]  # no temporary file left behind


def test_record_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "record.json"
    atomic_write_json(target, {"status": "running"})

    def torn_dumps(*args: object, **kwargs: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(json, "dumps", torn_dumps)
    with pytest.raises(KeyboardInterrupt):
        atomic_write_json(target, {"status": "done"})
    monkeypatch.undo()
    assert json.loads(target.read_text()) == {"status": "running"}
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]


def test_the_record_points_at_the_final_steps_weights(tmp_path: Path) -> None:
    """20 steps, a checkpoint every 8: the run still ends with a checkpoint of step 20, so the test
    stage, the token report and the decomposition all read the model the record describes."""
    rec = read_record(fit(tmp_path, checkpoint_every=8))
    assert rec["final_step"] == 20 and Path(rec["checkpoint"]).name == "last.ckpt"
    assert torch.load(rec["checkpoint"], map_location="cpu", weights_only=False)["global_step"] == 20


def test_a_resumed_run_names_every_segment_and_sums_their_wall_time(tmp_path: Path) -> None:
    """A run resumed from another commit's (or platform's) checkpoint keeps who trained its first steps."""
    path = fit(tmp_path)
    full = read_record(path)
    run_dir = path.parent
    (mid,) = [p for p in (run_dir / "checkpoints").glob("*step=12.ckpt")]
    shutil.copy(mid, run_dir / "checkpoints" / "last.ckpt")
    earlier = {**full["provenance"], "git_commit": "0123456789ab", "dirty": False}
    atomic_write_json(path, {**full, "status": "interrupted", "provenance": earlier, "wall_time_s": 1000.0})

    resumed = read_record(fit(tmp_path))
    first, last = resumed["segments"]
    assert (first["git_commit"], first["to_step"]) == ("0123456789ab", 12)
    assert (last["git_commit"], last["to_step"]) == (full["provenance"]["git_commit"], 20)
    assert first["platform"] == last["platform"]
    assert 1000.0 < resumed["wall_time_s"] < 1000.0 + 10 * full["wall_time_s"] + 60
    assert resumed["provenance"]["git_commit"] == full["provenance"]["git_commit"]
