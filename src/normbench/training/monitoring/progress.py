"""Progress a person can read in a log: one line per run every ``interval`` seconds, not a bar per step.

Runs without a progress bar (sweep workers, ``--trainer.enable_progress_bar=false``) print

    normbench: progress pre/both seed 0: step 1200/5000 (24%), loss 0.412, 5.1 steps/s, ETA 12m25s

to stderr: the first line after ``first`` seconds, then at most one every ``interval`` seconds,
and one at the end of training. A sweep in subprocess mode relays each worker's latest line
(:func:`latest_progress`).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import lightning as L
from lightning.pytorch.callbacks import Callback

from normbench.tasks.series import TRAIN_LOSS_STEP

PREFIX = "normbench: progress "
PROGRESS_ENV = "NORMBENCH_PROGRESS_SECONDS"  # seconds between progress lines (default 30)


def progress_interval() -> float:
    """Seconds between progress lines: ``$NORMBENCH_PROGRESS_SECONDS`` (default 30), a number > 0."""
    text = os.environ.get(PROGRESS_ENV, "30")
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise ValueError(f"{PROGRESS_ENV}: {text!r} must be a number of seconds > 0, e.g. 30")
    return value


def duration(seconds: float) -> str:
    """``3725`` -> ``1h02m05s``; ``65`` -> ``1m05s``; ``7`` -> ``7s``."""
    s = int(round(max(seconds, 0.0)))
    h, m, s = s // 3600, s % 3600 // 60, s % 60
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s" if m else f"{s}s"


def progress_line(name: str, step: int, total: int | None, loss: float | None, rate: float | None) -> str:
    """One progress line (see the module docstring); unknown parts are left out."""
    parts = [f"step {step}/{total} ({100 * step / total:.0f}%)" if total else f"step {step}"]
    if loss is not None:
        parts.append(f"loss {loss:.4g}")
    if rate:
        parts.append(f"{rate:.3g} steps/s")
        if total:
            parts.append(f"ETA {duration((total - step) / rate)}")
    return f"{PREFIX}{name}: {', '.join(parts)}"


class ProgressLines(Callback):
    """Print a progress line at most every ``interval`` seconds (the first after ``first`` seconds)."""

    def __init__(self, name: str, interval: float = 30.0, first: float = 5.0, stream: TextIO | None = None) -> None:
        self.name, self.interval, self.first, self.stream = name, interval, first, stream
        self.started = self.last = 0.0
        self.start_step = 0

    def on_train_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.started = time.monotonic()
        self.last = self.started - self.interval + self.first
        self.start_step = trainer.global_step  # a resumed run: the rate counts this attempt's steps only

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        if time.monotonic() - self.last >= self.interval:
            self.emit(trainer)

    def on_train_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self.emit(trainer)

    def emit(self, trainer: L.Trainer) -> None:
        if not trainer.is_global_zero:
            return
        now = time.monotonic()
        self.last = now
        step = trainer.global_step
        total = trainer.max_steps if trainer.max_steps and trainer.max_steps > 0 else None
        loss = trainer.callback_metrics.get(TRAIN_LOSS_STEP)
        rate = (
            (step - self.start_step) / (now - self.started) if now > self.started and step > self.start_step else None
        )
        stream = self.stream or sys.stderr
        print(
            progress_line(self.name, step, total, float(loss) if loss is not None else None, rate),
            file=stream,
            flush=True,
        )


def latest_progress(log: Path, since: int = 0, tail_bytes: int = 8192) -> str | None:
    """The last progress line in a run's log file after byte ``since`` (read from its end), or ``None``."""
    try:
        with open(log, "rb") as f:
            f.seek(0, 2)
            f.seek(max(since, f.tell() - tail_bytes))
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    return next((line for line in reversed(lines) if line.startswith(PREFIX)), None)
