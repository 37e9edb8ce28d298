"""The ``normbench`` command.

* ``normbench fit --config tasks/<task>.yaml [--preset quick] [--model.attn_norm.component project] ...``
  trains one run (LightningCLI: any ``--trainer.*`` option passes through).
* ``normbench bench <task> [--preset quick] [--workers 2]`` trains the task's variant x seed grid,
  skipping finished runs, and writes ``results/<task>/`` (leaderboard and figures).
* ``normbench leaderboard <task> [--preset quick]`` rebuilds ``results/<task>/`` from the records.
* ``normbench random_grid`` runs the random-key experiment (Figure 1c/1d) into ``results/unselectable/``.
* ``normbench tasks`` lists the registered tasks.

Bad input ends with one line ``normbench: error: <field>: <what is allowed>`` and exit status 2.
"""

from __future__ import annotations

import re
import sys
from argparse import ArgumentError
from pathlib import Path

from jsonargparse import auto_cli
from lightning.fabric.utilities.exceptions import MisconfigurationException

from normbench import leaderboard as lb
from normbench.plots import plot_series
from normbench.sweep import execute, plan_runs
from normbench.tasks import get_task, task_names
from normbench.training import train

ALLOWED = re.compile(r"Expected a typing\.Literal\[(?P<allowed>[^\]]*)\]\. Got value: (?P<got>.*)")
KEY = re.compile(r'Parser key "(?P<key>[^"]+)"')


def one_line(message: str) -> str:
    """Condense a (possibly nested, multi-line) parser error into ``field: problem``."""
    keys = [k for k in KEY.findall(message)]
    field = ".".join(dict.fromkeys(keys))
    if m := ALLOWED.search(message):
        allowed = ", ".join(a.strip(" '\"") for a in m["allowed"].split(","))
        return f"{field}: {m['got'].strip()!r} is not allowed; choose one of {allowed}"
    errors = [ln.strip()[2:] for ln in message.splitlines()
              if ln.strip().startswith("- ") and "NoneType" not in ln and "Problem with given class_path" not in ln]
    if errors:
        return errors[0] if not field or errors[0].startswith(field.split(".")[0]) else f"{field}: {errors[0]}"
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    detail = next((ln for ln in lines[1:] if "Expected" in ln or "Got value" in ln), "")
    return " ".join(filter(None, [lines[0] if lines else message, detail]))


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
    config, runs = plan_runs(task, preset, seeds, variants, override, runs_dir)
    if workers < 1:
        raise ValueError(f"workers: must be >= 1, got {workers}")
    execute(runs, workers=workers, progress=progress)
    write_results(task, preset, config, [r.record_path for r in runs], results_dir, runs_dir)


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
    write_results(task, preset, config, [r.record_path for r in runs], results_dir, runs_dir)


def write_results(task: str, preset: str, config: dict, record_paths: list[Path], results_dir: str,
                  runs_dir: str = "runs") -> None:
    records = lb.load_records(record_paths)
    missing = len(record_paths) - len(records)
    if not records:
        raise ValueError(f"runs_dir: no run records found for task {task} (preset {preset}); run `normbench bench {task}` first")
    bench_cfg = config.get("bench") or {}
    board = lb.build(task, preset, records, bench_cfg, list((bench_cfg.get("variants") or {})))
    out = Path(results_dir) / task
    by_variant = lb.group_by_variant(records)
    plots = [str(plot_series(by_variant, spec, out / name)) for name, spec in (bench_cfg.get("plots") or {}).items()]
    json_path, md_path = lb.write(board, out, plots)
    note = f" ({missing} planned runs have no record yet)" if missing else ""
    print(f"normbench: wrote {md_path} and {json_path}{note}")
    for claim in board["claims"]:
        print(f"  {claim['id']}: {claim['verdict']}")
    report = get_task(task).report
    if report is not None:
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


def tasks() -> None:
    """List the registered tasks and their config files."""
    for name in task_names():
        t = get_task(name)
        print(f"{name}\t{t.config_path}\t{t.description}")


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "fit":
            # sys.argv stays as it is: DDP re-launches this very command for the other ranks
            print(f"normbench: run record {train(argv[1:])}")
        else:
            auto_cli([bench, leaderboard, random_grid, tasks], args=argv, parser_mode="yaml",
                     description="normbench: normalization ablations in Transformers. "
                     "`normbench fit --config tasks/<task>.yaml [--preset NAME] [--section.key VALUE ...]` "
                     "trains one run (LightningCLI; `normbench fit --help` lists every option); "
                     "the subcommands below run grids, leaderboards and analyses.")
    except (ArgumentError, ValueError, FileNotFoundError, MisconfigurationException) as exc:
        print(f"normbench: error: {one_line(str(exc))}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
