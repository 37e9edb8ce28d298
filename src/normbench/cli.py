"""The ``normbench`` command.

* ``normbench fit --config tasks/<task>.yaml [--preset quick] [--model.attn_norm.component project] ...``
  trains one run (LightningCLI: any ``--trainer.*`` option passes through).
* ``normbench sweep --config tasks/<task>.yaml [--preset quick] [--grid AXIS=V1,V2] [--seeds 0-9]
  [--workers N | --gpus 0,1 | --shard I/N | --vectorize K] [--section.key VALUE ...]`` trains a
  variant x grid x seed sweep (finished runs skipped, interrupted ones resumed) and writes its leaderboard.
* ``normbench bench <task> [--preset quick] [--workers 2]``: the task's own sweep (shorthand).
* ``normbench leaderboard <task> [--preset quick]`` rebuilds ``results/<task>/`` from the records.
* ``normbench random_grid`` runs the random-key experiment (Figure 1c/1d) into ``results/unselectable/``.
* ``normbench tasks`` lists the registered tasks.

Bad input ends with one line ``normbench: error: <field>: <what is allowed>`` and exit status 2.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from argparse import ArgumentError
from pathlib import Path

from jsonargparse import auto_cli
from lightning.fabric.utilities.exceptions import MisconfigurationException

from normbench import leaderboard as lb
from normbench.errors import one_line
from normbench.plots import plot_series
from normbench.sweep import FINISHED, execute, parse_grid, plan_runs
from normbench.tasks import get_task, task_names
from normbench.training import train

def bench(
    task: str,
    preset: str = "quick",
    seeds: list[int] | None = None,
    variants: list[str] | None = None,
    workers: int = 1,
    override: list[str] | None = None,
    runs_dir: str = "runs",
    results_dir: str = "results",
    progress: bool = True,
) -> None:
    """Train a task's variant x seed grid (finished runs are skipped) and write its leaderboard.

    Shorthand for ``normbench sweep --config tasks/<task>.yaml --preset <preset>``.

    Args:
        task: registered task name (see ``normbench tasks``).
        preset: preset of ``tasks/<task>.yaml`` (e.g. ``quick`` or ``paper``).
        seeds: seeds to run (default: the preset's ``bench.seeds``).
        variants: subset of the task's variants (default: the preset's ``bench.default_variants``, else all).
        workers: parallel training processes; CPU threads are split between them.
        override: config overrides for every run, e.g. ``--override '[trainer.max_steps=100]'``.
        runs_dir: root of TensorBoard logs, checkpoints and run records.
        results_dir: leaderboards go to ``<results_dir>/<task>/``.
        progress: show progress bars.
    """
    run_sweep(str(get_task(task).config_path), preset, seeds=seeds, variants=variants, workers=workers,
              overrides=override, runs_dir=runs_dir, results_dir=results_dir, progress=progress)


class SweepFailed(Exception):
    """Some runs of a sweep failed (their records say so); the others finished."""


def run_sweep(
    config: str,
    preset: str | None = None,
    grid: list[str] | None = None,
    seeds: list[int] | str | None = None,
    variants: list[str] | None = None,
    workers: int = 1,
    gpus: list[int] | None = None,
    gpus_per_run: int = 1,
    shard: str | None = None,
    vectorize: int = 1,
    overrides: list[str] | None = None,
    runs_dir: str = "runs",
    results_dir: str = "results",
    name: str | None = None,
    leaderboard: bool = True,
    progress: bool = True,
) -> Path | None:
    """Plan, run and report one sweep; returns the leaderboard directory (``None`` without one)."""
    axes = parse_grid(grid)
    cfg, runs = plan_runs(None, preset, seeds, variants, overrides, runs_dir, axes, config_path=config)
    task = cfg["task"]
    if shard is not None:
        m = re.fullmatch(r"(\d+)/(\d+)", shard)
        if not m or not int(m[1]) < int(m[2]):
            raise ValueError(f"shard: {shard!r} must be I/N with 0 <= I < N, e.g. 3/8")
        runs = runs[int(m[1])::int(m[2])]
    if vectorize > 1:
        from normbench.vectorized import execute_vectorized

        outcome = execute_vectorized(runs, vectorize, progress=progress)
    else:
        outcome = execute(runs, workers=workers, progress=progress, gpus=gpus, gpus_per_run=gpus_per_run)
    out = None
    if leaderboard and shard is None:
        if name is None and grid:  # not the task's own table: never replace its published leaderboard
            digest = hashlib.sha256(repr((grid, overrides, variants)).encode()).hexdigest()[:8]
            name = f"sweep-{digest}"
        out = Path(results_dir) / task / name if name else Path(results_dir) / task
        write_results(task, cfg.get("preset"), cfg, [r.record_path for r in runs], out, runs_dir,
                      list(dict.fromkeys(r.variant for r in runs)), task_report=name is None)
    if outcome.failed:
        raise SweepFailed(f"runs: {len(outcome.failed)} of {len(runs)} failed; their records say why, "
                          f"and the same command retries them")
    return out


def leaderboard(task: str, preset: str = "quick", seeds: list[int] | None = None, variants: list[str] | None = None,
                runs_dir: str = "runs", results_dir: str = "results") -> None:
    """Rebuild ``<results_dir>/<task>/`` from the run records of a bench (nothing is trained).

    Args:
        task: registered task name.
        preset: preset of the bench.
        seeds: seeds to include (default: the preset's).
        variants: variants to include (default: the preset's ``bench.default_variants``, else all).
        runs_dir: root of the run records.
        results_dir: leaderboards go to ``<results_dir>/<task>/``.
    """
    config, runs = plan_runs(task, preset, seeds, variants, None, runs_dir)
    write_results(task, preset, config, [r.record_path for r in runs], Path(results_dir) / task, runs_dir)


def write_results(task: str, preset: str | None, config: dict, record_paths: list[Path], out: Path,
                  runs_dir: str = "runs", variant_order: list[str] | None = None, task_report: bool = True) -> None:
    """Build the leaderboard of the finished records among ``record_paths`` into ``out``."""
    records = [r for r in lb.load_records(record_paths) if r["status"] in FINISHED]
    missing = len(record_paths) - len(records)
    if not records:
        raise ValueError(f"runs_dir: no finished run records for task {task} (preset {preset}); "
                         f"run `normbench sweep --config tasks/{task}.yaml` first")
    bench_cfg = config.get("bench") or {}
    decomposition = bench_cfg.get("decomposition")
    if decomposition:
        from normbench.decomposition_report import plot_decomposition, with_decomposition

        records = with_decomposition(records, int(decomposition.get("sequences", 256)))
    board = lb.build(task, preset, records, bench_cfg, variant_order or list((bench_cfg.get("variants") or {})))
    by_variant = lb.group_by_variant(records)
    plots = [str(plot_series(by_variant, spec, out / name)) for name, spec in (bench_cfg.get("plots") or {}).items()]
    if decomposition:
        panels = {v: [r["decomposition"] for r in rs if "decomposition" in r] for v, rs in by_variant.items()}
        if any(panels.values()):
            plots.append(str(plot_decomposition({v: rs for v, rs in panels.items() if rs}, out / "decomposition.png",
                                                decomposition.get("title", ""))))
    json_path, md_path = lb.write(board, out, plots)
    note = f" ({missing} planned runs have no finished record yet)" if missing else ""
    print(f"normbench: wrote {md_path} and {json_path}{note}")
    for claim in board["claims"]:
        print(f"  {claim['id']}: {claim['verdict']}")
    report = get_task(task).report
    if report is not None and task_report:
        doc = report(config, preset, runs_dir, out)
        for claim in (doc or {}).get("claims", []):
            print(f"  {claim['id']}: {claim['verdict']}")


def random_grid(
    n_min: int = 3, n_max: int = 60, d_min: int = 3, d_max: int = 15, runs: int = 100, seed: int = 0,
    results_dir: str = "results", progress: bool = True,
) -> None:
    """Figure 1c/1d: unselectable keys among random N(0, I) keys, raw and after LayerNorm.

    Writes ``<results_dir>/unselectable/``: random_grid.json, two heatmaps and a leaderboard.

    Args:
        n_min, n_max: range of keys per set (inclusive).
        d_min, d_max: range of dimensions (inclusive).
        runs: random sets per (d, n) cell.
        seed: seed of the keys.
        results_dir: root of the results.
        progress: show a progress bar.
    """
    from normbench.analysis.random_grid import random_grid as run_grid
    from normbench.unselectable_report import write_random_grid

    if not (1 <= n_min <= n_max and 1 <= d_min <= d_max):
        raise ValueError(f"n_min..n_max and d_min..d_max: need 1 <= min <= max, got {n_min}..{n_max} and {d_min}..{d_max}")
    grid = run_grid(range(n_min, n_max + 1), range(d_min, d_max + 1), runs, seed, progress)
    board = write_random_grid(grid, Path(results_dir) / "unselectable")
    print(f"normbench: random grid in {grid['wall_time_s']:.1f} s; wrote {Path(results_dir) / 'unselectable'}")
    for claim in board["claims"]:
        print(f"  {claim['id']}: {claim['verdict']} (measured {claim['measured']})")


def decompose(ckpt: str | None = None, sequences: int = 256, out: str | None = None) -> None:
    """Additive decomposition e = i + h + f + c of a trained run's hidden states (Mickus et al. 2022).

    Writes ``decomposition.json`` (mean importance of each term per layer over held-out sequences,
    float64) and ``decomposition.png`` (like Mickus et al. Figure 3).

    Args:
        ckpt: a run's checkpoint, ``<runs_dir>/<task>/<preset>/<run>/checkpoints/last.ckpt``.
        sequences: validation sequences to decompose.
        out: output directory (default: the run's directory).
    """
    from normbench.decomposition_report import decompose_checkpoint

    if not ckpt:
        raise ValueError("ckpt: --ckpt <run>/checkpoints/last.ckpt is required")
    if sequences < 1:
        raise ValueError(f"sequences: must be >= 1, got {sequences}")
    folder = decompose_checkpoint(ckpt, sequences, out)
    print(f"normbench: wrote {folder / 'decomposition.json'} and {folder / 'decomposition.png'}")


def geometry(preset: str = "geometry", seed: int = 0, variants: list[str] | None = None, runs_dir: str = "runs",
             results_dir: str = "results") -> None:
    """Figure 1a/1b of Brody et al.: 3-D keys and queries of the d = 3 majority models, and query angles over training.

    Reads the runs of ``normbench sweep --config tasks/majority.yaml --preset geometry`` and writes
    ``geometry_3d.png``, ``query_angle_histograms.png`` and ``geometry.json`` into ``<results_dir>/majority/``.

    Args:
        preset: preset of tasks/majority.yaml whose runs are drawn (its d_model must be 3).
        seed: which seed of each variant to draw.
        variants: variants to draw (default: the preset's).
        runs_dir: root of the run records.
        results_dir: the figures go to ``<results_dir>/majority/``.
    """
    from normbench.geometry_report import write_geometry

    config, runs = plan_runs("majority", preset, [seed], variants, None, runs_dir)
    d = config["model"]["init_args"]["d_model"]
    if d != 3:
        raise ValueError(f"preset: {preset!r} has model.init_args.d_model={d}; the 3-D views need 3 (use --preset geometry)")
    missing = [str(r.record_path) for r in runs if r.record_path is None or not r.record_path.is_file()]
    if missing:
        raise FileNotFoundError(f"runs_dir: no run record {missing[0]}; run `normbench sweep --config "
                                f"tasks/majority.yaml --preset {preset} --name {preset}` first")
    out = Path(results_dir) / "majority"
    summary = write_geometry({r.variant: r.record_path for r in runs}, out)
    print(f"normbench: wrote {out / 'geometry_3d.png'}, {out / 'query_angle_histograms.png'} and {out / 'geometry.json'}")
    for variant, s in summary.items():
        print(f"  {variant}: class-query angle to the normal {s['class_query_angle_to_normal_deg']:.1f} deg, "
              f"max |key . normal| {s['max_abs_key_component_along_normal']:.2e}")


def tasks() -> None:
    """List the registered tasks and their config files."""
    for name in task_names():
        t = get_task(name)
        print(f"{name}\t{t.config_path}\t{t.description}")


def sweep_parser() -> argparse.ArgumentParser:
    """Options of ``normbench sweep``; every other ``--section.key value`` is a config override for all runs."""
    p = argparse.ArgumentParser(
        prog="normbench sweep", exit_on_error=False, allow_abbrev=False,
        description="Train a config's variant x grid x seed runs (finished runs are skipped, interrupted ones "
        "resume from their last checkpoint) and write the leaderboard. Any other --section.key VALUE "
        "(e.g. --trainer.max_steps 100, --trainer.strategy ddp --trainer.devices 4) applies to every run.")
    p.add_argument("--config", help="task config, e.g. tasks/majority.yaml")
    p.add_argument("--preset", help="preset of the config (e.g. quick, paper)")
    p.add_argument("--grid", action="append", metavar="AXIS=V1,V2", help="a grid axis, e.g. "
                   "model.attn_norm.component=both,project,scale,none (repeat for more axes)")
    p.add_argument("--seeds", help="e.g. 0-9 or 0,3,5 (default: the config's bench.seeds)")
    p.add_argument("--variants", help="comma-separated named variants of the config (default: all or bench.default_variants)")
    p.add_argument("--workers", type=int, default=1, help="concurrent runs on the CPU (threads are split)")
    p.add_argument("--gpus", help="comma-separated GPU ids: one concurrent run per GPU (or per --gpus_per_run)")
    p.add_argument("--gpus_per_run", type=int, default=1, help="GPUs given to each run (for DDP inside a run)")
    p.add_argument("--shard", help="I/N: run every N-th planned run from the I-th (job arrays); writes no leaderboard")
    p.add_argument("--vectorize", type=int, default=1, metavar="K", help="train K seeds of a variant as one stacked model")
    p.add_argument("--runs_dir", default="runs", help="root of logs, checkpoints and run records")
    p.add_argument("--results_dir", default="results", help="leaderboards go to RESULTS_DIR/<task>/[NAME]")
    p.add_argument("--name", help="leaderboard subdirectory (default: none for the config's own variants, "
                   "sweep-<hash> for a command-line --grid)")
    p.add_argument("--leaderboard", action=argparse.BooleanOptionalAction, default=True, help="write the leaderboard")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True, help="progress bars")
    return p


def sweep(argv: list[str]) -> None:
    """``normbench sweep ...``: parse the sweep's own options, pass the rest to every run."""
    parser = sweep_parser()
    if "-h" in argv or "--help" in argv:
        parser.print_help()
        return
    opts, rest = parser.parse_known_args(argv)
    if not opts.config:
        raise ValueError("config: --config tasks/<task>.yaml is required")
    split = (lambda text: [t.strip() for t in text.split(",") if t.strip()]) 
    gpus = None
    if opts.gpus:
        if not re.fullmatch(r"\d+(,\d+)*", opts.gpus):
            raise ValueError(f"gpus: {opts.gpus!r} must be comma-separated GPU ids, e.g. 0,1,2,3")
        gpus = [int(g) for g in split(opts.gpus)]
    if opts.vectorize < 1:
        raise ValueError(f"vectorize: must be >= 1 seeds per stacked model, got {opts.vectorize}")
    if opts.vectorize > 1 and (opts.workers > 1 or gpus):
        raise ValueError("vectorize: stacks train one after another in this process; drop --workers/--gpus")
    run_sweep(opts.config, opts.preset, opts.grid, opts.seeds, split(opts.variants) if opts.variants else None,
              opts.workers, gpus, opts.gpus_per_run, opts.shard, opts.vectorize, rest, opts.runs_dir,
              opts.results_dir, opts.name, opts.leaderboard, opts.progress)


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "fit":
            # sys.argv stays as it is: DDP re-launches this very command for the other ranks
            print(f"normbench: run record {train(argv[1:])}")
        elif argv and argv[0] == "sweep":
            sweep(argv[1:])
        else:
            auto_cli({"bench": bench, "leaderboard": leaderboard, "random_grid": random_grid, "tasks": tasks,
                      "analyze": {"decompose": decompose, "geometry": geometry}}, args=argv, parser_mode="yaml",
                     description="normbench: normalization ablations in Transformers. "
                     "`normbench fit --config tasks/<task>.yaml [--preset NAME] [--section.key VALUE ...]` "
                     "trains one run (LightningCLI; `normbench fit --help` lists every option); "
                     "`normbench sweep --config tasks/<task>.yaml [--grid AXIS=V1,V2] [--seeds 0-9] ...` "
                     "trains a grid of runs (`normbench sweep --help`); "
                     "the subcommands below run benches, leaderboards and analyses.")
    except (ArgumentError, ValueError, FileNotFoundError, MisconfigurationException) as exc:
        print(f"normbench: error: {one_line(str(exc))}", file=sys.stderr)
        raise SystemExit(2) from None
    except SweepFailed as exc:
        print(f"normbench: error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        print("normbench: interrupted; the same command resumes where this one stopped", file=sys.stderr)
        raise SystemExit(130) from None


if __name__ == "__main__":
    main()
