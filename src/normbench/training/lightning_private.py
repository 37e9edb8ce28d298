"""Every use of Lightning's and torchmetrics' private internals, in one place.

An exact resume (:mod:`normbench.training.run.checkpointing`) needs a few things Lightning keeps to
itself: the metrics a step is about to log, the optimizer-step counter of the loggers, whether a
validation follows the step just taken, the validation loop's progress in a checkpoint, and a
torchmetrics accumulator's state. They are read and written here only (and LightningCLI's config dump,
overridden by :class:`normbench.training.cli.NormbenchCLI`). ``PRIVATE_ATTRIBUTES``
names each one; ``tests/training/test_lightning_private.py`` checks them on real objects, and
``pyproject.toml`` pins ``lightning`` to the releases that test passes on.
"""

from __future__ import annotations

from typing import Any, TypedDict

import lightning as L
from torch import Tensor, nn
from torchmetrics import Metric

Checkpoint = dict[str, Any]
"""A Lightning checkpoint as ``Trainer.save_checkpoint`` writes it and ``torch.load`` reads it back (the type its
hooks give it): Lightning's own keys (``state_dict``, ``loops``, ``hyper_parameters``, ...) beside each callback's."""


class MetricState(TypedDict):
    """One torchmetrics accumulator as a checkpoint stores it (:func:`metric_states`): its ``state`` (name -> tensor
    or list of tensors) and the ``updates`` it has seen."""

    state: dict[str, Tensor | list[Tensor]]
    updates: int


# owner -> private attributes (and checkpoint keys) relied on
PRIVATE_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "lightning.Trainer": ("_logger_connector", "_results"),
    "lightning.pytorch.trainer.connectors.logger_connector.logger_connector._LoggerConnector": (
        "should_update_logs",
        "metrics",
    ),
    "lightning.pytorch.loops.fit_loop._FitLoop": ("_should_accumulate", "_data_fetcher"),
    "lightning.pytorch.loops.training_epoch_loop._TrainingEpochLoop": (
        "_batches_that_stepped",
        "_skip_next_val",
        "_should_check_val_fx",
    ),
    "checkpoint['loops']['fit_loop']": ("epoch_loop.val_loop.batch_progress", "epoch_loop.state_dict"),
    "torchmetrics.Metric": ("_update_count", "_computed"),
    # overridden by normbench.training.cli.NormbenchCLI (a JSON dump: the same dict, faster)
    "lightning.pytorch.cli.LightningCLI": ("_dump_config", "config_dump"),
}


def steps_done_index(trainer: L.Trainer) -> int:
    """The loggers' step: the 0-based index of the last optimizer step."""
    return trainer.fit_loop.epoch_loop._batches_that_stepped


def pending_step_metrics(trainer: L.Trainer) -> dict[str, Tensor]:
    """The metrics Lightning logs at the end of the current training step (empty if it logs none)."""
    connector = trainer._logger_connector
    return dict(connector.metrics["log"]) if connector.should_update_logs else {}


def pending_epoch_metrics(trainer: L.Trainer) -> dict[str, Tensor]:
    """The epoch-level metrics Lightning logs at the end of the current epoch."""
    return dict(trainer._results.metrics(False)["log"])


def accumulating(trainer: L.Trainer) -> bool:
    """Whether the current step only accumulates gradients (no optimizer step)."""
    return trainer.fit_loop._should_accumulate()


def epoch_ends(trainer: L.Trainer) -> bool:
    """Whether the training step that just ended is the last of its epoch (or of the run)."""
    loop = trainer.fit_loop.epoch_loop
    return bool(loop.batch_progress.is_last_batch) or 0 <= trainer.max_steps <= trainer.global_step


def validation_follows(trainer: L.Trainer) -> bool:
    """Whether the training step that just ended is followed by a validation run."""
    loop = trainer.fit_loop.epoch_loop
    if loop._skip_next_val or accumulating(trainer):
        return False
    return bool(loop._should_check_val_fx(trainer.fit_loop._data_fetcher))


def rewind_validation(checkpoint: Checkpoint) -> None:
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


def metric_states(module: nn.Module) -> dict[str, MetricState]:
    """The state of every torchmetrics accumulator of ``module`` that has seen data, by module name."""
    return {
        name: {"state": dict(m.metric_state), "updates": m._update_count}
        for name, m in module.named_modules()
        if isinstance(m, Metric) and m._update_count
    }


def load_metric_states(module: nn.Module, states: dict[str, MetricState]) -> None:
    """Put back what :func:`metric_states` returned (the cached result is dropped)."""
    modules = dict(module.named_modules())
    for name, saved in states.items():
        metric = modules[name]
        for key, value in saved["state"].items():
            setattr(metric, key, value)
        metric._update_count, metric._computed = saved["updates"], None
