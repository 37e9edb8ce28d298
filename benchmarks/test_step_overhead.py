"""What the training pipeline costs around the model, per step of the majority quick preset.

Three ways to take the same step (network, batch of 256 sequences of 50 tokens, data loader, Adam
with the quick preset's learning-rate schedule; forward, cross-entropy, backward, optimizer and
schedule step; no validation, no checkpoints), each on one thread, as each run of a bench on a
2-core CPU trains (two runs at a time, one thread each):

* the bare step in a plain PyTorch loop;
* the model alone under Lightning: a module whose ``training_step`` only returns the loss;
* :class:`MajorityModule` as a run trains it: its metrics (train accuracy, epoch loss), its logging
  (every 10 steps, TensorBoard) and the divergence guard.

Pairs: logging and metrics (normbench vs the model alone under Lightning; goal: at most 15% of a
step, ratio <= 1.15), Lightning's loop (the model alone under Lightning vs the plain loop) and the
whole pipeline (normbench vs the plain loop), both reported without a goal.
"""

from __future__ import annotations

from pathlib import Path

import lightning as L
import pytest
import torch
import torch.nn.functional as F
from lightning.pytorch.loggers import TensorBoardLogger

from normbench.data.majority import MajorityDataModule
from normbench.nn.majority import MajorityEncoder
from normbench.tasks.base import OptimConfig
from normbench.tasks.majority import MajorityModule

STEPS = 600
OPTIM = OptimConfig(lr=1e-3, lr_decay_steps=50_000)  # the quick preset's


@pytest.fixture(autouse=True)
def one_thread():  # noqa: ANN201
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def datamodule() -> MajorityDataModule:
    dm = MajorityDataModule(batch_size=256, eval_batch_size=10_000)
    dm.prepare_data()
    dm.setup("fit")
    return dm


def bare_loop(dm: MajorityDataModule) -> int:
    torch.manual_seed(0)
    model = MajorityEncoder().train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=OPTIM.lr, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: max(0.0, 1 - s / OPTIM.lr_decay_steps))
    steps = 0
    while steps < STEPS:
        for tokens, labels in dm.train_dataloader():
            logits = model(tokens).flatten(0, 1)
            loss = F.cross_entropy(logits, labels[:, None].expand_as(tokens).flatten())
            loss.backward()
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            steps += 1
            if steps == STEPS:
                break
    return steps


def lightning_run(dm: MajorityDataModule, log_dir: Path, module: type[MajorityModule] = MajorityModule) -> int:
    torch.manual_seed(0)
    trainer = L.Trainer(
        max_steps=STEPS,
        accelerator="cpu",
        logger=TensorBoardLogger(log_dir),
        log_every_n_steps=10,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        limit_val_batches=0,
    )
    trainer.fit(module(optim=OPTIM), train_dataloaders=dm.train_dataloader())
    return trainer.global_step


class ModelOnly(MajorityModule):
    """The step without logging or metrics: the loss only."""

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        return self.loss_and_targets(batch)[0]


LOGGING = "majority quick step: logging and metrics"
LOOP = "majority quick step: Lightning loop"
PIPELINE = "majority quick step: pipeline overhead"  # the whole pipeline (name kept: same measurement as before)


def test_bare_step(benchmark, record_pair, datamodule) -> None:  # noqa: ANN001
    assert benchmark.pedantic(bare_loop, args=(datamodule,), rounds=3, iterations=1) == STEPS
    record_pair(LOOP, "baseline", "reported (plain PyTorch loop = 1)", per=STEPS)
    record_pair(PIPELINE, "baseline", "reported (plain PyTorch loop = 1)", per=STEPS)


def test_model_only_step(benchmark, record_pair, datamodule, tmp_path) -> None:  # noqa: ANN001
    assert benchmark.pedantic(lightning_run, args=(datamodule, tmp_path, ModelOnly), rounds=3, iterations=1) == STEPS
    record_pair(LOOP, "Lightning, model only", per=STEPS)
    record_pair(LOGGING, "baseline", "goal ratio <= 1.15 (logging and metrics < 15% of a step)", per=STEPS)


def test_lightning_step(benchmark, record_pair, datamodule, tmp_path) -> None:  # noqa: ANN001
    assert benchmark.pedantic(lightning_run, args=(datamodule, tmp_path), rounds=3, iterations=1) == STEPS
    record_pair(LOGGING, "normbench (metrics, logging)", per=STEPS)
    record_pair(PIPELINE, "normbench (Lightning, metrics, logging)", per=STEPS)
