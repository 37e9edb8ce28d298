"""Checkpoints that survive a kill and resume a run exactly where it stopped.

* :class:`AtomicCheckpointIO` writes every checkpoint to a temporary file, fsyncs it and renames
  it over the old one: a kill at any moment leaves the old checkpoint or the new one.
* :class:`RunState` adds to each checkpoint what Lightning's own state lacks for an exact
  resume: the run's config hash, the global RNG states (torch, CUDA, numpy, Python) and the
  run record's metric series up to that step. (The data loader's position within the epoch is
  checkpointed by Lightning through :class:`normbench.data.batching.ResumableLoader`.) A
  checkpoint taken at the end of a step that is followed by a validation (it is written before
  that validation runs) makes the resumed run validate first: Lightning alone would skip it.
  Every torchmetrics accumulator is stored too, so epoch means survive a mid-epoch resume.
* :func:`resume_checkpoint` finds the checkpoint a restarted run continues from.
"""

from __future__ import annotations

import copy
import sys
import zipfile
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import lightning as L
import torch
from lightning.pytorch.plugins.io import TorchCheckpointIO

from normbench.archive.record import Series
from normbench.io import Config, atomic_write
from normbench.rng import RngStates, rng_states, set_rng_states
from normbench.training import lightning_private as private
from normbench.training.run.records import RunRecordLogger, add_points
from normbench.training.run.rundir import LAST_CHECKPOINT

STATE_KEY = "normbench"


class SavedRunState(TypedDict):
    """What :class:`RunState` adds to a checkpoint (under ``STATE_KEY``): the run's ``config_hash``, the global RNG
    states, the record's ``series`` up to the checkpointed step, whether the validation after that step is still
    ``validation_pending``, and every torchmetrics accumulator that has seen data (``metric_states``). A stacked seed's
    final checkpoint (:func:`normbench.sweep.vectorized.fit.save_seed_checkpoint`) holds the config hash alone, with
    ``stacked``."""

    config_hash: str
    rng: NotRequired[RngStates]
    series: NotRequired[Series]
    validation_pending: NotRequired[bool]
    metric_states: NotRequired[dict[str, private.MetricState]]
    stacked: NotRequired[bool]


class AtomicCheckpointIO(TorchCheckpointIO):
    """``TorchCheckpointIO`` whose local writes are temporary file + fsync + rename."""

    def save_checkpoint(self, checkpoint: private.Checkpoint, path: Any, storage_options: Any = None) -> None:
        if "://" in str(path):  # remote storage: Lightning's own transactional write
            super().save_checkpoint(checkpoint, path, storage_options)
            return
        atomic_write(path, lambda tmp: torch.save(checkpoint, tmp))


