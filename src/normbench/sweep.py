"""Sweeps: a task config's variant x grid x seed runs, planned up front, run by one of several backends.

Planning (:func:`plan_runs`) merges the task YAML, its preset, the named variants
(``bench.variants``), the grid axes (``bench.grid`` and ``--grid``), the seeds and any command-line
overrides into one LightningCLI argument list per run, and parses and instantiates every variant
before anything trains: a bad axis or value is one error and nothing is written.

Execution (:func:`execute`) skips finished runs (a ``done`` or ``diverged`` record of the same
config hash), resumes interrupted ones from their last checkpoint (see
:func:`normbench.training.start_point`) and continues past failures, which it reports at the end.
Backends: in this process, one after another; ``workers`` concurrent ``normbench fit``
subprocesses with the CPU threads split between them; one subprocess per GPU (or per group of
``gpus_per_run`` GPUs, e.g. for DDP inside a run); and any slice ``shard=(i, n)`` of the runs, for
job arrays on a cluster.
"""

from __future__ import annotations

import ctypes
import importlib
import itertools
import logging
import os
import queue
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from tqdm.auto import tqdm

from normbench.errors import one_line
from normbench.records import read_record
from normbench.tasks import get_task
from normbench.training import NormbenchCLI, load_config, run_dir

FINISHED = ("done", "diverged")


@dataclass
class Run:
    """One (variant, seed) run of a sweep and the arguments that train it."""

    variant: str
    seed: int
    args: list[str]
    record_path: Path | None = None
    config_hash: str | None = None
    trainer: dict[str, Any] = field(default_factory=dict)


def slug(name: str) -> str:
    """File-system friendly form of a variant name: ``pre/both`` -> ``pre-both``."""
    return re.sub(r"[^A-Za-z0-9_.+=-]+", "-", name).strip("-")


def parse_seeds(text: str | list[int] | None) -> list[int] | None:
    """``"0-9"``, ``"0,3,5"``, ``"0-4,8"`` or ``"[0, 1]"`` -> a list of distinct seeds in order."""
    if text is None or isinstance(text, list):
        return text
    seeds: list[int] = []
    for part in filter(None, (p.strip() for p in str(text).strip("[] ").split(","))):
        m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", part)
        if not m or (m[2] is not None and int(m[2]) < int(m[1])):
            raise ValueError(f"seeds: {part!r} is not a seed or range; use e.g. 0-9 or 0,3,5")
        seeds += range(int(m[1]), int(m[2] or m[1]) + 1)
    if not seeds:
        raise ValueError(f"seeds: {text!r} names no seed; use e.g. 0-9 or 0,3,5")
    return list(dict.fromkeys(seeds))


def parse_grid(items: list[str] | None) -> dict[str, list[Any]]:
    """``["model.attn_norm.component=both,project", ...]`` -> ``{axis: [values]}`` (values read as YAML)."""
    grid: dict[str, list[Any]] = {}
    for item in items or []:
        axis, eq, values = item.partition("=")
        axis = axis.strip().removeprefix("--")
        if not eq or not axis or not values.strip():
            raise ValueError(f"grid: {item!r} must look like key=value1,value2 (e.g. model.attn_norm.component=both,scale)")
        grid[axis] = [scalar(v.strip()) for v in values.split(",")]
    return grid


def scalar(text: str) -> Any:
    """A command-line value read as YAML, with ``1e-3`` a number (YAML 1.1 reads it as a string)."""
    value = yaml.safe_load(text)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    return value


def axis_label(axis: str, value: Any) -> str:
    """Short name of one grid coordinate: ``model.init_args.lr=0.01`` -> ``lr=0.01``."""
    short = axis.replace("init_args.", "").removeprefix("model.")
    return f"{short}={value}"


def overrides_to_args(overrides: list[str] | None) -> list[str]:
    """``["trainer.max_steps=100", "--data.batch_size", "64"]`` -> ``["--trainer.max_steps=100", "--data.batch_size=64"]``."""
    out, tokens = [], list(overrides or [])
    while tokens:
        token = tokens.pop(0)
        key = token if token.startswith("--") else f"--{token}"
        if "=" not in key:
            if not tokens or tokens[0].startswith("--"):
                raise ValueError(f"{key.removeprefix('--')}: expects a value (--key value or --key=value)")
            key = f"{key}={tokens.pop(0)}"
        out.append(key)
    return out


