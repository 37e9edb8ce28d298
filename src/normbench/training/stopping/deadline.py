"""A time budget for training: at the deadline the run saves its checkpoint and stops as if interrupted.

A bake (:mod:`normbench.bake`) gives every run it starts the same wall-clock deadline through the environment
variable ``NORMBENCH_STOP_AT`` (seconds since the epoch). At the end of the first training step past it, the run
writes ``checkpoints/last.ckpt`` (the resumable state: weights, optimizer, RNG states, loader position, series) and
raises ``KeyboardInterrupt``, so its record says ``interrupted`` and the next attempt, on this machine or any
other, continues from exactly that step.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import lightning as L

STOP_AT = "NORMBENCH_STOP_AT"


def deadline_from_env() -> float | None:
    """The deadline ``NORMBENCH_STOP_AT`` names (``None`` when unset); one line when it is not a number."""
    value = os.environ.get(STOP_AT)
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{STOP_AT}: {value!r} is not a time in seconds since the epoch") from None


class Deadline(L.Callback):
    """Checkpoint to ``path`` and stop (``KeyboardInterrupt``) once ``time.time() >= at``."""

    def __init__(self, at: float, path: str | Path) -> None:
        self.at = at
        self.path = Path(path)

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        if time.time() >= self.at:
            trainer.save_checkpoint(self.path)
            raise KeyboardInterrupt
