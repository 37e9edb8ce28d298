"""Ctrl-C of `normbench fit`: exit status 130, `normbench: interrupted`, the run recorded as interrupted with its
checkpoint, and the same command resumes it."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest
import torch

from normbench.sweep.plan import plan_runs
from normbench.training.run.checkpointing import RunState
from normbench.training.run.records import read_record
from tests.tiny_runs import tiny_config

EVERY_2 = (
    '--trainer.callbacks=[{"class_path": "lightning.pytorch.callbacks.ModelCheckpoint", "init_args": '
    '{"save_last": true, "save_top_k": 0, "every_n_train_steps": 2}}]'
)


def ctrl_c_at(monkeypatch: pytest.MonkeyPatch, step: int) -> Any:
    """A KeyboardInterrupt at the end of training step ``step``, where a Ctrl-C would land (before that step's
    checkpoint is written); returns the hook it replaces."""
    original = RunState.on_train_batch_end

    def hook(self: RunState, trainer: Any, *args: Any) -> None:
        original(self, trainer, *args)
        if trainer.global_step == step:
            raise KeyboardInterrupt

    monkeypatch.setattr(RunState, "on_train_batch_end", hook)
    return original


def test_ctrl_c_of_fit_records_an_interrupted_run_that_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, normbench_in_process
) -> None:  # noqa: ANN001
    _, (run,) = plan_runs(
        preset="quick", config_path=str(tiny_config(tmp_path)), runs_dir=str(tmp_path / "runs"), overrides=[EVERY_2]
    )
    handler = signal.getsignal(signal.SIGINT)
    original = ctrl_c_at(monkeypatch, 4)
    out = normbench_in_process("fit", *run.args, cwd=tmp_path)
    assert out.returncode == 130, out.stderr[-3000:]
    assert out.stderr.strip().splitlines()[-1].startswith("normbench: interrupted")
    assert "Traceback" not in out.stderr
    assert signal.getsignal(signal.SIGINT) is handler  # Lightning's "ignore SIGINT" is undone
    record = read_record(run.record_path)
    assert record["status"] == "interrupted" and record["final_step"] == 4 and "error" not in record
    last = run.record_path.parent / "checkpoints" / "last.ckpt"
    assert torch.load(last, map_location="cpu", weights_only=False)["global_step"] == 2

    monkeypatch.setattr(RunState, "on_train_batch_end", original)
    again = normbench_in_process("fit", *run.args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"resuming {run.record_path.parent}" in again.stderr
    resumed = read_record(run.record_path)
    assert resumed["status"] == "done" and resumed["final_step"] == 6 and resumed["resumed_from"] == str(last)
