"""The ``normbench`` command.

* ``normbench fit --config <task or file> [--preset quick] [--model.arch.attn_norm.component project] ...``
  trains one run (LightningCLI: any ``--trainer.*`` option passes through).
* ``normbench sweep --config <task or file> [--preset quick] [--grid AXIS=V1,V2] [--seeds 0-9]
  [--workers N | --gpus 0,1 | --shard I/N | --vectorize K] [--section.key VALUE ...]`` trains a
  variant x grid x seed sweep (finished runs skipped, interrupted ones resumed) and writes its leaderboard.
* ``normbench bench <task> [--preset quick] [--workers 2]``: the task's own sweep (shorthand).
* ``normbench leaderboard <task> [--preset quick]`` rebuilds a sweep's leaderboard from the records.
* ``normbench rejudge results/<task>[/<name>]`` judges a published board's claims again from its per-seed values.
* ``normbench compare <task> A B [--name NAME]`` prints two variants' metrics, the difference and its interval.
* ``normbench cite <task> [--name NAME]`` prints BibTeX naming the commit that contains the leaderboard.
* ``normbench analyze decompose|geometry ...`` analyses trained runs.
* ``normbench random_grid`` runs the random-key experiment (Figure 1c/1d) into ``results/unselectable/``.
* ``normbench tasks`` lists the registered tasks.

Every command takes ``--dry_run``: arguments checked (a sweep's runs planned), nothing trained or written,
and ``--verbose``: Lightning's device banners and tips too (normbench prints only its own lines otherwise).

Every command that writes under ``results/`` (sweep, bench, leaderboard, random_grid, analyze geometry)
replaces a published board only with a build that covers its finished runs and its settings; otherwise
it writes nothing and says so in one line, and ``--force`` replaces the board anyway.

Bad input ends with one line ``normbench: error: <field>: <what is allowed>`` and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from argparse import ArgumentError
from typing import Any

from jsonargparse import auto_cli, auto_parser
from lightning.fabric.utilities.exceptions import MisconfigurationException

from normbench import results
from normbench.errors import one_line
from normbench.io import VERBOSE_ENV, quiet_third_party
from normbench.reporting.pipeline import (
    SweepFailed,
    bench,
    decompose,
    geometry,
    leaderboard,
    random_grid,
    rejudge,
    run_sweep,
)
from normbench.sweep.plan import parse_names
from normbench.tasks import get_task, task_names
from normbench.training.cli import NormbenchCLI, train
from normbench.training.config import preset_args
from normbench.training.runlock import BUSY_STATUS, RunBusy


def tasks() -> None:
    """List the registered tasks and their config files."""
    for name in task_names():
        t = get_task(name)
        print(f"{name}\t{t.config_path}\t{t.description}")


def sweep_parser() -> argparse.ArgumentParser:
    """Options of ``normbench sweep``; every other ``--section.key value`` is a config override for all runs."""
    p = argparse.ArgumentParser(
        prog="normbench sweep",
        exit_on_error=False,
        allow_abbrev=False,
        description="Train a config's variant x grid x seed runs (finished runs are skipped, interrupted ones "
        "resume from their last checkpoint) and write the leaderboard. Any other --section.key VALUE "
        "(e.g. --trainer.max_steps 100, --trainer.strategy ddp --trainer.devices 4) applies to every run.",
    )
    p.add_argument("--config", help="a registered task's name (e.g. majority) or a task config file")
    p.add_argument("--preset", help="preset of the config (e.g. quick, paper; default: its default_preset)")
    p.add_argument(
        "--grid",
        action="append",
        metavar="AXIS=V1,V2",
        help="a grid axis, e.g. model.arch.attn_norm.component=both,project,scale,none (repeat for more axes)",
    )
    p.add_argument("--seeds", help="e.g. 0-9 or 0,3,5 (default: the config's bench.seeds)")
    p.add_argument(
        "--variants", help="named variants of the config, a,b or '[a, b]' (default: bench.default_variants, else all)"
    )
    p.add_argument(
        "--workers",
        type=int,
        help="concurrent runs on the CPU, threads split between them (default: one "
        "per available CPU core; with --gpus one per GPU group; with --vectorize 1)",
    )
    p.add_argument("--gpus", help="comma-separated GPU ids: one concurrent run per GPU (or per --gpus_per_run)")
    p.add_argument("--gpus_per_run", type=int, default=1, help="GPUs given to each run (for DDP inside a run)")
    p.add_argument("--shard", help="I/N: run every N-th planned run from the I-th (job arrays); writes no leaderboard")
    p.add_argument(
        "--vectorize",
        default="1",
        metavar="K",
        help="train K seeds of a variant as one stacked model, "
        "--workers (or one per GPU of --gpus) stacks at a time; auto: K and the stacks per GPU from the "
        "devices' memory and the model (the plan is printed with --dry_run)",
    )
    p.add_argument("--runs_dir", default="runs", help="root of logs, checkpoints and run records")
    p.add_argument("--results_dir", default="results", help="leaderboards go to RESULTS_DIR/<task>/[NAME]")
    p.add_argument(
        "--name",
        help="leaderboard subfolder (default: none for the task's own bench, the preset's "
        "name when only the preset differs, else <preset>-<hash of what differs>)",
    )
    p.add_argument("--leaderboard", action=argparse.BooleanOptionalAction, default=True, help="write the leaderboard")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=True, help="progress bars")
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the published leaderboard even when this sweep "
        "lacks some of its finished runs or settings (refused by default, before anything trains)",
    )
    return p


def sweep(argv: list[str], dry_run: bool = False) -> None:
    """``normbench sweep ...``: parse the sweep's own options, pass the rest to every run."""
    parser = sweep_parser()
    if "-h" in argv or "--help" in argv:
        parser.print_help()
        return
    opts, rest = parser.parse_known_args(argv)
    if not opts.config:
        raise ValueError("config: --config <task or file> is required (e.g. --config majority)")
    gpus = None
    if opts.gpus:
        if not re.fullmatch(r"\d+(,\d+)*", opts.gpus):
            raise ValueError(f"gpus: {opts.gpus!r} must be comma-separated GPU ids, e.g. 0,1,2,3")
        gpus = [int(g) for g in opts.gpus.split(",")]
    vectorize: int | str = opts.vectorize
    if vectorize != "auto":
        if not re.fullmatch(r"\d+", vectorize) or int(vectorize) < 1:
            raise ValueError(f"vectorize: {vectorize!r} is not allowed; give K >= 1 seeds per stacked model, or auto")
        vectorize = int(vectorize)
    if opts.workers is not None and opts.workers < 1:
        raise ValueError(f"workers: must be >= 1, got {opts.workers}")
    if vectorize != 1 and any(a == "--compile" or a.startswith("--compile=") for a in rest):
        raise ValueError("compile: stacked seeds train uncompiled; drop --compile or use --vectorize 1")
    if vectorize != 1 and opts.gpus_per_run != 1:
        raise ValueError("gpus_per_run: a stack of seeds trains on one GPU; drop --gpus_per_run with --vectorize")
    run_sweep(
        opts.config,
        opts.preset,
        opts.grid,
        opts.seeds,
        parse_names(opts.variants, "variants"),
        opts.workers,
        gpus,
        opts.gpus_per_run,
        opts.shard,
        vectorize,
        rest,
        opts.runs_dir,
        opts.results_dir,
        opts.name,
        opts.leaderboard,
        opts.progress,
        dry_run=dry_run,
        force=opts.force,
    )


