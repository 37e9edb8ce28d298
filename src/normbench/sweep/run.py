"""Run a sweep: plan its runs, train the unfinished ones on the chosen backend, write its leaderboard.

Only a task's own bench (its ``default_preset``, default seeds and variants, no overrides, no
grid) writes ``results/<task>/``. Every other sweep writes ``results/<task>/<name>/``, ``name``
given with ``--name`` or derived from what differs; a named folder keeps the key of the sweep
that wrote it, and a different sweep never replaces it (:func:`results_folder`). The leaderboard is
written by :func:`normbench.publish.write.write_results`, under its publishing rule.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from normbench.archive import BoardError, load_board
from normbench.archive.store import Archive
from normbench.boards.replicates import write_report
from normbench.io import check_writable
from normbench.judge import tuned
from normbench.publish import files as publish
from normbench.publish.write import RunPlanner, load_finished, write_analyses, write_results
from normbench.sweep.archiving import archive_runs
from normbench.sweep.backends import Outcome, default_workers, execute
from normbench.sweep.device_plan import StackPlan, plan_stacks, seed_step_bytes
from normbench.sweep.options import SweepOptions
from normbench.sweep.plan import Run, parse_grid, parse_names, parse_seeds, plan_runs, quiet_lightning
from normbench.sweep.stacks import execute_vectorized
from normbench.sweep.vectorized import stack_traits
from normbench.tasks import get_task, resolve_config
from normbench.training.config import load_config
from normbench.training.records import FINISHED, RESUMABLE, git_state, read_record
from normbench.training.rundir import LAST_CHECKPOINT


def planner(runs_dir: str) -> RunPlanner:
    """How a report finds another sweep's runs under ``runs_dir``: :func:`plan_runs`, quietly."""

    def plan(
        task: str, preset: str | None, seeds: list[int] | None, variants: list[str] | None
    ) -> tuple[dict[str, Any], Sequence[Run]]:
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


def sweep_definition(
    preset: str | None, runs: list[Run], overrides: list[str] | None, grid: list[str] | None, config_file: str | None
) -> dict[str, Any]:
    """What a sweep is, as its command says it: preset, variants, seeds, overrides, grid, config file.

    Independent of the code's run keys, so the same command keeps owning its folder across versions. A sweep judged
    at tuned values (``bench.tuned``) names its base variants, as its command does: its points move whenever the
    choice board chooses again (its grid grew), and it stays the same sweep.
    """
    at_tuned = judged_at_tuned_values(runs)
    return {
        "preset": preset,
        "variants": list(dict.fromkeys(r.variant.split(",")[0] if at_tuned else r.variant for r in runs)),
        "seeds": sorted({r.seed for r in runs}),
        "overrides": list(overrides or []),
        "grid": list(grid or []),
        "config_file": Path(config_file).name if config_file else None,
    }


def judged_at_tuned_values(runs: list[Run]) -> bool:
    """Whether the runs are a sweep whose config chooses its points on a choice board (``bench.tuned``)."""
    return any((r.config.get("bench") or {}).get("tuned") for r in runs)


def named_by_points(old: Any, definition: dict[str, Any] | None) -> bool:
    """Whether ``old``, a tuned board's sweep definition written when such boards were named by their points
    (``pre/scale,lr=0.006``), is ``definition`` once its points are reduced to their base variants."""
    if not isinstance(old, dict) or definition is None:
        return False
    bases = list(dict.fromkeys(str(v).split(",")[0] for v in old.get("variants") or []))
    return {**old, "variants": bases} == definition


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


def grows(doc: dict, preset: str | None, runs: list[Run]) -> bool:
    """Whether this sweep is the board's own with more seeds or variants: same preset, and every run the board shows
    (variant, seed, config hash) is one this sweep plans (the bake adds seeds to a published board this way), or one
    of a variant it no longer plans whose config hash its config declares superseded (:func:`publish.dropped`)."""
    superseded = publish.superseded_configs(runs[0].config.get("bench") or {}) if runs else False
    kept = {r.variant for r in runs}
    shown = {
        (v["name"], int(s), str(v.get("config_hash")))
        for v in doc.get("variants", [])
        for s in v.get("seeds", [])
        if not publish.dropped((v["name"], int(s)), v.get("config_hash"), kept, superseded)
    }
    planned = {(r.variant, int(r.seed), str(r.config_hash)) for r in runs}
    return doc.get("preset") == preset and bool(shown) and shown <= planned


