"""The paper's majority protocol on a GPU: where normbench's time goes against the authors' shape of loop.

* **Per seed-step at batch 6000** (one CUDA device, same process): the authors'-shape loop
  (:mod:`reference_majority`: embedding -> ``nn.TransformerEncoderLayer(norm_first=True)`` -> tied read-out,
  Adam, a DataLoader over host tensors, a full test pass every epoch) against normbench trained alone and
  normbench's fast path, 10 seeds stacked in one model (:mod:`normbench.sweep.vectorized`). Goal: the fast
  path at >= 10x the loop's seed-steps per second (ratio <= 0.1).
* **GPU memory per stacked seed**: peak memory of a stack of 10 minus that of a stack of 1, over 9.
* **The full protocol's wall time** (3 variants x 10 seeds x 14,000 steps, ``--vectorize auto`` on every GPU
  given): opt-in (``NORMBENCH_FULL_PROTOCOL=1``; about 10 minutes on one H100 is the goal), trained into a
  temporary folder, not into ``results/``.

Without a GPU every figure here is written as "not measured" (``results/perf/ratios.md``); none is estimated.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import torch
from conftest import RESULTS, not_measured
from reference_majority import reference_train

from normbench.data.majority import MajoritySpec, load_majority
from normbench.sweep.options import SweepOptions
from normbench.sweep.run import run_sweep
from normbench.sweep.vectorized.fit import train_stack
from normbench.tasks import get_task
from normbench.training.fit import train

CUDA = torch.cuda.is_available()
WHY = "no CUDA GPU in the run that wrote this"
PAIR = "majority per seed-step on cuda (batch 6000)"
EPOCHS, STACK = 2, 10
STEPS = EPOCHS * 14
CONFIG = str(get_task("majority").config_path)

if not CUDA:
    not_measured("cuda_seed_step_ratio_stacked_vs_authors_loop", "x", PAIR, "<= 0.1 (>= 10x the loop)", WHY)
    not_measured("cuda_memory_per_stacked_seed_mib", "MiB", "peak GPU memory per seed of a stack (batch 6000)", "", WHY)
if not (CUDA and os.environ.get("NORMBENCH_FULL_PROTOCOL")):
    not_measured(
        "full_protocol_30_runs_wall_s",
        "s",
        "3 variants x 10 seeds x 14,000 steps, --vectorize auto",
        "<= 600 s on one H100",
        WHY if not CUDA else "opt-in: NORMBENCH_FULL_PROTOCOL=1",
    )

needs_cuda = pytest.mark.skipif(not CUDA, reason="needs a CUDA GPU")


def run_args(tmp: Path, seed: int, steps: int = STEPS) -> list[str]:
    """The paper preset (its data and model), ``steps`` steps, a test pass every epoch (14 steps) as the loop has."""
    return [
        "--config",
        CONFIG,
        "--preset",
        "paper",
        f"--trainer.max_steps={steps}",
        "--trainer.max_epochs=-1",
        "--trainer.val_check_interval=14",
        "--trainer.callbacks=[]",
        "--trainer.enable_progress_bar=false",
        "--trainer.enable_model_summary=false",
        "--trainer.accelerator=gpu",
        f"--runs_dir={tmp}",
        f"--seed_everything={seed}",
    ]


@needs_cuda
def test_authors_loop_on_cuda(benchmark, record_pair) -> None:  # noqa: ANN001
    data = {k: torch.from_numpy(v) for k, v in load_majority(MajoritySpec(generator="paper")).items()}
    steps = benchmark.pedantic(reference_train, args=(data, EPOCHS), kwargs={"device": "cuda"}, rounds=2, iterations=1)
    record_pair(PAIR, "baseline", "fast path <= 0.1 (>= 10x the loop's seed-steps/s)", per=steps)


@needs_cuda
def test_normbench_alone_on_cuda(benchmark, record_pair, tmp_path: Path) -> None:  # noqa: ANN001
    rounds = iter(range(100))
    benchmark.pedantic(lambda: train(run_args(tmp_path / str(next(rounds)), 0)), rounds=2, iterations=1)
    record_pair(PAIR, "normbench (Lightning), alone", per=STEPS)


@needs_cuda
def test_normbench_stacked_on_cuda(benchmark, record_pair, record_figure, tmp_path: Path) -> None:  # noqa: ANN001
    rounds = iter(range(100))
    benchmark.pedantic(
        lambda: train_stack([run_args(tmp_path / str(next(rounds)), s) for s in range(STACK)]), rounds=2, iterations=1
    )
    record_pair(PAIR, f"normbench stacked (K={STACK})", per=STEPS * STACK)
    roles = RESULTS[PAIR]
    if "baseline" in roles and roles.get(f"normbench stacked (K={STACK})"):
        record_figure(
            "cuda_seed_step_ratio_stacked_vs_authors_loop",
            roles[f"normbench stacked (K={STACK})"] / roles["baseline"],
            "x",
            PAIR,
            "<= 0.1 (>= 10x the loop)",
        )


@needs_cuda
def test_gpu_memory_per_stacked_seed(record_figure, tmp_path: Path) -> None:  # noqa: ANN001
    peaks = {}
    for k in (1, STACK):
        torch.cuda.reset_peak_memory_stats()
        train_stack([run_args(tmp_path / f"k{k}", s, steps=3) for s in range(k)])
        peaks[k] = torch.cuda.max_memory_allocated()
    record_figure(
        "cuda_memory_per_stacked_seed_mib",
        (peaks[STACK] - peaks[1]) / (STACK - 1) / 2**20,
        "MiB",
        "peak GPU memory per seed of a stack (batch 6000)",
    )


@pytest.mark.skipif(not (CUDA and os.environ.get("NORMBENCH_FULL_PROTOCOL")), reason="opt-in, needs a CUDA GPU")
def test_full_protocol_wall(record_figure, tmp_path: Path) -> None:  # noqa: ANN001
    gpus = list(range(torch.cuda.device_count()))
    start = time.perf_counter()
    options = SweepOptions(
        "majority",
        "paper",
        seeds="0-9",
        variants="pre/both,pre/paper_no_projection,pre/scale",
        gpus=",".join(map(str, gpus)),
        vectorize="auto",
        runs_dir=str(tmp_path / "runs"),
        results_dir=str(tmp_path / "results"),
        leaderboard=False,
        progress=False,
    )
    run_sweep(options)
    record_figure(
        "full_protocol_30_runs_wall_s",
        time.perf_counter() - start,
        "s",
        f"3 variants x 10 seeds x 14,000 steps, --vectorize auto on {len(gpus)} GPU(s)",
        "<= 600 s on one H100",
    )