def compare(
    task: str, a: str, b: str, name: str | None = None, results_dir: str = "results", metrics: list[str] | None = None
) -> None:
    """Two variants of a leaderboard side by side: each metric's mean ± std over seeds, the difference b - a,
    its 95% Welch interval and p-value (e.g. `normbench compare majority pre/both pre/scale`).

    Args:
        task: a task (its own bench), a <task>/<name> key, or a path to a leaderboard.json or its folder.
        a: the reference variant.
        b: the variant compared with it.
        name: a sub-leaderboard of the task (e.g. modern for results/majority/modern/).
        results_dir: the folder holding <task>/leaderboard.json.
        metrics: only these metrics (default: all).
    """
    table = results.compare(task, a, b, name=name, results_dir=results_dir, metrics=metrics)
    print(results.format_comparison(table, a, b))


def cite(task: str, name: str | None = None, results_dir: str = "results") -> None:
    """BibTeX for one leaderboard, naming the commit that contains it (e.g. `normbench cite majority`).

    Args:
        task: a task (its own bench), a <task>/<name> key, or a path to a leaderboard.json or its folder.
        name: a sub-leaderboard of the task (e.g. width for results/lm/width/).
        results_dir: the folder holding <task>/leaderboard.json.
    """
    print(results.citation(task, name=name, results_dir=results_dir))


