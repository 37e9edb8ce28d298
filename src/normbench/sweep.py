"""Sweeps: expand a task's variant x seed grid into runs, skip finished ones, run the rest.

Each run is ``training.train`` on a config made of the task YAML, the preset, the variant's
overrides and the seed. Every run is parsed and instantiated before the first one trains, so a
bad value stops the sweep before anything is written. Finished runs (a ``done`` or ``diverged``
record with the same config hash) are skipped, which makes a repeated or interrupted sweep
resume where it stopped.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import re
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from tqdm.auto import tqdm

from normbench.records import read_record
from normbench.tasks import get_task
from normbench.training import NormbenchCLI, load_config

FINISHED = ("done", "diverged")


@dataclass
class Run:
    """One (variant, seed) run of a sweep and the arguments that train it."""

    variant: str
    seed: int
    args: list[str]
    record_path: Path | None = None
    config_hash: str | None = None


def slug(name: str) -> str:
    """File-system friendly form of a variant name: ``pre/both`` -> ``pre-both``."""
    return re.sub(r"[^A-Za-z0-9_.+=-]+", "-", name).strip("-")


def plan_runs(
    task: str,
    preset: str | None = None,
    seeds: list[int] | None = None,
    variants: list[str] | None = None,
    overrides: list[str] | None = None,
    runs_dir: str = "runs",
) -> tuple[dict[str, Any], list[Run]]:
    """The merged task config and its runs, each parsed and validated (nothing is written)."""
    spec = get_task(task)
    config = load_config(spec.config_path, preset)
    bench = config.get("bench") or {}
    grid: dict[str, dict[str, Any]] = bench.get("variants") or {"default": {}}
    chosen = variants or bench.get("default_variants") or list(grid)
    unknown = [v for v in chosen if v not in grid]
    if unknown:
        raise ValueError(f"variants: {', '.join(map(repr, unknown))} not defined for task {task}; choose from {', '.join(grid)}")
    seeds = list(seeds if seeds is not None else bench.get("seeds") or [0])
    base = yaml.safe_dump(config, sort_keys=False)
    overrides = [o if o.startswith("--") else f"--{o}" for o in overrides or []]
    runs = []
    for name in chosen:
        variant_args = [f"--{key}={value}" for key, value in (grid[name] or {}).items()]
        for seed in seeds:
            args = ["--config", base, *variant_args, *overrides,
                    f"--seed_everything={seed}", f"--variant={name}", f"--runs_dir={runs_dir}",
                    f"--run_name={slug(name)}-seed{seed}"]
            runs.append(Run(name, seed, args))
    with quiet_lightning():
        for run in runs:  # parse + instantiate every run up front: errors before any training
            cli = NormbenchCLI(args=run.args)
            run.record_path = cli.recorder.path
            run.config_hash = cli.recorder.meta["config_hash"]
    return config, runs


@contextmanager
def quiet_lightning() -> Iterator[None]:
    """Silence Lightning's informational messages (seed, accelerator, tips) while planning."""
    loggers = [logging.getLogger(name) for name in ("lightning.pytorch", "lightning.fabric")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def is_finished(run: Run) -> bool:
    """True when ``run`` has a finished record for the same config; corrupt records are redone."""
    if run.record_path is None or not run.record_path.exists():
        return False
    try:
        record = read_record(run.record_path)
    except ValueError as exc:
        tqdm.write(f"normbench: {exc}; the run will be redone")
        return False
    return record.get("status") in FINISHED and record.get("config_hash") == run.config_hash


def _execute(args: list[str], threads: int | None) -> str:
    import torch

    if threads:
        torch.set_num_threads(threads)
    from normbench.training import train

    return str(train(args))


def execute(runs: list[Run], workers: int = 1, progress: bool = True) -> list[Path]:
    """Train the unfinished ``runs``: in this process, or in ``workers`` spawned processes
    that split the CPU threads between them. Returns every run's record path."""
    todo = [r for r in runs if not is_finished(r)]
    skipped = len(runs) - len(todo)
    if skipped:
        tqdm.write(f"normbench: {skipped} of {len(runs)} runs already finished, skipping them")
    bar = tqdm(total=len(todo), desc="runs", unit="run", disable=not progress or not todo)
    if workers <= 1:
        for run in todo:
            _execute(run.args + (["--trainer.enable_progress_bar=false"] if not progress else []), None)
            bar.update()
    elif todo:
        threads = max(1, (os.cpu_count() or 1) // workers)
        ctx = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            futures = {pool.submit(_execute, r.args + ["--trainer.enable_progress_bar=false"], threads): r for r in todo}
            for fut in as_completed(futures):
                run = futures[fut]
                fut.result()
                bar.set_postfix_str(f"{run.variant} seed {run.seed}")
                bar.update()
    bar.close()
    return [r.record_path for r in runs if r.record_path is not None]
