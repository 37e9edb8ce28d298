"""Sweep throughput: the same four majority runs one after another (``--workers 1``) and two at a
time (``--workers 2``, each run a subprocess with half the CPU threads).

Each run is the quick preset cut to 2500 steps (half a quick run) on 20,000 sequences with one
evaluation; every round trains into a fresh runs folder. On a machine with at least two cores, two
workers should finish the sweep sooner (ratio < 1); the default number of workers is one per
available core. Each subprocess pays the imports and data set-up again (about 5 s): for runs of a
few seconds one worker in this process is faster.
"""

from __future__ import annotations

import itertools

from normbench.sweep.backends import execute
from normbench.sweep.plan import plan_runs

OVERRIDES = [
    "trainer.max_steps=2500",
    "trainer.val_check_interval=2500",
    "data.init_args.num_sequences=20000",
    "trainer.enable_progress_bar=false",
    "trainer.enable_model_summary=false",
]
ROUND = itertools.count()


def sweep(tmp_path, workers: int) -> int:  # noqa: ANN001
    _, runs = plan_runs(
        "majority",
        "quick",
        seeds="0,1",
        variants=["pre/both", "pre/scale"],
        overrides=OVERRIDES,
        runs_dir=str(tmp_path / f"runs{next(ROUND)}"),
    )
    outcome = execute(runs, workers=workers, progress=False)
    assert not outcome.failed, outcome.failed
    return len(outcome.trained)


def test_one_worker(benchmark, record_pair, tmp_path) -> None:  # noqa: ANN001
    assert benchmark.pedantic(sweep, args=(tmp_path, 1), rounds=1, iterations=1) == 4
    record_pair("sweep of 4 majority runs (2500 steps each)", "baseline", "2 workers faster on 2 cores (ratio < 1)")


def test_two_workers(benchmark, record_pair, tmp_path) -> None:  # noqa: ANN001
    assert benchmark.pedantic(sweep, args=(tmp_path, 2), rounds=1, iterations=1) == 4
    record_pair("sweep of 4 majority runs (2500 steps each)", "--workers 2")
