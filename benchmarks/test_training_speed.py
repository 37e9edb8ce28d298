"""Majority training throughput at the paper's batch (6000) against the paper-style loop.

Both sides train on the CPU, whole epochs (80K sequences, 14 steps each) with a full evaluation of the 20K
test sequences after every epoch; the time is per optimizer step, amortized. Goal: normbench's
Lightning pipeline at >= 3x the reference's throughput (ratio <= 0.33).
"""

from __future__ import annotations

import lightning as L
import pytest
import torch
from reference_majority import reference_train

from normbench.data.majority import MajorityDataModule, MajoritySpec, load_majority
from normbench.tasks.majority import MajorityModule

EPOCHS = 2
STEPS = EPOCHS * 14  # ceil(80,001 / 6000) = 14 steps per epoch


@pytest.fixture(scope="module")
def data() -> dict[str, torch.Tensor]:
    return {k: torch.from_numpy(v) for k, v in load_majority(MajoritySpec()).items()}


def normbench_train() -> int:
    dm = MajorityDataModule(batch_size=6000, eval_batch_size=10_000)
    trainer = L.Trainer(
        max_epochs=EPOCHS,
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        check_val_every_n_epoch=1,
        log_every_n_steps=10,
    )
    trainer.fit(MajorityModule(), datamodule=dm)
    return trainer.global_step


def test_reference_loop(benchmark, record_pair, data) -> None:  # noqa: ANN001
    steps = benchmark.pedantic(reference_train, args=(data, EPOCHS), rounds=2, iterations=1)
    assert steps == STEPS
    record_pair(
        "majority training per step (batch 6000)", "baseline", "goal ratio <= 0.33 (>= 3x throughput)", per=steps
    )


def test_normbench_lightning(benchmark, record_pair, data) -> None:  # noqa: ANN001
    steps = benchmark.pedantic(normbench_train, rounds=2, iterations=1)
    assert steps == STEPS
    record_pair("majority training per step (batch 6000)", "normbench (Lightning)", per=steps)
