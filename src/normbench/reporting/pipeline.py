"""The results pipeline: train a sweep, then write its leaderboard; rebuild leaderboards; the analyses' outputs.

Only a task's own bench (its ``default_preset``, default seeds and variants, no overrides, no
grid) writes ``results/<task>/``. Every other sweep writes ``results/<task>/<name>/``, ``name``
given with ``--name`` or derived from what differs; a named folder keeps the key of the sweep
that wrote it, and a different sweep never replaces it (:func:`results_folder`). Every writer here
follows one publishing rule (:mod:`normbench.reporting.publish`): a published board is replaced only by
a build that covers its finished runs and its settings, else nothing is written (``force`` replaces it).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import torch

from normbench.analysis.random_grid import random_grid as run_grid
from normbench.io import check_writable
from normbench.reporting import claims, class_keys, head_keys, key_sets, publish
from normbench.reporting import leaderboard as lb
from normbench.reporting.decomposition import decompose_checkpoint, plot_decomposition, with_decomposition
from normbench.reporting.geometry import write_geometry
from normbench.reporting.matrix import build_matrix, plot_matrix
from normbench.reporting.plots import plot_series
from normbench.reporting.rejudge import check_same_runs, rejudge_board
from normbench.reporting.tokens import TOKEN_REPORT, published_runs, report_runs, write_token_report
from normbench.reporting.unselectable import write_random_grid
from normbench.reporting.width import build_width, plot_width
from normbench.sweep.backends import Outcome, default_workers, execute
from normbench.sweep.device_plan import StackPlan, plan_stacks, seed_step_bytes
from normbench.sweep.plan import Run, parse_grid, parse_seeds, plan_runs
from normbench.sweep.stacks import execute_vectorized
from normbench.sweep.vectorized import can_stack
from normbench.tasks import get_task, resolve_config
from normbench.training.config import load_config
from normbench.training.records import FINISHED, RESUMABLE, read_record
from normbench.training.rundir import LAST_CHECKPOINT


def bench(
    task: str,
    preset: str | None = None,
    seeds: list[int] | None = None,
    variants: list[str] | None = None,
    workers: int | None = None,
    override: list[str] | None = None,
    runs_dir: str = "runs",
    results_dir: str = "results",
    progress: bool = True,
    dry_run: bool = False,
    force: bool = False,
) -> None:
    """Train a task's variant x seed grid (finished runs are skipped) and write its leaderboard.

    Shorthand for ``normbench sweep --config <task> --preset <preset>``.

    Args:
        task: registered task name (see ``normbench tasks``).
        preset: preset of the task's config (default: its ``default_preset``, e.g. ``quick``).
        seeds: seeds to run (default: the preset's ``bench.seeds``).
        variants: subset of the task's variants (default: the preset's ``bench.default_variants``, else all).
        workers: parallel training processes, CPU threads split between them (default: one per available CPU core).
        override: config overrides for every run, e.g. ``--override '[trainer.max_steps=100]'``.
        runs_dir: root of TensorBoard logs, checkpoints and run records.
        results_dir: leaderboards go to ``<results_dir>/<task>/`` (other sweeps: a subfolder).
        progress: show progress bars.
        dry_run: print the planned runs and where the leaderboard goes; train and write nothing.
        force: replace the published leaderboard even when this build lacks some of its finished runs or
            settings (by default that is refused before anything trains or is written).
    """
    get_task(task)  # one line naming the registered tasks
    run_sweep(
        task,
        preset,
        seeds=seeds,
        variants=variants,
        workers=workers,
        overrides=override,
        runs_dir=runs_dir,
        results_dir=results_dir,
        progress=progress,
        dry_run=dry_run,
        force=force,
    )


def print_plan(runs: list[Run], task: str, preset: str | None, out: Path | None, workers: int) -> None:
    """What a sweep would do: each run with its state and directory.

    States: finished; to resume (unfinished, with a checkpoint); to restart (unfinished without a checkpoint,
    or a record that cannot be read); to train.
    """
    print(
        f"normbench: dry run of {task} (preset {preset}): {len(runs)} runs, {workers} at a time; "
        f"leaderboard: {out if out is not None else 'none'}"
    )
    for run in runs:
        record = run.record_path
        state = "to train"
        if record is not None and record.exists():
            try:
                status = read_record(record).get("status")
            except ValueError:
                status = None
            resumable = status in RESUMABLE and (record.parent / LAST_CHECKPOINT).exists()
            state = "finished" if status in FINISHED else "to resume" if resumable else "to restart"
        print(f"  {run.variant}\tseed {run.seed}\t{state}\t{record.parent if record else ''}")


class SweepFailed(Exception):
    """Some runs of a sweep failed (their records say so); the others finished."""


def sweep_definition(
    preset: str | None, runs: list[Run], overrides: list[str] | None, grid: list[str] | None, config_file: str | None
) -> dict[str, Any]:
    """What a sweep is, as its command says it: preset, variants, seeds, overrides, grid, config file.

    Independent of the code's run keys, so the same command keeps owning its folder across versions.
    """
    return {
        "preset": preset,
        "variants": list(dict.fromkeys(r.variant for r in runs)),
        "seeds": sorted({r.seed for r in runs}),
        "overrides": list(overrides or []),
        "grid": list(grid or []),
        "config_file": Path(config_file).name if config_file else None,
    }


def sweep_key(definition: dict[str, Any]) -> str:
    """12 hex digits naming a :func:`sweep_definition`."""
    return hashlib.sha256(json.dumps(definition, sort_keys=True, default=str).encode()).hexdigest()[:12]


def results_folder(
    config: dict[str, Any],
    preset: str | None,
    seeds: Any,
    variants: list[str] | None,
    overrides: list[str] | None,
    grid: list[str] | None,
    name: str | None,
    config_file: str | None = None,
) -> str | None:
    """The subfolder of ``results/<task>/`` a sweep's leaderboard goes to; ``None`` for the task's own bench.

    The task's own bench is its shipped config (``config_file`` ``None``) at its ``default_preset``
    with the preset's seeds and variants, no overrides and no grid. Any other sweep gets ``name``,
    else (another config file) the file's stem, else the preset's name when only the preset
    differs, else ``<preset>-<8 hex digits of what differs>``.
    """
    bench = config.get("bench") or {}
    default_seeds = list(bench.get("seeds") or [0])
    default_variants = bench.get("default_variants") or list(bench.get("variants") or {})
    same_seeds = seeds is None or parse_seeds(seeds) == default_seeds
    same_variants = variants is None or list(variants) == list(default_variants)
    if name is not None:
        if not re.fullmatch(r"[A-Za-z0-9_.+=-]+", name) or name in (".", ".."):
            raise ValueError(f"name: {name!r} must be a folder name (letters, digits, _ . + = -)")
        return name
    differs = not (same_seeds and same_variants) or bool(overrides) or bool(grid)
    if config_file is not None:  # a config of one's own never replaces the task's published results
        stem = re.sub(r"[^A-Za-z0-9_.+=-]+", "-", Path(config_file).stem).strip("-.") or "custom"
        if not differs and preset == config.get("default_preset"):
            return stem
        what = json.dumps([preset, parse_seeds(seeds), variants, overrides, grid], default=str)
        return f"{stem}-{preset or 'default'}-{hashlib.sha256(what.encode()).hexdigest()[:8]}"
    default_preset = config.get("default_preset")
    if not differs and preset == default_preset:
        return None
    if not differs:
        return preset or "default"
    what = json.dumps([preset, parse_seeds(seeds), variants, overrides, grid], default=str)
    return f"{preset or 'default'}-{hashlib.sha256(what.encode()).hexdigest()[:8]}"


def check_results_owner(out: Path, key: str, preset: str | None, runs: list[Run]) -> None:
    """One-line error when ``out`` holds the leaderboard of another sweep (its ``sweep_key`` differs).

    A leaderboard written before sweeps had a definition (no ``sweep`` block) belongs to this sweep
    when its preset, variants and seeds are this sweep's.
    """
    board = out / "leaderboard.json"
    if not board.is_file():
        return
    try:
        doc = json.loads(board.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"name: {board} is unreadable ({exc}); choose another --name, or {publish.FORCE}") from exc
    owner = doc.get("sweep_key")
    if "sweep" not in doc:
        planned = {(r.variant, r.seed) for r in runs}
        published = {(v["name"], s) for v in doc.get("variants", []) for s in v.get("seeds", [])}
        if doc.get("preset") == preset and planned == published:
            return
    elif owner == key:
        return
    raise ValueError(
        f"name: {out} holds the leaderboard of another sweep (key {owner}, this one {key}); "
        f"choose another --name, or {publish.FORCE}"
    )


def run_sweep(
    config: str,
    preset: str | None = None,
    grid: list[str] | None = None,
    seeds: list[int] | str | None = None,
    variants: list[str] | None = None,
    workers: int | None = None,
    gpus: list[int] | None = None,
    gpus_per_run: int = 1,
    shard: str | None = None,
    vectorize: int | str = 1,
    overrides: list[str] | None = None,
    runs_dir: str = "runs",
    results_dir: str = "results",
    name: str | None = None,
    leaderboard: bool = True,
    progress: bool = True,
    train: bool = True,
    dry_run: bool = False,
    force: bool = False,
) -> Path | None:
    """Plan, run and report one sweep; returns the leaderboard directory (``None`` without one).

    ``config`` is a task's name or a config file; ``preset`` defaults to its ``default_preset``;
    ``workers`` to one run per available CPU core (per GPU group with ``gpus``). ``vectorize``: K seeds of a
    variant trained as one stacked model, ``workers`` stacks at a time; ``auto``: K and the concurrency from
    the devices' memory and the model (:func:`normbench.sweep.device_plan.plan_stacks`).
    Nothing is trained when the leaderboard folder belongs to another sweep, or when its published
    leaderboard has finished runs this sweep does not plan or other settings (``force``: replace it
    anyway); a leaderboard that would lose finished runs after training (failed runs) is not written.
    With ``train=False`` nothing is trained at all (the leaderboard is rebuilt from the records).
    ``dry_run``: plan and check everything, print the runs and where the leaderboard would go, write nothing.
    """
    axes = parse_grid(grid)
    if preset is None:
        preset = load_config(config).get("default_preset")
    cfg, runs = plan_runs(None, preset, seeds, variants, overrides, runs_dir, axes, config_path=config)
    task = cfg["task"]
    own = resolve_config(config)
    custom = (
        None if own.read_bytes() == get_task(task).config_path.read_bytes() else str(own)
    )  # a copy counts as the task's
    folder = results_folder(cfg, preset, seeds, variants, overrides, grid, name, custom)
    out = Path(results_dir) / task / folder if folder else Path(results_dir) / task
    definition = sweep_definition(preset, runs, overrides, grid, custom)
    key = sweep_key(definition)
    if leaderboard and shard is None:  # before training: a clash is an error, not lost compute
        if folder is not None and not force:
            check_results_owner(out, key, preset, runs)
        publish.check_leaderboard(
            out,
            {(r.variant, r.seed): r.config_hash for r in runs},
            publish.sweep_settings(task, cfg.get("preset"), definition),
            force,
            planned=True,
            superseded=publish.superseded_configs(cfg.get("bench") or {}),
        )
    if shard is not None:
        m = re.fullmatch(r"(\d+)/(\d+)", shard)
        if not m or not int(m[1]) < int(m[2]):
            raise ValueError(f"shard: {shard!r} must be I/N with 0 <= I < N, e.g. 3/8")
        runs = runs[int(m[1]) :: int(m[2])]
    stack_plan = None
    if vectorize == "auto":
        if gpus is None and torch.cuda.is_available():  # runs would train on GPU 0: plan for it
            gpus = [0]
        stack_plan = auto_stacks(runs, gpus, workers)
        vectorize, workers = stack_plan.stack_size, stack_plan.workers
    if workers is None:  # follow the machine: one run per CPU core, or per GPU group
        workers = 1 if vectorize > 1 and not gpus else default_workers(gpus, gpus_per_run)
    if train:  # before training: an output folder found unwritable at the end loses the compute
        check_writable(runs_dir, "runs_dir")
    if leaderboard and shard is None:
        check_writable(out, "results_dir")
    if dry_run:
        print_plan(runs, task, cfg.get("preset"), out if leaderboard and shard is None else None, workers)
        if stack_plan is not None:
            print(f"normbench: vectorize auto: {stack_plan.describe()}")
        elif vectorize > 1:
            print(f"normbench: stacks of up to {vectorize} seeds of a variant, {workers} at a time")
        return None
    if not train:
        outcome = Outcome()
    elif vectorize > 1:
        outcome = execute_vectorized(runs, vectorize, progress=progress, workers=workers, gpus=gpus)
    else:
        outcome = execute(runs, workers=workers, progress=progress, gpus=gpus, gpus_per_run=gpus_per_run)
    written = None
    failed = (
        (f"runs: {len(outcome.failed)} of {len(runs)} failed; their records say why, and the same command retries them")
        if outcome.failed
        else None
    )
    if leaderboard and shard is None and (failed or outcome.busy) and not load_finished(runs):
        if failed:  # the failures are the news, not the missing leaderboard
            raise SweepFailed(failed)
        print(
            f"normbench: no leaderboard: {len(outcome.busy)} runs are being trained by another process; "
            f"the same command writes it once they are finished",
            file=sys.stderr,
        )
        return None
    if leaderboard and shard is None:
        try:
            write_results(
                task, cfg.get("preset"), cfg, runs, out, runs_dir, sweep=key, definition=definition, force=force
            )
        except publish.Refused as exc:
            if failed:  # the failures are the news; the published leaderboard stays as it is
                raise SweepFailed(f"{failed}; {exc}") from None
            raise
        written = out
    if failed:
        raise SweepFailed(failed)
    return written


def auto_stacks(runs: list[Run], gpus: list[int] | None, workers: int | None) -> StackPlan:
    """``--vectorize auto``: the stack plan for ``runs`` on ``gpus`` (or the CPU's cores, or ``workers``)."""
    if not runs:
        raise ValueError("vectorize: auto needs runs to plan")
    per_variant: dict[str, int] = {}
    for run in runs:
        per_variant[run.variant] = per_variant.get(run.variant, 0) + 1
    config = runs[0].config
    batch = int(((config.get("data") or {}).get("init_args") or {}).get("batch_size") or 1)
    module_path = str((config.get("model") or {}).get("class_path", ""))
    module, _, name = module_path.rpartition(".")
    cls = getattr(importlib.import_module(module), name, None) if module else None
    return plan_stacks(
        max(per_variant.values()),
        len(per_variant),
        seed_step_bytes(config),
        gpus,
        batch_size=batch,
        cpu_workers=workers or default_workers(gpus),
        stackable=can_stack(cls),
    )


def leaderboard(
    task: str,
    preset: str | None = None,
    seeds: list[int] | None = None,
    variants: list[str] | None = None,
    runs_dir: str = "runs",
    results_dir: str = "results",
    name: str | None = None,
    force: bool = False,
) -> None:
    """Rebuild a sweep's leaderboard from its run records (nothing is trained).

    A published leaderboard is replaced only when the records cover its finished runs and settings.

    Args:
        task: registered task name.
        preset: preset of the sweep (default: the task's ``default_preset``).
        seeds: seeds to include (default: the preset's).
        variants: variants to include (default: the preset's ``bench.default_variants``, else all).
        runs_dir: root of the run records.
        results_dir: root of the results; the folder is chosen as for ``normbench sweep``.
        name: the sweep's ``--name``, if it had one.
        force: replace the published leaderboard even when the records lack some of its finished runs.
    """
    run_sweep(
        task,
        preset,
        seeds=seeds,
        variants=variants,
        runs_dir=runs_dir,
        results_dir=results_dir,
        name=name,
        leaderboard=True,
        progress=False,
        train=False,
        force=force,
    )


def load_finished(runs: list[Run], statuses: tuple[str, ...] = FINISHED) -> list[dict[str, Any]]:
    """The finished records of ``runs`` (or those of other ``statuses``), each named by its planned
    variant (a run shared by two sweeps under different variant names is shown under this sweep's name)."""
    by_path = {str(r.record_path): r for r in runs}
    records = [
        r
        for r in lb.load_records([r.record_path for r in runs], [r.config_hash for r in runs])
        if r["status"] in statuses
    ]
    return [{**r, "variant": by_path[r["record_path"]].variant} for r in records]


def write_results(
    task: str,
    preset: str | None,
    config: dict,
    runs: list[Run],
    out: Path,
    runs_dir: str = "runs",
    sweep: str | None = None,
    definition: dict[str, Any] | None = None,
    force: bool = False,
) -> None:
    """Build the leaderboard of the finished records among ``runs`` into ``out``, with the task's
    extra reports where its config asks for them (``bench.token_report``: Tables 3-4).

    Nothing is written when ``out`` holds a leaderboard with finished runs or settings this build lacks
    (:func:`normbench.reporting.publish.check_leaderboard`; ``force`` replaces it anyway).
    """
    records = load_finished(runs)
    missing = len(runs) - len(records)
    if not records:
        raise ValueError(
            f"runs_dir: no finished run records for task {task} (preset {preset}); "
            f"run `normbench sweep --config {task}` first"
        )
    bench_cfg = config.get("bench") or {}
    superseded = publish.superseded_configs(bench_cfg)
    publish.check_leaderboard(
        out,
        {(r["variant"], r["seed"]): r.get("config_hash") for r in records},
        publish.sweep_settings(task, preset, definition),
        force,
        superseded=superseded,
    )
    if bench_cfg.get("token_report"):  # the report beside the leaderboard: checked before either is written
        publish.check_report(
            out / TOKEN_REPORT,
            lambda doc: published_runs(doc, config),
            report_runs(config, runs_dir, runs),
            force,
            "--results_dir/--name",
            superseded=superseded,
        )
    decomposition = bench_cfg.get("decomposition")
    if decomposition:
        records = with_decomposition(records, int(decomposition.get("sequences", 256)))
    if bench_cfg.get("head_keys"):
        records = head_keys.with_head_keys(records)
    if bench_cfg.get("class_keys"):
        records = class_keys.with_class_keys(records)
        bench_cfg = {**bench_cfg, "metrics": {**(bench_cfg.get("metrics") or {}), **class_keys.metrics()}}
    key_set_spec = bench_cfg.get("key_sets")
    n_layers = lb.n_layers_of(records[0]["config"])
    if key_set_spec:
        records = key_sets.with_key_sets(records, key_set_spec)
        bench_cfg = {
            **bench_cfg,
            "metrics": {
                **(bench_cfg.get("metrics") or {}),
                **key_sets.metrics(key_sets.check_spec(key_set_spec)[0], n_layers),
            },
            "tables": {**(bench_cfg.get("tables") or {}), "key_sets": key_sets.table_spec(key_set_spec, n_layers)},
        }
    variant_order = list(dict.fromkeys(r.variant for r in runs))
    board = lb.build(task, preset, records, bench_cfg, variant_order, failed=load_finished(runs, ("failed",)))
    if replaced := superseded_build(out / "leaderboard.json", board, bench_cfg):
        board["supersedes"] = replaced
    board["sweep_key"] = sweep
    board["sweep"] = definition
    board["planned_runs"], board["finished_runs"] = len(runs), len(records)
    by_variant = lb.group_by_variant(records)
    plots = [str(plot_series(by_variant, spec, out / name)) for name, spec in (bench_cfg.get("plots") or {}).items()]
    if decomposition:
        panels = {v: [r["decomposition"] for r in rs if "decomposition" in r] for v, rs in by_variant.items()}
        if any(panels.values()):
            plots.append(
                str(
                    plot_decomposition(
                        {v: rs for v, rs in panels.items() if rs},
                        out / "decomposition.png",
                        decomposition.get("title", ""),
                    )
                )
            )
    if key_set_spec:
        by_name = {v["name"]: v for v in board["variants"]}
        plots.append(str(key_sets.plot_key_sets(by_name, key_set_spec, n_layers, out / "key_sets.png")))
    if bench_cfg.get("matrix"):
        planned = {name: [r.seed for r in runs if r.variant == name] for name in variant_order}
        board["matrix"] = build_matrix(bench_cfg["matrix"], board["variants"], planned)
        plots.insert(
            0,
            str(
                plot_matrix(
                    board["matrix"],
                    out / "matrix.png",
                    f"{task}: placement x component, preset {preset} (mean ± std over seeds)",
                )
            ),
        )
    if bench_cfg.get("width"):
        planned = {name: [r.seed for r in runs if r.variant == name] for name in variant_order}
        board["width"] = build_width(bench_cfg["width"], board["variants"], records, planned)
        plots.insert(
            0,
            str(
                plot_width(board["width"], out / "width.png", f"{task}: width axis, preset {preset} (head width fixed)")
            ),
        )
    json_path, md_path = lb.write(board, out, plots)
    note = f" ({missing} planned runs have no finished record yet)" if missing else ""
    print(f"normbench: wrote {md_path} and {json_path}{note}")
    for claim in board["claims"]:
        print(f"  {claim['id']}: {claim['verdict']}")
    if bench_cfg.get("token_report"):
        doc = write_token_report(config, preset, runs_dir, out, runs)
        for claim in doc.get("claims", []):
            print(f"  {claim['id']}: {claim['verdict']}")


def rejudge(board: str, force: bool = False) -> None:
    """Judge a published leaderboard's claims again from the per-seed values it holds (nothing is trained).

    Today's claims, margins and protocols and today's protocol table are applied; the board's sweep is
    planned again to read its runs' settings, and every variant must plan to the config it was trained
    with. Use it after a change to a claim or its rule; values change only by retraining.

    Args:
        board: a leaderboard's folder (``results/<task>[/<name>]``) or its ``leaderboard.json``.
        force: write even if the board's variants plan to other configs today.
    """
    path = Path(board)
    path = path / "leaderboard.json" if path.is_dir() or path.suffix != ".json" else path
    doc = publish.read_board(path, "a leaderboard folder")
    if doc is None:
        raise ValueError(f"board: {path} does not exist; give a folder holding a leaderboard.json")
    sweep = doc.get("sweep") or {}
    variants = list(dict.fromkeys(v.split(",")[0] for v in sweep.get("variants") or [])) or None  # grid cells: bases
    config, runs = plan_runs(
        doc["task"],
        sweep.get("preset"),
        sweep.get("seeds"),
        variants,
        sweep.get("overrides") or None,
        "runs",
        parse_grid(sweep.get("grid") or None),
        config_path=sweep.get("config_file"),
    )
    bench_cfg = config.get("bench") or {}
    if not force:
        check_same_runs(doc, {r.variant: r.config_hash for r in runs}, publish.superseded_configs(bench_cfg))
    configs = {r.variant: r.config for r in runs}
    planned = {name: [r.seed for r in runs if r.variant == name] for name in configs}
    new = rejudge_board(doc, bench_cfg, configs, planned)
    plots = [str(p) for p in sorted(path.parent.glob("*.png"))]
    json_path, md_path = lb.write(new, path.parent, order_plots(plots, path.parent))
    print(f"normbench: re-judged {md_path} and {json_path}")
    for claim in new["claims"]:
        print(f"  {claim['id']}: {claim['verdict']}")


def order_plots(plots: list[str], folder: Path) -> list[str]:
    """The figures in the order the board's Markdown showed them (new ones last)."""
    md = folder / "leaderboard.md"
    text = md.read_text(encoding="utf-8") if md.is_file() else ""
    return sorted(plots, key=lambda p: (text.find(f"({Path(p).name})") if f"({Path(p).name})" in text else 1 << 30, p))


def superseded_build(path: Path, board: dict[str, Any], bench_cfg: dict[str, Any]) -> dict[str, Any] | None:
    """What the published board at ``path`` said, when ``board`` replaces it as a build of superseded configs
    (``bench.superseded``): its date, commit, configs and claims with their gaps to the paper, kept so
    the new board shows whether the change closed them. A board that already carries such a block
    for the same runs passes it on."""
    old = publish.read_board(path, "--results_dir/--name")
    superseded = publish.superseded_configs(bench_cfg)
    if old is None or not superseded:
        return None
    old_hashes = {v["name"]: v.get("config_hash") for v in old.get("variants") or []}
    new_hashes = {v["name"]: v.get("config_hash") for v in board["variants"]}
    if old_hashes == new_hashes or not any(superseded is True or h in superseded for h in old_hashes.values()):
        return old.get("supersedes")
    why = bench_cfg["superseded"]["why"] if isinstance(bench_cfg["superseded"], dict) else bench_cfg["superseded"]
    return {
        "generated_at": old.get("generated_at"),
        "git_commit": (old.get("provenance") or {}).get("git_commit"),
        "why": why,
        "config_hashes": old_hashes,
        "claims": [
            {
                "id": c["id"],
                "verdict": c.get("verdict"),
                "measured": c.get("measured"),
                "per_seed": c.get("per_seed"),
                "gap_to_paper": c.get("gap_to_paper") or claims.paper_gaps(c),
            }
            for c in old.get("claims") or []
        ],
    }


def random_grid(
    n_min: int = 3,
    n_max: int = 60,
    d_min: int = 3,
    d_max: int = 15,
    runs: int = 100,
    seed: int = 0,
    results_dir: str = "results",
    progress: bool = True,
    force: bool = False,
) -> None:
    """Figure 1c/1d: unselectable keys among random N(0, I) keys, raw and after LayerNorm.

    Writes ``<results_dir>/unselectable/``: random_grid.json, two heatmaps and a leaderboard. A published
    grid is replaced only by one that contains its n and d ranges, with as many runs per cell and its seed
    (checked before the grid is computed).

    Args:
        n_min, n_max: range of keys per set (inclusive).
        d_min, d_max: range of dimensions (inclusive).
        runs: random sets per (d, n) cell.
        seed: seed of the keys.
        results_dir: root of the results.
        progress: show a progress bar.
        force: replace the published grid even when this one does not cover it.
    """
    if not (1 <= n_min <= n_max and 1 <= d_min <= d_max):
        raise ValueError(
            f"n_min..n_max and d_min..d_max: need 1 <= min <= max, got {n_min}..{n_max} and {d_min}..{d_max}"
        )
    if runs < 1:
        raise ValueError(f"runs: must be >= 1 random sets per cell, got {runs}")
    out = Path(results_dir) / "unselectable"
    publish.check_random_grid(out, list(range(n_min, n_max + 1)), list(range(d_min, d_max + 1)), runs, seed, force)
    grid = run_grid(range(n_min, n_max + 1), range(d_min, d_max + 1), runs, seed, progress)
    board = write_random_grid(grid, out)
    print(f"normbench: random grid in {grid['wall_time_s']:.1f} s; wrote {Path(results_dir) / 'unselectable'}")
    for claim in board["claims"]:
        print(f"  {claim['id']}: {claim['verdict']} (measured {claim['measured']})")


def decompose(ckpt: str | None = None, sequences: int = 256, out: str | None = None) -> None:
    """Additive decomposition e = i + h + f + c of a trained run's hidden states (Mickus et al. 2022).

    Writes ``decomposition.json`` (mean importance of each term per layer over held-out sequences,
    float64) and ``decomposition.png`` (like Mickus et al. Figure 3).

    Args:
        ckpt: a run's checkpoint, ``<runs_dir>/<task>/<label>-<hash>/seed<k>/checkpoints/last.ckpt``.
        sequences: validation sequences to decompose.
        out: output directory (default: the run's directory).
    """
    if not ckpt:
        raise ValueError("ckpt: --ckpt <run>/checkpoints/last.ckpt is required")
    if sequences < 1:
        raise ValueError(f"sequences: must be >= 1, got {sequences}")
    folder = decompose_checkpoint(ckpt, sequences, out)
    print(f"normbench: wrote {folder / 'decomposition.json'} and {folder / 'decomposition.png'}")


def geometry(
    preset: str = "geometry",
    seed: int = 0,
    variants: list[str] | None = None,
    override: list[str] | None = None,
    runs_dir: str = "runs",
    results_dir: str = "results",
    force: bool = False,
) -> None:
    """Figure 1a/1b of Brody et al.: 3-D keys and queries of the d = 3 majority models, and query angles over training.

    Reads the runs of ``normbench sweep --config tasks/majority.yaml --preset geometry`` and writes
    ``geometry_3d.png``, ``query_angle_histograms.png`` and ``geometry.json`` into ``<results_dir>/majority/``.

    Args:
        preset: preset of tasks/majority.yaml whose runs are drawn (its d_model must be 3).
        seed: which seed of each variant to draw.
        variants: variants to draw (default: the preset's).
        override: the config overrides the runs were trained with (they are part of the runs' keys).
        runs_dir: root of the run records.
        results_dir: the figures go to ``<results_dir>/majority/``.
        force: replace the published pictures even when these do not draw every (variant, seed) they drew,
            from runs of the same config.
    """
    config, runs = plan_runs("majority", preset, [seed], variants, override, runs_dir)
    d = config["model"]["init_args"]["arch"]["d_model"]
    if d != 3:
        raise ValueError(
            f"preset: {preset!r} has model.init_args.arch.d_model={d}; the 3-D views need 3 (use --preset geometry)"
        )
    missing = [str(r.record_path) for r in runs if r.record_path is None or not r.record_path.is_file()]
    if missing:
        raise FileNotFoundError(
            f"runs_dir: no run record {missing[0]}; run `normbench sweep --config "
            f"majority --preset {preset} --name {preset}` first"
        )
    out = Path(results_dir) / "majority"
    publish.check_geometry(out, {(r.variant, r.seed): r.config_hash for r in runs}, force)
    summary = write_geometry({r.variant: r.record_path for r in runs}, out)
    print(
        f"normbench: wrote {out / 'geometry_3d.png'}, {out / 'query_angle_histograms.png'} and {out / 'geometry.json'}"
    )
    for variant, s in summary.items():
        print(
            f"  {variant}: class-query angle to the normal {s['class_query_angle_to_normal_deg']:.1f} deg, "
            f"max |key . normal| {s['max_abs_key_component_along_normal']:.2e}"
        )
