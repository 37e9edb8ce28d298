"""Checkpoints that survive a kill and resume a run exactly where it stopped.

* :class:`AtomicCheckpointIO` writes every checkpoint to a temporary file, fsyncs it and renames
  it over the old one: a kill at any moment leaves the old checkpoint or the new one.
* :class:`RunState` adds to each checkpoint what Lightning's own state lacks for an exact
  resume: the run's config hash, the global RNG states (torch, CUDA, numpy, Python) and the
  run record's metric series up to that step. (The data loader's position within the epoch is
  checkpointed by Lightning through :class:`normbench.data.batching.ResumableLoader`.) A
  checkpoint taken at the end of a step that is followed by a validation (it is written before
  that validation runs) makes the resumed run validate first: Lightning alone would skip it.
* :func:`resume_checkpoint` finds the checkpoint a restarted run continues from.
"""

from __future__ import annotations

import copy
import random
import sys
from pathlib import Path
from typing import Any

import lightning as L
import numpy as np
import torch
from lightning.pytorch.plugins.io import TorchCheckpointIO

from normbench.io import atomic_write
from normbench.records import RunRecordLogger, add_points

LAST_CHECKPOINT = Path("checkpoints") / "last.ckpt"
STATE_KEY = "normbench"


class AtomicCheckpointIO(TorchCheckpointIO):
    """``TorchCheckpointIO`` whose local writes are temporary file + fsync + rename."""

    def save_checkpoint(self, checkpoint: dict[str, Any], path: Any, storage_options: Any = None) -> None:
        if "://" in str(path):  # remote storage: Lightning's own transactional write
            super().save_checkpoint(checkpoint, path, storage_options)
            return
        atomic_write(path, lambda tmp: torch.save(checkpoint, tmp))