def check_results_owner(
    out: Path, key: str, preset: str | None, runs: list[Run], definition: dict[str, Any] | None = None
) -> None:
    """One-line error when ``out`` holds the leaderboard of another sweep (its ``sweep_key`` differs and it is not
    this sweep's board with fewer seeds or variants: :func:`grows`, nor this tuned sweep's board named by the points
    it chose then: :func:`named_by_points`).

    A leaderboard written before sweeps had a definition (no ``sweep`` block) belongs to this sweep
    when its preset, variants and seeds are this sweep's.
    """
    board = out / "leaderboard.json"
    if not board.is_file():
        return
    try:
        doc = load_board(board).to_json()
    except (OSError, BoardError) as exc:
        why = getattr(exc, "reason", exc)
        raise ValueError(f"name: {board} is unreadable ({why}); choose another --name, or {publish.FORCE}") from exc
    owner = doc.get("sweep_key")
    if "sweep" not in doc:
        planned = {(r.variant, r.seed) for r in runs}
        published = {(v["name"], s) for v in doc.get("variants", []) for s in v.get("seeds", [])}
        if doc.get("preset") == preset and planned == published:
            return
    elif owner == key or grows(doc, preset, runs):
        return
    elif judged_at_tuned_values(runs) and named_by_points(doc.get("sweep"), definition):
        return
    raise publish.Refused(
        f"name: {out} holds the leaderboard of another sweep (key {owner}, this one {key}); "
        f"choose another --name, or {publish.FORCE}"
    )


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
    overrides = list(overrides) or None
    options.check(overrides or [])
    config, preset, grid, seeds = options.config, options.preset, options.grid, options.seeds
    variants = parse_names(options.variants, "variants")
    workers, gpus, gpus_per_run, shard = options.workers, options.gpu_ids(), options.gpus_per_run, options.shard
    vectorize = options.stack_size()
    runs_dir, results_dir, name, force = options.runs_dir, options.results_dir, options.name, options.force
    leaderboard, progress = options.leaderboard, options.progress
    uncommitted = force or options.uncommitted  # runs trained from uncommitted code may be archived and shown
    axes = parse_grid(grid)
    if preset is None:
        preset = load_config(config).get("default_preset")
    cfg, runs = plan_runs(
        None, preset, seeds, variants, overrides, runs_dir, axes, config_path=config, results_dir=results_dir
    )
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
            check_results_owner(out, key, preset, runs, definition)
        publish.check_leaderboard(
            out,
            {(r.variant, r.seed): r.config_hash for r in runs},
            publish.sweep_settings(task, cfg.get("preset"), definition),
            force,
            planned=True,
            superseded=publish.superseded_configs(
                tuned.with_rechosen(cfg.get("bench") or {}, out / "leaderboard.json")
            ),
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
    if train and leaderboard and shard is None and not dry_run and not uncommitted and publish.publishes(out):
        if git_state().get("dirty") is not False:  # its runs could not be published: say so before training them
            raise publish.Refused(
                f"results_dir: this checkout has uncommitted changes, so runs trained now cannot be published in "
                f"{out}; commit first, or {publish.ALLOW_UNCOMMITTED} marked as {publish.UNCOMMITTED}"
            )
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
    if train and not (leaderboard and shard is None):  # no board here: analyse while the weights are at hand
        write_analyses(task, cfg.get("preset"), cfg, runs)
    archive = Archive(results_dir) if options.archive else None
    # a sweep that publishes (its leaderboard) adds its runs to the archive beside the boards
    if (
        archive is not None
        and train
        and leaderboard
        and shard is None
        and archive_runs(archive, runs, uncommitted=uncommitted).get("added")
    ):
        write_report(results_dir)  # the drift between this machine's replicates and the published values
    written = None
    stopped = sum(why.startswith("interrupted") for _, why in outcome.failed)  # e.g. at a bake's deadline
    failed = (
        (f"runs: {len(outcome.failed)} of {len(runs)} failed; their records say why, and the same command retries them")
        if outcome.failed and not stopped
        else (
            f"runs: {len(outcome.failed)} of {len(runs)} did not finish ({stopped} interrupted, "
            f"{len(outcome.failed) - stopped} failed); their records say why, and the same command resumes or retries "
            "them"
        )
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
                task,
                cfg.get("preset"),
                cfg,
                runs,
                out,
                planner(runs_dir),
                sweep=key,
                definition=definition,
                force=force,
                uncommitted=uncommitted,
                archive=archive,
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