def check_option(config: dict[str, Any], key: str, what: str) -> None:
    """One-line error unless ``key`` (e.g. ``model.attn_norm.component``) names an argument of the
    config's model/data class or of the Lightning ``Trainer``."""
    import inspect

    import lightning as L

    parts = key.removeprefix("--").split("=")[0].replace("init_args.", "").split(".")
    section, name = parts[0], parts[1] if len(parts) > 1 else ""
    if section in ("model", "data"):
        class_path = (config.get(section) or {}).get("class_path", "")
        module, _, cls_name = class_path.rpartition(".")
        owner = getattr(importlib.import_module(module), cls_name) if module else None
        label = cls_name
    elif section == "trainer":
        owner, label = L.Trainer, "Trainer"
    else:
        raise ValueError(f"{what}: {key.split('=')[0]!r} is not an option of a sweep; give model.*, data.* or trainer.* "
                         f"keys (seeds: --seeds)")
    if owner is None or name in ("class_path", "init_args"):
        return
    params = [p for p in inspect.signature(owner.__init__).parameters if p not in ("self", "args", "kwargs")]
    if name not in params:
        raise ValueError(f"{what}: {key.split('=')[0]!r} is not an option: {label} has no argument {name!r}; "
                         f"its arguments are {', '.join(params)}")


def variant_grid(config: dict[str, Any], variants: list[str] | None, grid: dict[str, list[Any]],
                 task: str) -> list[tuple[str, list[str]]]:
    """``(name, overrides)`` of every variant: the named variants crossed with the grid axes.

    A ``grid`` from the command line replaces the YAML's named variants unless ``variants`` names
    some; ``bench.grid`` axes in the YAML are crossed with the named variants.
    """
    bench = config.get("bench") or {}
    named: dict[str, dict[str, Any]] = bench.get("variants") or {}
    if variants:
        unknown = [v for v in variants if v not in named]
        if unknown:
            raise ValueError(f"variants: {', '.join(map(repr, unknown))} not defined for task {task}; "
                             f"choose from {', '.join(named) or '(none)'}")
        chosen = variants
    elif grid:
        chosen = []
    else:
        chosen = bench.get("default_variants") or list(named)
    axes = {**(bench.get("grid") or {}), **grid}
    for axis, values in axes.items():
        check_option(config, axis, "grid")
        if not isinstance(values, list) or not values:
            raise ValueError(f"grid: axis {axis!r} needs a non-empty list of values")
        clash = [v for v in chosen if axis.replace("init_args.", "") in
                 {k.replace("init_args.", "") for k in (named[v] or {})}]
        if clash:
            raise ValueError(f"grid: axis {axis!r} is also set by variant {clash[0]!r}; drop one of them")
    bases = [(name, [f"--{k}={v}" for k, v in (named[name] or {}).items()]) for name in chosen] or [("", [])]
    out = []
    for (base, base_args), point in itertools.product(bases, itertools.product(*axes.values())):
        labels = [axis_label(a, v) for a, v in zip(axes, point)]
        name = ",".join(filter(None, [base, *labels])) or "default"
        args = base_args + [f"--{a}={yaml.safe_dump(v, default_flow_style=True).strip().removesuffix('...').strip()}"
                            for a, v in zip(axes, point)]
        out.append((name, args))
    return out


def plan_runs(
    task: str | None = None,
    preset: str | None = None,
    seeds: list[int] | str | None = None,
    variants: list[str] | None = None,
    overrides: list[str] | None = None,
    runs_dir: str = "runs",
    grid: dict[str, list[Any]] | None = None,
    config_path: str | Path | None = None,
) -> tuple[dict[str, Any], list[Run]]:
    """The merged config and its runs, each variant parsed and instantiated (nothing is written).

    Give either a registered ``task`` (its ``tasks/<task>.yaml``) or a ``config_path``.
    """
    if config_path is None:
        if task is None:
            raise ValueError("config: give a task name or --config tasks/<task>.yaml")
        config_path = get_task(task).config_path
    config = load_config(config_path, preset)
    task = config.get("task") or task
    if not task:
        raise ValueError(f"task: {config_path} has no `task:` entry naming its registered task")
    get_task(task)
    bench = config.get("bench") or {}
    seeds = parse_seeds(seeds) or list(bench.get("seeds") or [0])
    base = yaml.safe_dump(config, sort_keys=False)
    extra = overrides_to_args(overrides)
    for arg in extra:
        check_option(config, arg, "override")
    runs = []
    with quiet_lightning():
        for name, variant_args in variant_grid(config, variants, grid or {}, task):
            for i, seed in enumerate(seeds):
                args = ["--config", base, *variant_args, *extra, f"--seed_everything={seed}", f"--variant={name}",
                        f"--runs_dir={runs_dir}", f"--run_name={slug(name)}-seed{seed}"]
                run = Run(name, seed, args)
                if i == 0:  # parse + instantiate each variant once: errors before any training
                    try:
                        cli = NormbenchCLI(args=args)
                    except Exception as exc:  # noqa: BLE001 - reported as one line naming the variant
                        raise ValueError(f"{one_line(str(exc))} (variant {name!r})") from exc
                    config_hash = cli.recorder.meta["config_hash"]
                    trainer = cli.resolved_config().get("trainer") or {}
                run.config_hash, run.trainer = config_hash, trainer
                run.record_path = run_dir(runs_dir, task, config.get("preset"), f"{slug(name)}-seed{seed}") / "record.json"
                runs.append(run)
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
    """True when ``run`` has a finished record for the same config; corrupt records are reported and redone."""
    if run.record_path is None or not run.record_path.exists():
        return False
    try:
        record = read_record(run.record_path)
    except ValueError as exc:
        tqdm.write(f"normbench: {exc}; the run will be redone", file=sys.stderr)
        return False
    return record.get("status") in FINISHED and record.get("config_hash") == run.config_hash


