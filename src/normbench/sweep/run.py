"""Run a sweep: plan its runs, train the unfinished ones on the chosen backend, write its leaderboard.

:func:`run_sweep` goes through the steps: :func:`plan_sweep` (the runs, and where their leaderboard goes:
:mod:`normbench.sweep.folders`), :func:`check_board` (before training: the folder is this sweep's and its published
board can take it), :func:`plan_devices`, :func:`train_runs`, :func:`archive_sweep` and :func:`publish_sweep`. The
leaderboard is written by :func:`normbench.publish.write.write_results`, under its publishing rule.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from normbench.archive.board import SweepDefinition
from normbench.archive.board_keys import board_folder, task_key
from normbench.archive.store import Archive
from normbench.boards.replicates.report import write_report
from normbench.io import Config, check_writable
from normbench.judge import tuned
from normbench.publish import files as publish
from normbench.publish.write import ResultsOptions, RunPlanner, load_finished, write_analyses, write_results
from normbench.sweep.archiving import archive_runs
from normbench.sweep.backends import Outcome, default_workers, execute
from normbench.sweep.device_plan import StackPlan, plan_stacks, seed_step_bytes
from normbench.sweep.folders import check_results_owner, results_folder, sweep_definition, sweep_key
from normbench.sweep.grid import parse_grid
from normbench.sweep.options import SweepOptions
from normbench.sweep.plan import Run, parse_names, plan_runs, quiet_lightning
from normbench.sweep.stacks import execute_vectorized
from normbench.sweep.vectorized.seed_stack import stack_traits
from normbench.tasks import get_task, resolve_config
from normbench.training.config import load_config
from normbench.training.run.records import FINISHED, RESUMABLE, git_state, read_record
from normbench.training.run.rundir import LAST_CHECKPOINT


def planner(runs_dir: str) -> RunPlanner:
    """How a report finds another sweep's runs under ``runs_dir``: :func:`plan_runs`, quietly."""

    def plan(
        task: str, preset: str | None, seeds: list[int] | None, variants: list[str] | None
    ) -> tuple[Config, Sequence[Run]]:
        with quiet_lightning():
            return plan_runs(task, preset, seeds, variants, None, runs_dir)

    return plan


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


@dataclass(frozen=True)
class SweepPlan:
    """A sweep planned (:func:`plan_sweep`): its runs, and where and under which key its leaderboard goes.

    Args:
        task: the task of the config.
        config: the resolved config (its ``preset`` the preset planned, its ``bench`` the board's settings).
        preset: the preset asked for (the config's ``default_preset`` when none was): what names the sweep.
        runs: the planned runs (a shard's only, once :func:`shard_runs` has chosen them).
        folder: the subfolder of ``results/<task>/`` (:func:`~normbench.sweep.folders.results_folder`; ``None``: the
            task's own bench).
        out: the leaderboard's folder.
        definition: what the sweep is, as its command says it (:func:`~normbench.sweep.folders.sweep_definition`).
        key: the 12 hex digits naming ``definition`` (:func:`~normbench.sweep.folders.sweep_key`).
    """

    task: str
    config: Config
    preset: str | None
    runs: list[Run]
    folder: str | None
    out: Path
    definition: SweepDefinition
    key: str


@dataclass(frozen=True)
class Devices:
    """How a sweep's runs train (:func:`plan_devices`).

    Args:
        stack_size: seeds of a variant trained as one stacked model (1: each run alone).
        workers: runs (or stacks) trained at a time.
        gpus: the GPU ids they train on (``None``: the CPU).
        stack_plan: the plan of ``--vectorize auto`` (``None`` otherwise).
    """

    stack_size: int
    workers: int
    gpus: list[int] | None
    stack_plan: StackPlan | None = None


def run_sweep(
    options: SweepOptions, overrides: Sequence[str] = (), *, train: bool = True, dry_run: bool = False
) -> Path | None:
    """Plan, run and report one sweep; returns the leaderboard directory (``None`` without one).

    ``options.config`` is a task's name or a config file; ``options.preset`` defaults to its
    ``default_preset``; ``overrides`` (``--section.key VALUE`` or ``section.key=VALUE``) apply to every run.
    ``workers`` defaults to one run per available CPU core (per GPU group with ``gpus``). ``vectorize``: K seeds
    of a variant trained as one stacked model, ``workers`` stacks at a time; ``auto``: K and the concurrency
    from the devices' memory and the model (:func:`normbench.sweep.device_plan.plan_stacks`).
    Nothing is trained when the leaderboard folder belongs to another sweep, or when its published
    leaderboard has finished runs this sweep does not plan or other settings (``force``: replace it
    anyway); a leaderboard that would lose finished runs after training (failed runs) is not written.
    With ``train=False`` nothing is trained at all (the leaderboard is rebuilt from the records).
    ``dry_run``: plan and check everything, print the runs and where the leaderboard would go, write nothing.
    """
    given = list(overrides) or None
    options.check(given or [])
    plan = plan_sweep(options, given)
    if options.writes_board:  # before training: a clash is an error, not lost compute
        check_board(plan, options)
    plan = dataclasses.replace(plan, runs=shard_runs(plan.runs, options.shard))
    devices = plan_devices(plan.runs, options)
    check_before_training(plan, options, train=train, dry_run=dry_run)
    if dry_run:
        print_dry_run(plan, options, devices)
        return None
    outcome = train_runs(plan, options, devices) if train else Outcome()
    archive = archive_sweep(plan, options, train=train)
    return publish_sweep(plan, options, outcome, archive)


