"""Sweeps: a task config's variant x grid x seed runs, planned up front, run by one of several backends.

Planning (:func:`plan_runs`) merges the task YAML, its preset, the named variants
(``bench.variants``), the grid axes (``bench.grid`` and ``--grid``: :mod:`normbench.sweep.grid`), the seeds and any
command-line overrides into one LightningCLI argument list per run, and parses and instantiates every variant
before anything trains: a bad axis or value is one error and nothing is written.

Execution (:func:`execute`) skips finished runs (a ``done`` or ``diverged`` record of the same
config hash), resumes interrupted ones from their last checkpoint (see
:func:`normbench.training.run.resume.start_point`) and continues past failures, which it reports at the end.
Backends: in this process, one after another; ``workers`` concurrent ``normbench fit``
subprocesses with the CPU threads split between them; one subprocess per GPU (or per group of
``gpus_per_run`` GPUs, e.g. for DDP inside a run); and any slice ``shard=(i, n)`` of the runs, for
job arrays on a cluster.
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from normbench.errors import one_line
from normbench.io import Config
from normbench.judge import tuned
from normbench.render.views import check_views
from normbench.sweep.grid import check_option, variant_grid
from normbench.tasks import get_task, norm_roles
from normbench.tasks.series import decomposition_series, expand_metric_layers, monitor_series
from normbench.training.cli import NormbenchCLI
from normbench.training.config import load_config
from normbench.training.run.rundir import record_path, run_dir


@dataclass
class Run:
    """One (variant, seed) run of a sweep and the arguments that train it."""

    variant: str
    seed: int
    args: list[str]
    record_path: Path | None = None
    config_hash: str | None = None
    trainer: Config = field(default_factory=dict)
    data: Config = field(default_factory=dict)  # the resolved ``data`` section: checked before training
    config: Config = field(default_factory=dict)  # the variant's resolved config (its seed aside)


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


def parse_names(text: str | list[str] | None, field: str) -> list[str] | None:
    """``"a,b"``, ``"[a, b]"`` or ``"['a', 'b']"`` -> ``["a", "b"]`` (``None`` stays ``None``). A piece holding ``=``
    is a grid label of the name before it: ``"pre/both,lr=0.001,pre/scale"`` -> ``["pre/both,lr=0.001", "pre/scale"]``
    (one point of a preset's grid, as the sweep names it)."""
    if text is None or isinstance(text, list):
        return text
    body = text.strip()
    if body.startswith("[") != body.endswith("]"):
        raise ValueError(f"{field}: {text!r} has an unbalanced bracket; use a,b or [a, b]")
    names: list[str] = []
    for piece in (n.strip().strip("'\"").strip() for n in body.strip("[]").split(",")):
        if piece and "=" in piece and names:
            names[-1] += f",{piece}"
        elif piece:
            names.append(piece)
    if not names:
        raise ValueError(f"{field}: {text!r} names nothing; use a,b or [a, b]")
    return names


def overrides_to_args(overrides: list[str] | None) -> list[str]:
    """``["trainer.max_steps=100", "--data.batch_size", "64"]`` ->
    ``["--trainer.max_steps=100", "--data.batch_size=64"]``."""
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


def check_metrics(config: Config, task: str) -> None:
    """One-line error for a leaderboard metric (``bench.metrics``) that reads a series no run logs.

    The series a run may log are the task module's (``SERIES``), the monitor's and the
    decomposition's (:mod:`normbench.tasks.series`), expanded over the network's layers.
    """
    metrics = (config.get("bench") or {}).get("metrics") or {}
    if not metrics:
        return
    arch = ((config.get("model") or {}).get("init_args") or {}).get("arch") or {}
    n_layers = int(arch.get("n_layers", 1))
    module = get_task(task).module
    roles = norm_roles(task)
    norm_points = [f"L{i}.{n}" for i in range(1, n_layers + 1) for n, r in roles.items() if r == "block"] + [
        n for n, r in roles.items() if r != "block"
    ]
    known = (
        set(module.SERIES.expand(n_layers))  # type: ignore[attr-defined]  # a task's module is a NormbenchModule
        | set(monitor_series(norm_points, n_layers))
        | set(decomposition_series(n_layers))
    )
    for name, spec in expand_metric_layers(metrics, n_layers).items():
        if spec.get("series") not in known:
            raise ValueError(
                f"bench.metrics.{name}.series: {spec.get('series')!r} is not logged by task {task}; "
                f"see normbench.tasks.series"
            )


def plan_runs(
    task: str | None = None,
    preset: str | None = None,
    seeds: list[int] | str | None = None,
    variants: list[str] | None = None,
    overrides: list[str] | None = None,
    runs_dir: str = "runs",
    grid: dict[str, list[Any]] | None = None,
    config_path: str | Path | None = None,
    results_dir: str | Path = "results",
) -> tuple[Config, list[Run]]:
    """The merged config and its runs, each variant parsed and instantiated (nothing is written).

    Give either a registered ``task`` (its shipped config) or a ``config_path`` (a file or a task name). A config
    with ``bench.tuned`` keeps two points of its grid per base variant, the shared and the tuned one, read from the
    choice board under ``results_dir`` (:mod:`normbench.judge.tuned`); the returned config's ``bench.tuned`` is
    then that resolved view.
    """
    if config_path is None:
        if task is None:
            raise ValueError("config: give a task name or --config tasks/<task>.yaml")
        config_path = str(get_task(task).config_path)
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
    check_metrics(config, task)
    check_views(config.get("bench") or {})  # every board view's spec, before anything trains
    points = variant_grid(config, variants, grid or {}, task)
    if bench.get("tuned"):
        bases = list(dict.fromkeys(v.split(",")[0] for v in variants)) if variants else None
        whole = [n for n, _ in variant_grid(config, bases, grid or {}, task)]  # the grid of each base named
        view = tuned.resolve(bench["tuned"], whole, results_dir)
        kept = tuned.select(view, [n for n, _ in points])
        off = [n for n in variants or [] if "," in n and n not in kept]
        waits = {row["base"]: row["waiting"] for row in view["bases"] if row.get("waiting")}
        if off and off[0].split(",")[0] in waits:
            raise tuned.ChoiceNotReady(
                f"variants: {off[0]!r}: the {view['axis']} of its base is not chosen yet on {view['choice']} "
                f"({waits[off[0].split(',')[0]]}); both its points train once it is (normbench bake)",
                view["choice"],
                f"the {view['axis']} of {off[0].split(',')[0]} is not chosen yet ({waits[off[0].split(',')[0]]})",
            )
        if off:
            raise ValueError(
                f"variants: {off[0]!r} is neither the shared nor the tuned point of its base (bench.tuned: "
                f"{view['axis']} shared {view['shared']}, tuned as {view['choice']} chose)"
            )
        points = [(n, a) for n, a in points if n in kept]
        config = {**config, "bench": {**bench, "tuned": view}}
    runs: list[Run] = []
    planned: dict[str, str] = {}  # config hash -> the variant planned with it
    with quiet_lightning():
        for name, variant_args in points:
            args = ["--config", base, *variant_args, *extra, f"--variant={name}", f"--runs_dir={runs_dir}"]
            try:  # parse + instantiate each variant once: errors before any training
                cli = NormbenchCLI(args=[*args, f"--seed_everything={seeds[0]}"])
            except Exception as exc:  # noqa: BLE001 - reported as one line naming the variant
                raise ValueError(f"{one_line(str(exc))} (variant {name!r})") from exc
            config_hash, label = cli.config_hash, cli.run_label
            resolved = cli.identity_config
            trainer, data = resolved.get("trainer") or {}, resolved.get("data") or {}
            if config_hash in planned:  # e.g. a grid's placement-none cells: one network, planned once
                print(
                    f"normbench: variant {name!r} builds the same model as {planned[config_hash]!r} "
                    f"(config {config_hash}); it is planned once",
                    file=sys.stderr,
                )
                continue
            planned[config_hash] = name
            for seed in seeds:
                path = record_path(run_dir(runs_dir, task, label, config_hash, seed))
                runs.append(
                    Run(name, seed, [*args, f"--seed_everything={seed}"], path, config_hash, trainer, data, resolved)
                )
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
        for lg, level in zip(loggers, levels, strict=False):
            lg.setLevel(level)