def needs_subprocess(runs: list[Run]) -> bool:
    """True when a run may start several processes (DDP): Lightning then re-launches the command,
    which must be that run's own ``normbench fit``, not the sweep."""
    import torch

    for run in runs:
        t = run.trainer
        devices = t.get("devices", "auto")
        if (str(t.get("strategy", "auto")) not in ("auto", "single_device")
                or str(devices) not in ("1", "auto", "[0]") or int(t.get("num_nodes") or 1) > 1):
            return True
    return torch.cuda.device_count() > 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the child gets SIGKILL when the sweep dies, so a killed sweep leaves no orphan run."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def run_subprocess(run: Run, env: dict[str, str]) -> int:
    """``normbench fit <run args>`` in a child process; its output goes to ``<run dir>/sweep.log``."""
    assert run.record_path is not None
    run.record_path.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "normbench", "fit", *run.args, "--trainer.enable_progress_bar=false"]
    with open(run.record_path.parent / "sweep.log", "ab") as log:
        preexec = _die_with_parent if sys.platform.startswith("linux") else None
        return subprocess.run(cmd, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT,
                               preexec_fn=preexec, check=False).returncode


def device_slots(workers: int, gpus: list[int] | None, gpus_per_run: int) -> list[dict[str, str]]:
    """Environment of each concurrent subprocess: its CPU threads and, with ``gpus``, its GPUs."""
    if gpus:
        if gpus_per_run < 1 or len(gpus) % gpus_per_run:
            raise ValueError(f"gpus_per_run: must divide the {len(gpus)} GPUs given, got {gpus_per_run}")
        groups = [gpus[i:i + gpus_per_run] for i in range(0, len(gpus), gpus_per_run)]
        threads = max(1, (os.cpu_count() or 1) // len(groups))
        return [{"CUDA_VISIBLE_DEVICES": ",".join(map(str, g)), "OMP_NUM_THREADS": str(threads)} for g in groups]
    threads = max(1, (os.cpu_count() or 1) // workers)
    return [{"OMP_NUM_THREADS": str(threads)} for _ in range(workers)]


@dataclass
class Outcome:
    """What :func:`execute` did."""

    skipped: int = 0
    trained: list[Run] = field(default_factory=list)
    failed: list[tuple[Run, str]] = field(default_factory=list)


def execute(runs: list[Run], workers: int = 1, progress: bool = True, gpus: list[int] | None = None,
            gpus_per_run: int = 1, subprocesses: bool | None = None) -> Outcome:
    """Train the unfinished ``runs``; a failing run is recorded and reported, the others go on.

    ``subprocesses=None`` picks: in this process when ``workers == 1``, no ``gpus`` are given and
    no run asks for several devices; otherwise one ``normbench fit`` subprocess per run.
    """
    if workers < 1:
        raise ValueError(f"workers: must be >= 1, got {workers}")
    outcome = Outcome()
    todo = [r for r in runs if not is_finished(r)]
    outcome.skipped = len(runs) - len(todo)
    if outcome.skipped:
        tqdm.write(f"normbench: {outcome.skipped} of {len(runs)} runs already finished, skipping them", file=sys.stderr)
    if subprocesses is None:
        subprocesses = workers > 1 or bool(gpus) or needs_subprocess(todo)
    bar = tqdm(total=len(todo), desc="runs", unit="run", disable=not progress or not todo)
    if not subprocesses:
        from normbench.training import train

        for run in todo:
            try:
                train(run.args + ([] if progress else ["--trainer.enable_progress_bar=false"]))
                outcome.trained.append(run)
            except Exception as exc:  # noqa: BLE001 - the record says "failed"; the sweep goes on
                outcome.failed.append((run, f"{type(exc).__name__}: {exc}"))
            bar.update()
    elif todo:
        slots: queue.Queue[dict[str, str]] = queue.Queue()
        for slot in device_slots(workers, gpus, gpus_per_run):
            slots.put(slot)

        def job(run: Run) -> int:
            env = slots.get()
            try:
                return run_subprocess(run, env)
            finally:
                slots.put(env)

        with ThreadPoolExecutor(max_workers=slots.qsize()) as pool:
            futures = {pool.submit(job, run): run for run in todo}
            for fut in as_completed(futures):
                run = futures[fut]
                code = fut.result()
                if code == 0:
                    outcome.trained.append(run)
                else:
                    outcome.failed.append((run, f"exit status {code}, see {run.record_path.parent / 'sweep.log'}"))
                bar.set_postfix_str(f"{run.variant} seed {run.seed}")
                bar.update()
    bar.close()
    for run, why in outcome.failed:
        tqdm.write(f"normbench: run {run.variant} seed {run.seed} failed: {why}", file=sys.stderr)
    return outcome
