"""``NormbenchModule.log_training`` sends the loggers exactly what plain ``self.log`` would."""

from __future__ import annotations

from typing import Any

import lightning as L
import pytest
import torch
from lightning.pytorch.loggers import Logger
from torchmetrics import MeanMetric

from normbench.nn.majority import MajorityConfig
from normbench.tasks.base import NormbenchModule, OptimConfig


class Recorder(Logger):
    """Keeps every ``log_metrics`` call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[int, dict[str, float]]] = []

    @property
    def name(self) -> str:
        return "recorder"

    @property
    def version(self) -> str:
        return "0"

    def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
        pass

    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        self.calls.append((step, {k: round(float(v), 6) for k, v in metrics.items() if k != "epoch"}))


class Tiny(NormbenchModule):
    def __init__(self, plain: bool) -> None:
        super().__init__(MajorityConfig(), OptimConfig(lr=0.1))
        self.plain, self.layer, self.mean = plain, torch.nn.Linear(2, 1), MeanMetric()

    def training_step(self, batch: tuple[torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss = self.layer(batch[0]).pow(2).mean()
        self.mean.update(loss.detach())
        log = self.log if self.plain else self.log_training
        log("loss_step", loss, on_step=True, on_epoch=False, prog_bar=True)
        log("loss_mean", self.mean, on_step=False, on_epoch=True)
        return loss


class StopAt(L.Callback):
    def __init__(self, step: int) -> None:
        self.step = step

    def on_train_batch_end(self, trainer: L.Trainer, *args: Any) -> None:
        if trainer.global_step == self.step:
            trainer.should_stop = True


def logged(plain: bool, stop_at: int | None, fits: int = 1, every: int = 3) -> list:
    torch.manual_seed(0)
    module, recorder = Tiny(plain), Recorder()
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(40, 2)), batch_size=4)
    for fit in range(fits):
        trainer = L.Trainer(
            max_steps=10 * (fit + 1) if stop_at is None else -1,
            max_epochs=3 * (fit + 1),
            logger=recorder,
            log_every_n_steps=every,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            callbacks=[StopAt(stop_at)] if stop_at else [],
        )
        trainer.fit(module, train_dataloaders=data)
    return recorder.calls


@pytest.mark.parametrize(
    ("stop_at", "fits", "every"),
    [(None, 1, 3), (7, 1, 3), (None, 2, 3), (None, 1, 0)],
    ids=["steps", "callback-stops-off-a-logging-step", "second-fit", "never-logs"],
)
def test_the_loggers_see_what_plain_self_log_sends(stop_at: int | None, fits: int, every: int) -> None:
    expected = logged(True, stop_at, fits, every)
    assert expected or every == 0
    assert logged(False, stop_at, fits, every) == expected


def test_weight_decay_spares_the_norms_learned_scales() -> None:
    """A learned normal, DyT's alpha, ScaleNorm's g and QK-norm's temperatures are never decayed."""
    from normbench.nn.majority import MajorityConfig
    from normbench.nn.norms import NormSpec
    from normbench.tasks.base import OptimConfig
    from normbench.tasks.majority import MajorityModule

    arch = MajorityConfig(
        attn_norm=NormSpec("learned", affine=False),
        ffn_norm=NormSpec("dyt"),
        qk_norm=True,
        placement="peri",
        attn_out_norm=NormSpec("scalenorm", affine=False),
    )
    module = MajorityModule(arch, OptimConfig(weight_decay=0.1))
    decayed, spared = module.configure_optimizers()["optimizer"].param_groups
    names = {id(p): n for n, p in module.named_parameters()}
    assert sorted(names[id(p)] for p in spared["params"]) == [
        "model.blocks.0.attn.qk_norm_scale",
        "model.blocks.0.attn_norm.direction",
        "model.blocks.0.attn_out_norm.g",
        "model.blocks.0.ffn_norm.alpha",
    ]
    assert spared["weight_decay"] == 0.0 and decayed["weight_decay"] == 0.1
    assert len(decayed["params"]) + len(spared["params"]) == len(names)