class RunState(L.Callback):
    """Stores the config hash, RNG states and metric series in every checkpoint and restores them.

    ``start_rng`` (the RNG states right after the model was built) is set again when fitting starts.

    Checkpoints taken at a training step's end (``every_n_train_steps``) are written before
    Lightning hands that step's metrics to the loggers; those metrics are added to the stored
    series, so a resumed run's record has every step exactly once. They are also written before
    the validation that may follow the step; Lightning, resuming from such a checkpoint, would
    skip that validation, so it is marked pending and
    :func:`~normbench.training.lightning_private.rewind_validation` makes the resumed run start with it.
    """

    def __init__(self, recorder: RunRecordLogger, start_rng: RngStates | None = None) -> None:
        self.recorder = recorder
        self.start_rng = start_rng
        self._at_batch_end = False
        # a resumed run's validation that its checkpoint preceded and the fit loop will not run
        # (the checkpoint is the final step's): the caller runs it (``Trainer.validate``)
        self.validation_after_fit = False
        self.saved_step: int | None = None  # global step of the newest checkpoint written

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

    def on_save_checkpoint(
        self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: private.Checkpoint
    ) -> None:
        series = copy.deepcopy(self.recorder.series)
        at_epoch_end = private.epoch_ends(trainer)
        if self._at_batch_end and not private.accumulating(trainer):
            step = private.steps_done_index(trainer)
            add_points(series, private.pending_step_metrics(trainer), step)
            if at_epoch_end:
                # a run resumed from here starts a new epoch (or stops): the epoch means Lightning
                # logs at this epoch's end would be lost, so they are stored now
                add_points(series, private.pending_epoch_metrics(trainer), step)
        self.saved_step = trainer.global_step
        state: SavedRunState = {
            "config_hash": self.recorder.meta["config_hash"],
            "rng": rng_states(),
            "series": series,
            "validation_pending": self._at_batch_end and private.validation_follows(trainer),
            # every torchmetrics accumulator, so epoch means survive a mid-epoch resume; at an epoch's
            # last step none: the resumed run starts the next epoch with fresh accumulators
            "metric_states": {} if at_epoch_end else private.metric_states(pl_module),
        }
        checkpoint[STATE_KEY] = state

    def on_load_checkpoint(
        self, trainer: L.Trainer, pl_module: L.LightningModule, checkpoint: private.Checkpoint
    ) -> None:
        state: SavedRunState | None = checkpoint.get(STATE_KEY)
        if state is None:
            return
        set_rng_states(state["rng"])
        self.recorder.series = copy.deepcopy(state["series"])
        private.load_metric_states(pl_module, state.get("metric_states") or {})
        if state.get("validation_pending"):
            if 0 <= trainer.max_steps <= checkpoint.get("global_step", -1):
                self.validation_after_fit = True  # the fit loop is already done: nothing to re-enter
            else:
                private.rewind_validation(checkpoint)


def checkpoint_config_hash(path: Path) -> str | None:
    """The config hash stored in checkpoint ``path``; raises ``ValueError`` if it is missing or cannot be read.

    The tensors are memory-mapped, not read: a truncated, empty or foreign file fails on its archive
    and its pickle, at the cost of reading those alone.
    """
    return (read_checkpoint(path).get(STATE_KEY) or {}).get("config_hash")


def checkpoint_model_args(path: Path) -> Config:
    """The model's init arguments saved in checkpoint ``path`` (Lightning's ``hyper_parameters``), what
    identifies an older checkpoint that stores no config hash; ``_class_path`` is the model's class."""
    return dict(read_checkpoint(path).get("hyper_parameters") or {})


def read_checkpoint(path: Path) -> private.Checkpoint:
    """Checkpoint ``path`` with its tensors memory-mapped (see :func:`checkpoint_config_hash`); a missing,
    empty, truncated or foreign file is one ``ValueError`` naming it."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"checkpoint {path}: missing")
    if path.stat().st_size == 0:
        raise ValueError(f"checkpoint {path}: unreadable (empty file)")
    try:  # torch.save writes a zip archive: its directory is at the end, so a cut file has none
        with zipfile.ZipFile(path) as archive:
            archive.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"checkpoint {path}: unreadable (truncated or not a checkpoint: {exc})") from None
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except Exception as exc:  # noqa: BLE001 - any unpickling/zip error means a corrupt file
        raise ValueError(f"checkpoint {path}: unreadable ({type(exc).__name__}: {one_line_text(exc)})") from exc
    if not isinstance(checkpoint, dict) or "state_dict" not in checkpoint:
        raise ValueError(f"checkpoint {path}: unreadable (not a Lightning checkpoint)")
    return checkpoint


def one_line_text(exc: BaseException) -> str:
    """The first sentence of an exception's message."""
    return (str(exc).strip().splitlines() or [""])[0].split(". ")[0].rstrip(".")


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
        print(
            f"normbench: checkpoint {path} belongs to config {found}, not {config_hash}; the run starts afresh",
            file=sys.stderr,
        )
        return None
    return path


def clear_run_dir(run_dir: Path) -> None:
    """Remove what a previous attempt left in ``run_dir`` (checkpoints, TensorBoard events)."""
    run_dir = Path(run_dir)
    for pattern in ("checkpoints/*.ckpt", "events.out.tfevents.*"):
        for stale in run_dir.glob(pattern):
            stale.unlink()
