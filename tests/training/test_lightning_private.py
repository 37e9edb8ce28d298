"""Every Lightning/torchmetrics private attribute normbench relies on, checked on real objects.

If an upgrade renames one of them this test names it; ``pyproject.toml`` pins ``lightning`` to the
releases it passes on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import lightning as L
import pytest
import torch
from lightning.pytorch.demos.boring_classes import BoringModel
from torchmetrics import MeanMetric

from normbench.training import lightning_private as lp


def owners(trainer: L.Trainer, checkpoint: dict[str, Any], metric: MeanMetric) -> dict[str, Any]:
    """The real object behind each owner named in ``PRIVATE_ATTRIBUTES``."""
    return {
        "lightning.Trainer": trainer,
        "lightning.pytorch.trainer.connectors.logger_connector.logger_connector._LoggerConnector": trainer._logger_connector,
        "lightning.pytorch.loops.fit_loop._FitLoop": trainer.fit_loop,
        "lightning.pytorch.loops.training_epoch_loop._TrainingEpochLoop": trainer.fit_loop.epoch_loop,
        "checkpoint['loops']['fit_loop']": checkpoint["loops"]["fit_loop"],
        "torchmetrics.Metric": metric,
    }


class Probe(L.Callback):
    """Checks the private attributes in the middle of a real fit, and exercises the accessors."""

    def __init__(self) -> None:
        self.missing: list[str] = []
        self.calls: dict[str, Any] = {}

    def on_train_batch_end(self, trainer: L.Trainer, pl_module: L.LightningModule, *args: Any) -> None:
        if trainer.global_step != 2:
            return
        checkpoint = trainer._checkpoint_connector.dump_checkpoint()
        metric = MeanMetric()
        metric.update(torch.tensor(1.0))
        for owner, obj in owners(trainer, checkpoint, metric).items():
            for name in lp.PRIVATE_ATTRIBUTES[owner]:
                present = name in obj if isinstance(obj, dict) else hasattr(obj, name)
                if not present:
                    self.missing.append(f"{owner}.{name}")
        self.calls = {
            "steps_done_index": lp.steps_done_index(trainer),
            "pending_step_metrics": lp.pending_step_metrics(trainer),
            "accumulating": lp.accumulating(trainer),
            "epoch_ends": lp.epoch_ends(trainer),
            "validation_follows": lp.validation_follows(trainer),
            "metric_states": lp.metric_states(torch.nn.ModuleDict({"m": metric})),
        }
        lp.rewind_validation(checkpoint)  # rewinds the val loop's counters of a real checkpoint
        self.calls["rewound"] = checkpoint["loops"]["fit_loop"]["epoch_loop.val_loop.batch_progress"]["current"]


def test_every_private_attribute_exists_on_real_objects(tmp_path: Path) -> None:
    assert set(lp.PRIVATE_ATTRIBUTES) == {  # every owner is checked by the probe below
        "lightning.Trainer",
        "lightning.pytorch.trainer.connectors.logger_connector.logger_connector._LoggerConnector",
        "lightning.pytorch.loops.fit_loop._FitLoop",
        "lightning.pytorch.loops.training_epoch_loop._TrainingEpochLoop",
        "checkpoint['loops']['fit_loop']",
        "torchmetrics.Metric",
        "lightning.pytorch.cli.LightningCLI",  # test_the_cli_config_dump_is_lightnings_own_dict below
    }
    probe = Probe()
    trainer = L.Trainer(
        max_steps=4,
        val_check_interval=2,
        limit_val_batches=1,
        callbacks=[probe],
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
        accelerator="cpu",
        devices=1,
    )
    trainer.fit(BoringModel())
    assert not probe.missing, f"private attributes gone: {probe.missing}"
    calls = probe.calls
    assert calls["steps_done_index"] == 1  # 0-based index of the second optimizer step
    assert calls["accumulating"] is False and calls["epoch_ends"] is False
    assert calls["validation_follows"] is True  # val_check_interval=2: a validation follows step 2
    assert calls["metric_states"]["m"]["updates"] == 1
    assert calls["rewound"]["ready"] == 1 and calls["rewound"]["completed"] == 0


@pytest.mark.parametrize("task", ["majority", "lm", "sst2"])
def test_the_cli_config_dump_is_lightnings_own_dict(task: str, tmp_path: Path) -> None:
    """NormbenchCLI overrides LightningCLI._dump_config (the hyperparameters its instantiators save) with a JSON dump:
    the method and attribute still exist, and the dict is the one Lightning's YAML dump gives."""
    import yaml
    from lightning.pytorch.cli import LightningCLI

    from normbench.tasks import get_task
    from normbench.training.cli import NormbenchCLI

    for name in lp.PRIVATE_ATTRIBUTES["lightning.pytorch.cli.LightningCLI"][:1]:
        assert callable(getattr(LightningCLI, name, None)), f"private attribute gone: LightningCLI.{name}"
    cli = NormbenchCLI(args=["--config", str(get_task(task).config_path), f"--runs_dir={tmp_path}"])
    lightnings = cli.parser.dump(cli.config, skip_link_targets=False, skip_none=False, format="yaml")
    assert cli.config_dump == yaml.safe_load(lightnings)
    # the resolved config (what a run's identity hashes) read the same way through JSON as through YAML
    resolved = yaml.safe_load(cli.parser.dump(cli.config, skip_check=True))
    resolved["data"]["init_args"].update(getattr(cli.datamodule, "identity_args", dict)())
    assert cli.resolved_config() == resolved
    assert cli.model.hparams["_class_path"] == cli.config_dump["model"]["class_path"]
