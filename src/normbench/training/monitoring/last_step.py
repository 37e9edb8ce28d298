"""An evaluation at the last step: a run whose ``max_steps`` the validation interval does not divide (the docs' tiny
run, ``--trainer.max_steps 50`` on a preset that validates every 500 steps) still ends with its held-out metrics.

Lightning validates every ``val_check_interval`` steps, and also when a run is asked to stop (``trainer.should_stop``)
where it may; at the end of the last step that no interval reaches, :class:`LastStepValidation` asks it to stop, so
that step is evaluated. A run whose steps the interval divides is untouched (its last step is evaluated already), so
no published run changes.
"""

from __future__ import annotations

from typing import Any

import lightning as L


def misses_last_step(max_steps: int, val_check_interval: object) -> bool:
    """Whether a run of ``max_steps`` (``-1``: by epochs) validating every ``val_check_interval`` steps (an int;
    a float is a fraction of an epoch) would end without evaluating its last step."""
    return (
        max_steps > 0
        and isinstance(val_check_interval, int)
        and not isinstance(val_check_interval, bool)
        and val_check_interval > 0
        and max_steps % val_check_interval != 0
    )


class LastStepValidation(L.Callback):
    """At the end of the run's last training step, when no validation interval falls on it: ``should_stop``, so
    Lightning evaluates that step before the run ends."""

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        if trainer.global_step >= trainer.max_steps and misses_last_step(trainer.max_steps, trainer.val_check_interval):
            trainer.should_stop = True
