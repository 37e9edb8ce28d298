"""Vectorized seeds: K = 10 seeds of the majority model as one stacked model vs 10 runs one after another.

Both sides go through normbench's whole pipeline (config parsing, Lightning Trainer, run records,
TensorBoard) and train the same steps at the same per-seed batch size; validation and checkpoints
are off, so the time is training. Goal at batch 64: >= 3x throughput (ratio <= 0.33). The larger
batch sizes show where stacking stops paying (the ratio reaching 1).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.sweep.vectorized.fit import train_stack
from normbench.training.fit import train
from normbench.training.run.records import read_record

CONFIG = str(Path(__file__).resolve().parents[1] / "tasks" / "majority.yaml")
SEEDS = range(10)
STEPS = {64: 200, 256: 100, 1024: 40, 4096: 16}


def run_args(tmp: Path, batch: int, seed: int) -> list[str]:
    steps = STEPS[batch]
    return [
        "--config",
        CONFIG,
        f"--data.init_args.batch_size={batch}",
        f"--trainer.max_steps={steps}",
        "--trainer.max_epochs=-1",
        "--trainer.limit_val_batches=0",
        "--trainer.callbacks=[]",
        "--trainer.enable_progress_bar=false",
        "--trainer.enable_model_summary=false",
        f"--runs_dir={tmp}",
        f"--seed_everything={seed}",
    ]


@pytest.fixture(scope="module", autouse=True)
def cached_data(tmp_path_factory: pytest.TempPathFactory) -> None:
    train(run_args(tmp_path_factory.mktemp("warm"), 64, 0)[:-3] + ["--trainer.max_steps=1"])  # generate the data once


@pytest.mark.parametrize("batch", list(STEPS))
def test_sequential_seeds(benchmark, record_pair, tmp_path: Path, batch: int) -> None:  # noqa: ANN001
    def run() -> list[dict]:
        return [read_record(train(run_args(tmp_path, batch, s))) for s in SEEDS]

    records = benchmark.pedantic(run, rounds=1, iterations=1)
    assert all(r["final_step"] == STEPS[batch] for r in records)
    record_pair(
        f"10 majority seeds, batch {batch}",
        "baseline",
        "goal at batch 64: ratio <= 0.33 (>= 3x)",
        per=STEPS[batch],
        tokens_per_step=10 * batch,
    )


@pytest.mark.parametrize("batch", list(STEPS))
def test_vectorized_seeds(benchmark, record_pair, tmp_path: Path, batch: int) -> None:  # noqa: ANN001
    def run() -> list[dict]:
        return [read_record(p) for p in train_stack([run_args(tmp_path, batch, s) for s in SEEDS])]

    records = benchmark.pedantic(run, rounds=1, iterations=1)
    assert all(r["final_step"] == STEPS[batch] and r["vectorized"]["stack_size"] == 10 for r in records)
    record_pair(f"10 majority seeds, batch {batch}", "vectorized (K=10)", per=STEPS[batch], tokens_per_step=10 * batch)