def plan_sweep(options: SweepOptions, overrides: list[str] | None) -> SweepPlan:
    """Plan the sweep's runs (:func:`plan_runs`) and where its leaderboard goes: its folder, its definition, its key.
    A copy of a task's shipped config counts as the task's own."""
    variants = parse_names(options.variants, "variants")
    axes = parse_grid(options.grid)
    preset = options.preset if options.preset is not None else load_config(options.config_path).get("default_preset")
    cfg, runs = plan_runs(
        None, preset, options.seeds, variants, overrides, options.runs_dir, axes,
        config_path=options.config, results_dir=options.results_dir,
    )  # fmt: skip
    task = cfg["task"]
    own = resolve_config(options.config_path)
    custom = None if own.read_bytes() == get_task(task).config_path.read_bytes() else str(own)
    folder = results_folder(cfg, preset, options.seeds, variants, overrides, options.grid, options.name, custom)
    out = board_folder(options.results_dir, task_key(task, folder))
    definition = sweep_definition(preset, runs, overrides, options.grid, custom)
    return SweepPlan(task, cfg, preset, runs, folder, out, definition, sweep_key(definition))


def check_board(plan: SweepPlan, options: SweepOptions) -> None:
    """Before training, one-line errors: the leaderboard folder holds another sweep's board (a named folder, unless
    ``force``), or its published board has finished runs or settings this sweep lacks
    (:func:`normbench.publish.files.check_leaderboard`)."""
    if plan.folder is not None and not options.force:
        check_results_owner(plan.out, plan.key, plan.preset, plan.runs, plan.definition)
    bench = plan.config.get("bench") or {}
    publish.check_leaderboard(
        plan.out,
        {(r.variant, r.seed): r.config_hash for r in plan.runs},
        publish.sweep_settings(plan.task, plan.config.get("preset"), plan.definition),
        options.force,
        planned=True,
        superseded=publish.superseded_configs(tuned.with_rechosen(bench, plan.out / "leaderboard.json")),
    )


def shard_runs(runs: list[Run], shard: str | None) -> list[Run]:
    """The runs of shard ``I/N`` (every N-th from the I-th; all of them without a shard), or a one-line error."""
    if shard is None:
        return runs
    m = re.fullmatch(r"(\d+)/(\d+)", shard)
    if not m or not int(m[1]) < int(m[2]):
        raise ValueError(f"shard: {shard!r} must be I/N with 0 <= I < N, e.g. 3/8")
    return runs[int(m[1]) :: int(m[2])]


def plan_devices(runs: list[Run], options: SweepOptions) -> Devices:
    """Where and how many at a time the runs train: ``--vectorize auto`` planned (:func:`auto_stacks`, on GPU 0 when
    no ``gpus`` are given and CUDA finds one), else ``workers``, by default one per CPU core or per GPU group."""
    workers, gpus, vectorize = options.workers, options.gpu_ids(), options.stack_size()
    stack_plan = None
    if isinstance(vectorize, str):  # "auto"
        if gpus is None and torch.cuda.is_available():  # runs would train on GPU 0: plan for it
            gpus = [0]
        stack_plan = auto_stacks(runs, gpus, workers)
        vectorize, workers = stack_plan.stack_size, stack_plan.workers
    if workers is None:  # follow the machine: one run per CPU core, or per GPU group
        workers = 1 if vectorize > 1 and not gpus else default_workers(gpus, options.gpus_per_run)
    return Devices(vectorize, workers, gpus, stack_plan)


def check_before_training(plan: SweepPlan, options: SweepOptions, *, train: bool, dry_run: bool) -> None:
    """Before training, one-line errors: runs trained now could not be published (this checkout has uncommitted
    changes and the board publishes), or an output folder is not writable (found at the end, it loses the compute)."""
    publishing = train and options.writes_board and not dry_run and not options.publishes_uncommitted
    if publishing and publish.publishes(plan.out) and git_state().get("dirty") is not False:
        raise publish.Refused(
            f"results_dir: this checkout has uncommitted changes, so runs trained now cannot be published in "
            f"{plan.out}; commit first, or {publish.ALLOW_UNCOMMITTED} marked as {publish.UNCOMMITTED}"
        )
    if train:
        check_writable(options.runs_dir, "runs_dir")
    if options.writes_board:
        check_writable(plan.out, "results_dir")


