"""The device plan of stacked seeds: stack size and concurrency from the model and the devices' memory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from normbench.sweep.device_plan import MAX_STACKS_PER_GPU, plan_stacks, seed_step_bytes
from normbench.sweep.plan import Run
from normbench.sweep.stacks import stacks_of
from normbench.training.run.records import read_record
from tests.tiny_runs import sweep_args, tiny_config

GiB = 2**30
PAPER = {
    "model": {"init_args": {"arch": {"d_model": 8, "ffn_width": 8, "n_heads": 1, "n_layers": 1, "num_classes": 20}}},
    "data": {"init_args": {"seq_len": 50, "batch_size": 6000}},
}


def with_batch(batch: int) -> dict:
    return {**PAPER, "data": {"init_args": {"seq_len": 50, "batch_size": batch}}}


def test_a_seed_of_the_paper_protocol_needs_under_a_gibibyte() -> None:
    paper = seed_step_bytes(PAPER)
    assert 0.2 * GiB < paper < GiB  # 300,000 tokens of d = 8, attention over 50 positions
    assert seed_step_bytes(with_batch(12_000)) == pytest.approx(2 * paper, rel=1e-3)  # activations dominate


def test_the_full_protocol_fits_one_h100_as_one_stack_per_variant() -> None:
    plan = plan_stacks(10, 3, seed_step_bytes(PAPER), gpus=[0], gpu_bytes=[80 * GiB])
    assert (plan.stack_size, plan.stacks, plan.workers) == (10, 3, 3)
    assert "3 stack(s) of up to 10 seeds, 3 at a time on 1 GPU(s) of 80 GiB" in plan.describe()


def test_a_small_gpu_gets_smaller_stacks_and_fewer_at_a_time() -> None:
    seed = 2 * GiB
    plan = plan_stacks(10, 3, seed, gpus=[0], gpu_bytes=[16 * GiB])  # 12.8 GiB usable: 6 seeds
    assert plan.stack_size == 6 and plan.stacks == 6 and plan.workers == 1
    tiny = plan_stacks(10, 3, 64 * GiB, gpus=[0], gpu_bytes=[16 * GiB])  # not even one seed fits: one at a time
    assert (tiny.stack_size, tiny.workers) == (1, 1)


def test_stacks_spread_over_gpus_with_a_cap_per_gpu() -> None:
    plan = plan_stacks(10, 12, 1 * GiB, gpus=[0, 1], gpu_bytes=[80 * GiB, 80 * GiB])
    assert plan.stack_size == 10 and plan.workers == 2 * MAX_STACKS_PER_GPU
    few = plan_stacks(10, 2, 1 * GiB, gpus=[0, 1, 2, 3], gpu_bytes=[80 * GiB] * 4)
    assert few.workers == 4  # one stack per GPU: no more workers than stacks need


def test_the_cpu_stacks_small_batches_only() -> None:
    assert plan_stacks(3, 6, seed_step_bytes(with_batch(256)), batch_size=256, cpu_workers=2).stack_size == 3
    paper = plan_stacks(10, 4, seed_step_bytes(PAPER), batch_size=6000, cpu_workers=2)
    assert (paper.stack_size, paper.workers) == (1, 2) and "the CPU" in paper.describe()


def test_stacks_hold_one_variant_each() -> None:
    runs = [Run(v, s, []) for v in ("a", "b") for s in range(5)]
    assert [[(r.variant, r.seed) for r in st] for st in stacks_of(runs, 3)] == [
        [("a", 0), ("a", 1), ("a", 2)],
        [("a", 3), ("a", 4)],
        [("b", 0), ("b", 1), ("b", 2)],
        [("b", 3), ("b", 4)],
    ]


def test_the_dry_run_prints_the_plan(tmp_path: Path, normbench_in_process) -> None:  # noqa: ANN001
    config = tiny_config(tmp_path, seeds=[0, 1])
    result = normbench_in_process(*sweep_args(config, tmp_path), "--vectorize=auto", "--dry_run", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    where = "on 1 GPU(s)" if torch.cuda.is_available() else "on the CPU"  # auto plans for GPU 0 where there is one
    assert "vectorize auto: 1 stack(s) of up to 2 seeds" in result.stdout and where in result.stdout
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_bad_vectorize_is_one_line(tmp_path: Path, normbench_in_process, value: str) -> None:  # noqa: ANN001
    config = tiny_config(tmp_path, seeds=[0, 1])
    result = normbench_in_process(*sweep_args(config, tmp_path), f"--vectorize={value}", cwd=tmp_path)
    assert result.returncode == 2 and f"vectorize: {value!r} is not allowed; give K >= 1" in result.stderr


@pytest.mark.slow
def test_stacks_train_as_concurrent_subprocesses(tmp_path: Path) -> None:
    """Two variants x two seeds as two stacks of 2 in two worker processes: every seed's record says it was stacked
    and has its own final checkpoint (about a minute on 2 CPU cores)."""
    config = tiny_config(tmp_path, seeds=[0, 1])
    variants = "--variants=pre/both,pre/none"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "normbench",
            *sweep_args(config, tmp_path),
            variants,
            "--vectorize=2",
            "--workers=2",
            "--no-progress",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    records = [read_record(p) for p in sorted((tmp_path / "runs").rglob("record.json"))]
    assert len(records) == 4 and all(r["status"] == "done" for r in records)
    assert all(r["vectorized"] == {"stack_size": 2, "seeds": [0, 1]} for r in records)
    assert len({json.dumps(r["series"]["test/loss"]) for r in records}) == 4
    assert all((Path(r["log_dir"]) / "checkpoints" / "last.ckpt").is_file() for r in records)


def test_a_task_that_cannot_be_stacked_gets_lone_runs() -> None:
    plan = plan_stacks(3, 4, GiB, gpus=[0, 1], gpu_bytes=[80 * GiB] * 2, stackable=False)
    assert (plan.stack_size, plan.workers, plan.stacks) == (1, 2, 12)


def test_the_sequence_length_of_each_task_counts() -> None:
    lm = {"model": PAPER["model"], "data": {"init_args": {"context": 50, "batch_size": 6000}}}
    assert seed_step_bytes(lm) == seed_step_bytes(PAPER)
