"""What the training pipeline costs around the model, per step of the majority quick preset.

Baseline: the bare step in a plain PyTorch loop: the same network, batch (256 sequences of 50
tokens), data loader, Adam with the same learning-rate schedule; forward, cross-entropy, backward,
optimizer and schedule step. Candidate: :class:`MajorityModule` trained by Lightning as a run is,
with its metrics (train accuracy, epoch loss), its logging (every 10 steps, TensorBoard) and the
divergence guard; no validation and no checkpoints in either. Both on one thread, as each run of
a bench on a 2-core CPU trains (two runs at a time, one thread each). Goal: at most 15% slower
(ratio <= 1.15).
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


def lightning_run(dm: MajorityDataModule, log_dir: Path) -> int:
    torch.manual_seed(0)
    trainer = L.Trainer(max_steps=STEPS, accelerator="cpu", logger=TensorBoardLogger(log_dir), log_every_n_steps=10,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                        num_sanity_val_steps=0, limit_val_batches=0)
    trainer.fit(MajorityModule(optim=OPTIM), train_dataloaders=dm.train_dataloader())
    return trainer.global_step


def test_bare_step(benchmark, record_pair, datamodule) -> None:  # noqa: ANN001
    assert benchmark.pedantic(bare_loop, args=(datamodule,), rounds=3, iterations=1) == STEPS
    record_pair("majority quick step: pipeline overhead", "baseline", "goal ratio <= 1.15 (overhead < 15%)", per=STEPS)


def test_lightning_step(benchmark, record_pair, datamodule, tmp_path) -> None:  # noqa: ANN001
    assert benchmark.pedantic(lightning_run, args=(datamodule, tmp_path), rounds=3, iterations=1) == STEPS
    record_pair("majority quick step: pipeline overhead", "normbench (Lightning, metrics, logging)", per=STEPS)