def print_dry_run(plan: SweepPlan, options: SweepOptions, devices: Devices) -> None:
    """What the sweep would do (:func:`print_plan`), and how its seeds would be stacked."""
    out = plan.out if options.writes_board else None
    print_plan(plan.runs, plan.task, plan.config.get("preset"), out, devices.workers)
    if devices.stack_plan is not None:
        print(f"normbench: vectorize auto: {devices.stack_plan.describe()}")
    elif devices.stack_size > 1:
        print(f"normbench: stacks of up to {devices.stack_size} seeds of a variant, {devices.workers} at a time")


def train_runs(plan: SweepPlan, options: SweepOptions, devices: Devices) -> Outcome:
    """Train the unfinished runs (seeds stacked where ``devices`` says so); a sweep that writes no board computes its
    finished runs' analyses now, while the weights are at hand."""
    if devices.stack_size > 1:
        outcome = execute_vectorized(
            plan.runs, devices.stack_size, progress=options.progress, workers=devices.workers, gpus=devices.gpus
        )
    else:
        outcome = execute(
            plan.runs, workers=devices.workers, progress=options.progress, gpus=devices.gpus,
            gpus_per_run=options.gpus_per_run,
        )  # fmt: skip
    if not options.writes_board:
        write_analyses(plan.task, plan.config.get("preset"), plan.config, plan.runs)
    return outcome


def archive_sweep(plan: SweepPlan, options: SweepOptions, *, train: bool) -> Archive | None:
    """The run archive (``None`` without ``options.archive``); a sweep that trained and publishes its board adds its
    runs to it, and when it added one, the report of this machine's replicates is written again."""
    archive = Archive(options.results_dir) if options.archive else None
    if archive is not None and train and options.writes_board:
        if archive_runs(archive, plan.runs, uncommitted=options.publishes_uncommitted).get("added"):
            write_report(options.results_dir)  # the drift between this machine's replicates and the published values
    return archive


def failure_line(outcome: Outcome, planned: int) -> str | None:
    """The line that says how many of the ``planned`` runs failed or were interrupted (``None``: none)."""
    if not outcome.failed:
        return None
    failed = len(outcome.failed)
    stopped = sum(why.startswith("interrupted") for _, why in outcome.failed)  # e.g. at a bake's deadline
    if not stopped:
        return f"runs: {failed} of {planned} failed; their records say why, and the same command retries them"
    return (
        f"runs: {failed} of {planned} did not finish ({stopped} interrupted, {failed - stopped} failed); their records "
        "say why, and the same command resumes or retries them"
    )


def publish_sweep(plan: SweepPlan, options: SweepOptions, outcome: Outcome, archive: Archive | None) -> Path | None:
    """Write the leaderboard (:func:`write_results`) where the sweep writes one and has finished runs to show;
    returns its folder. Failed runs end in :class:`SweepFailed`, after the board is written (a refused board and the
    failures are one error, the failures first)."""
    failed = failure_line(outcome, len(plan.runs))
    if not options.writes_board:
        if failed:
            raise SweepFailed(failed)
        return None
    if (failed or outcome.busy) and not load_finished(plan.runs):
        if failed:  # the failures are the news, not the missing leaderboard
            raise SweepFailed(failed)
        print(
            f"normbench: no leaderboard: {len(outcome.busy)} runs are being trained by another process; "
            f"the same command writes it once they are finished",
            file=sys.stderr,
        )
        return None
    written = ResultsOptions(
        plan.task, plan.config.get("preset"), plan.config, planner(options.runs_dir), sweep=plan.key,
        definition=plan.definition, force=options.force, uncommitted=options.publishes_uncommitted, archive=archive,
    )  # fmt: skip
    try:
        write_results(plan.runs, plan.out, written)
    except publish.Refused as exc:
        if failed:  # the failures are the news; the published leaderboard stays as it is
            raise SweepFailed(f"{failed}; {exc}") from None
        raise
    if failed:
        raise SweepFailed(failed)
    return plan.out


def auto_stacks(runs: list[Run], gpus: list[int] | None, workers: int | None) -> StackPlan:
    """``--vectorize auto``: the stack plan for ``runs`` on ``gpus`` (or the CPU's cores, or ``workers``)."""
    if not runs:
        raise ValueError("vectorize: auto needs runs to plan")
    per_variant: dict[str, int] = {}
    for run in runs:
        per_variant[run.variant] = per_variant.get(run.variant, 0) + 1
    config = runs[0].config
    batch, stackable = stack_traits(config)
    return plan_stacks(
        max(per_variant.values()),
        len(per_variant),
        seed_step_bytes(config),
        gpus,
        batch_size=batch or 1,
        cpu_workers=workers or default_workers(gpus),
        stackable=stackable,
    )
