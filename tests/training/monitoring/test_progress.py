"""Progress lines: their format, their rate, and reading the latest one back from a log."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

from normbench.training.monitoring.progress import PREFIX, ProgressLines, duration, latest_progress, progress_line


def test_duration_and_line_format() -> None:
    assert [duration(s) for s in (7, 65, 3725, -3)] == ["7s", "1m05s", "1h02m05s", "0s"]
    assert (
        progress_line("pre/both seed 0", 1200, 5000, 0.41234, 5.0)
        == "normbench: progress pre/both seed 0: step 1200/5000 (24%), loss 0.4123, 5 steps/s, ETA 12m40s"
    )
    assert progress_line("x", 3, None, None, None) == "normbench: progress x: step 3"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_lines_are_rate_limited(monkeypatch) -> None:  # noqa: ANN001
    clock = Clock()
    monkeypatch.setattr("normbench.training.monitoring.progress.time.monotonic", clock)
    out = io.StringIO()
    callback = ProgressLines("v seed 1", interval=30, first=5, stream=out)
    trainer = SimpleNamespace(global_step=0, max_steps=100, is_global_zero=True, callback_metrics={})
    callback.on_train_start(trainer, None)
    for step in range(1, 101):  # one step per second
        clock.now += 1
        trainer.global_step = step
        callback.on_train_batch_end(trainer, None)
    callback.on_train_end(trainer, None)
    lines = out.getvalue().splitlines()
    assert [line.split("step ")[1].split("/")[0] for line in lines] == ["5", "35", "65", "95", "100"]
    assert lines[0].endswith("1 steps/s, ETA 1m35s") and all(line.startswith(PREFIX) for line in lines)


def test_latest_progress_reads_the_last_line_after_an_offset(tmp_path: Path) -> None:
    log = tmp_path / "sweep.log"
    assert latest_progress(log) is None
    log.write_text(f"{PREFIX}a: step 1\nother\n{PREFIX}a: step 2\nwarning\n")
    assert latest_progress(log) == f"{PREFIX}a: step 2"
    assert latest_progress(log, since=log.stat().st_size) is None  # a new attempt starts after the old output