# every subcommand, with the one line `normbench --help` shows for it
COMMANDS: dict[str, str] = {
    "fit": "train one run (LightningCLI: `normbench fit --config <task> [--preset NAME] [--section.key VALUE ...]`)",
    "sweep": "train a variant x grid x seed sweep and write its leaderboard (`normbench sweep --help`)",
    "bench": "a task's own sweep: `normbench bench <task> [--preset quick]`",
    "leaderboard": "rebuild a sweep's leaderboard from its run records (nothing is trained)",
    "rejudge": "judge a published leaderboard's claims again from the per-seed values it holds",
    "compare": "two variants of a leaderboard side by side, with the difference and its interval",
    "cite": "BibTeX for a leaderboard, naming the commit that contains it",
    "analyze": "analyses of trained runs: `analyze decompose` (Mickus et al.), `analyze geometry` (d = 3 pictures)",
    "random_grid": "Figure 1c/1d: unselectable keys among random keys, raw and after LayerNorm",
    "tasks": "list the registered tasks and their config files",
}
FUNCTIONS: dict[str, Any] = {
    "bench": bench,
    "leaderboard": leaderboard,
    "rejudge": rejudge,
    "compare": compare,
    "cite": cite,
    "random_grid": random_grid,
    "tasks": tasks,
    "analyze": {"decompose": decompose, "geometry": geometry},
}
BARE_FLAGS = ("--force",)  # boolean options also given bare, as `normbench sweep` takes them
DRY_RUN = "--dry_run"
VERBOSE = "--verbose"
DRY_RUN_ENV = "NORMBENCH_DRY_RUN"  # =1: every normbench command is a dry run (e.g. under a nox session)
READ_ONLY = ("compare", "cite", "tasks")  # they write nothing: a dry run runs them


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [
        "usage: normbench <command> [options]   (`normbench <command> --help` for its options)",
        "",
        "normbench: normalization ablations in Transformers.",
        "",
        "commands:",
    ]
    lines += [f"  {name:<{width}}  {text}" for name, text in COMMANDS.items()]
    lines += [
        "",
        f"Any command takes {DRY_RUN} (or {DRY_RUN_ENV}=1 in the environment): check the arguments (and plan",
        "a sweep's runs), train and write nothing; compare, cite and tasks, which write nothing, run.",
        f"Any command takes {VERBOSE} (or {VERBOSE_ENV}=1): Lightning's device banners and tips as well.",
        "Bad input ends with one line `normbench: error: <field>: <what is allowed>` and exit status 2.",
    ]
    return "\n".join(lines)


def bare_flags(argv: list[str]) -> list[str]:
    """``--force`` alone (last, or before another option) as ``--force=true``, for the function commands."""
    return [
        f"{a}=true" if a in BARE_FLAGS and (i + 1 == len(argv) or argv[i + 1].startswith("-")) else a
        for i, a in enumerate(argv)
    ]


def dry_fit(args: list[str]) -> None:
    """``normbench fit ... --dry_run``: parse and build the run (model, data module, trainer), print where it goes."""
    cli = NormbenchCLI(args=preset_args(args))
    print(
        f"normbench: dry run: {cli.recorder.meta['variant']} seed {cli.recorder.meta['seed']} -> {cli.run_dir} "
        f"(config {cli.config_hash})"
    )


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if VERBOSE in argv:  # third-party banners and tips too, here and in every subprocess
        argv = [a for a in argv if a != VERBOSE]
        os.environ[VERBOSE_ENV] = "1"
    quiet_third_party()
    dry = DRY_RUN in argv or os.environ.get(DRY_RUN_ENV) == "1"
    argv = [a for a in argv if a != DRY_RUN]
    if argv and argv[0] in FUNCTIONS:
        argv = bare_flags(argv)
    try:
        if not argv or argv[0] in ("-h", "--help"):
            print(usage())
        elif argv[0] == "fit":
            # sys.argv stays as it is: DDP re-launches this very command for the other ranks
            if dry:
                dry_fit(argv[1:])
            else:
                try:
                    print(f"normbench: run record {train(argv[1:])}")
                except RunBusy as exc:  # not an error: the other process trains the run
                    print(f"normbench: {exc}", file=sys.stderr)
                    raise SystemExit(BUSY_STATUS) from None
        elif argv[0] == "sweep":
            sweep(argv[1:], dry_run=dry)
        elif argv[0] not in COMMANDS:
            raise ValueError(f"command: {argv[0]!r} is not a normbench command; choose one of {', '.join(COMMANDS)}")
        elif dry and argv[0] not in READ_ONLY:
            if argv[0] == "bench":
                auto_cli(FUNCTIONS, args=[*argv, "--dry_run=true"], parser_mode="yaml")
            else:
                auto_parser(FUNCTIONS, parser_mode="yaml", exit_on_error=False).parse_args(argv)
                print(f"normbench: dry run: `normbench {' '.join(argv)}` is valid")
        else:
            auto_cli(FUNCTIONS, args=argv, parser_mode="yaml", description=usage())
    except (ArgumentError, ValueError, FileNotFoundError, MisconfigurationException) as exc:
        print(f"normbench: error: {one_line(str(exc))}", file=sys.stderr)
        raise SystemExit(2) from None
    except SweepFailed as exc:
        print(f"normbench: error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        print("normbench: interrupted; the same command resumes where this one stopped", file=sys.stderr)
        raise SystemExit(130) from None
    except BrokenPipeError:  # e.g. `normbench --help | head`: the reader left; no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