def rng_states() -> dict[str, Any]:
    """The global RNG states as tensors and plain tuples (loadable with ``weights_only=True``)."""
    kind, keys, pos, has_gauss, gauss = np.random.get_state()
    states: dict[str, Any] = {
        "torch": torch.get_rng_state(),
        "numpy": (kind, torch.from_numpy(keys.astype(np.int64)), int(pos), int(has_gauss), float(gauss)),
        "python": random.getstate(),
    }
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def set_rng_states(states: dict[str, Any]) -> None:
    """Restore what :func:`rng_states` returned (CUDA states only where CUDA is available)."""
    torch.set_rng_state(states["torch"])
    kind, keys, pos, has_gauss, gauss = states["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, gauss))
    version, internal, gauss_next = states["python"]
    random.setstate((version, tuple(internal), gauss_next))
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


class RunState(L.Callback):
    """Stores the config hash, RNG states and metric series in every checkpoint and restores them.

    ``start_rng`` (the RNG states right after the model was built) is set again when fitting starts.

    Checkpoints taken at a training step's end (``every_n_train_steps``) are written before
    Lightning hands that step's metrics to the loggers; those metrics are added to the stored
    series, so a resumed run's record has every step exactly once. They are also written before
    the validation that may follow the step; Lightning, resuming from such a checkpoint, would
    skip that validation, so it is marked pending and :func:`validate_on_resume` makes the
    resumed run start with it.
    """

    def __init__(self, recorder: RunRecordLogger, start_rng: dict[str, Any] | None = None) -> None:
        self.recorder = recorder
        self.start_rng = start_rng
        self._at_batch_end = False
        # a resumed run's validation that its checkpoint preceded and the fit loop will not run
        # (the checkpoint is the final step's): the caller runs it (``Trainer.validate``)
        self.validation_after_fit = False

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        # DDP re-seeds every process when it connects them; put back the RNG state the model's
        # initialisation left, so N processes draw the data order one process draws.
        if stage == "fit" and self.start_rng is not None:
            set_rng_states(self.start_rng)

    def on_train_batch_end(self, trainer: L.Trainer, *args: Any) -> None:
        self._at_batch_end = True  # checkpoint callbacks run after this one, in the same phase

    def on_train_batch_start(self, trainer: L.Trainer, *args: Any) -> None:
        self._at_batch_end = False

    def on_validation_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._at_batch_end = False

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._at_batch_end = False

    def on_save_checkpoint(self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: dict[str, Any]) -> None:
        series = copy.deepcopy(self.recorder.series)
        if self._at_batch_end and not trainer.fit_loop._should_accumulate():
            connector = trainer._logger_connector
            if connector.should_update_logs:
                add_points(series, connector.metrics["log"], trainer.fit_loop.epoch_loop._batches_that_stepped)
            if epoch_ends(trainer):
                # a run resumed from here starts a new epoch (or stops): the epoch means Lightning
                # logs at this epoch's end would be lost, so they are stored now
                add_points(series, trainer._results.metrics(False)["log"],
                           trainer.fit_loop.epoch_loop._batches_that_stepped)
        checkpoint[STATE_KEY] = {"config_hash": self.recorder.meta["config_hash"], "rng": rng_states(), "series": series,
                                 "validation_pending": self._at_batch_end and validation_follows(trainer)}

    def on_load_checkpoint(self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: dict[str, Any]) -> None:
        state = checkpoint.get(STATE_KEY)
        if state is None:
            return
        set_rng_states(state["rng"])
        self.recorder.series = copy.deepcopy(state["series"])
        if state.get("validation_pending"):
            if 0 <= trainer.max_steps <= checkpoint.get("global_step", -1):
                self.validation_after_fit = True  # the fit loop is already done: nothing to re-enter
            else:
                validate_on_resume(checkpoint)


def epoch_ends(trainer: L.Trainer) -> bool:
    """Whether the training step that just ended is the last of its epoch (or of the run)."""
    loop = trainer.fit_loop.epoch_loop
    return bool(loop.batch_progress.is_last_batch) or 0 <= trainer.max_steps <= trainer.global_step


def validation_follows(trainer: L.Trainer) -> bool:
    """Whether the training step that just ended is followed by a validation run."""
    loop = trainer.fit_loop.epoch_loop
    if loop._skip_next_val or trainer.fit_loop._should_accumulate():
        return False
    return bool(loop._should_check_val_fx(trainer.fit_loop._data_fetcher))


def validate_on_resume(checkpoint: dict[str, Any]) -> None:
    """Make Lightning run, on resume, the validation due right after the checkpointed step.

    Lightning resumes a checkpoint written at a step's end past that step's validation. Marking
    the validation loop as restarted before its first batch makes the epoch loop run it before the
    next training step instead; the step counter of the loggers is set back by the one increment
    that this validation's own epoch-loop iteration adds again.
    """
    loops = (checkpoint.get("loops") or {}).get("fit_loop") or {}
    progress = loops.get("epoch_loop.val_loop.batch_progress")
    state = loops.get("epoch_loop.state_dict")
    if progress is None or state is None or "_batches_that_stepped" not in state:
        return
    done = progress["total"]["completed"]
    progress["total"].update(ready=done + 1, started=done + 1, processed=done, completed=done)
    progress["current"].update(ready=1, started=1, processed=0, completed=0)  # at its first batch
    progress["is_last_batch"] = False
    state["_batches_that_stepped"] -= 1


def checkpoint_config_hash(path: Path) -> str | None:
    """The config hash stored in checkpoint ``path``; raises ``ValueError`` if it cannot be read."""
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - any unpickling/zip error means a corrupt file
        raise ValueError(f"checkpoint {path}: unreadable ({type(exc).__name__}: {exc})") from exc
    return (checkpoint.get(STATE_KEY) or {}).get("config_hash")


def resume_checkpoint(run_dir: Path, config_hash: str) -> Path | None:
    """``<run_dir>/checkpoints/last.ckpt`` if it belongs to a run of ``config_hash``, else ``None``.

    A corrupt checkpoint or one of another config is reported on stderr and not used.
    """
    path = Path(run_dir) / LAST_CHECKPOINT
    if not path.exists():
        return None
    try:
        found = checkpoint_config_hash(path)
    except ValueError as exc:
        print(f"normbench: {exc}; the run starts afresh", file=sys.stderr)
        return None
    if found != config_hash:
        print(f"normbench: checkpoint {path} belongs to config {found}, not {config_hash}; the run starts afresh",
              file=sys.stderr)
        return None
    return path


def clear_run_dir(run_dir: Path) -> None:
    """Remove what a previous attempt left in ``run_dir`` (checkpoints, TensorBoard events)."""
    run_dir = Path(run_dir)
    for pattern in ("checkpoints/*.ckpt", "events.out.tfevents.*"):
        for stale in run_dir.glob(pattern):
            stale.unlink()
