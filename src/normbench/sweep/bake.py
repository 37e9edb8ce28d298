"""Bakes: work through a queue of wanted runs under a time budget, on whatever machine this is.

The queue (``queues/bake.yaml``) lists, in priority order, the runs the published boards want: a board
(``results/<board>/``, its key: :mod:`normbench.archive.board_keys`), its task, preset, variants and seeds. :func:`bake`
skips what the run archive already holds finished, continues unfinished runs from their archived checkpoints, trains the
rest in order, and at the deadline stops every run it started: each saves its checkpoint
(:mod:`normbench.training.stopping.deadline`) and goes into the archive unfinished, so the next bake, on this machine or
another, continues it. A run still going halfway through the budget's reserve (past its last training step: its tests
and analyses) is stopped then, so the bake ends within its budget. Finished runs go into the archive as replicates of
this platform. Then the boards whose runs changed are rebuilt from the archive (an unfinished run is a row, "step k of
N"). A bake runs at low CPU priority by default (``nice``), so it can train in the background.

Each run is its own ``normbench sweep`` subprocess of one run, with its own share of the CPU cores (its affinity), or
of the GPUs; a new run starts only while at least ``MIN_SLOT_S`` seconds of the budget are left. A bake on the CPU
stacks the seeds of a variant where that pays (:func:`~normbench.sweep.baking.launch.stacking_pays`):
they train as one subprocess of stacked seeds (:mod:`normbench.sweep.vectorized`), and a seed its stack could not train
is trained alone. With a budget a stack is launched only where it is expected to end in the time left (a stack keeps
no checkpoint before its end); otherwise its seeds train one by one, each checkpointed at the deadline.

The queue and where its runs stand are :mod:`normbench.sweep.baking.queue`; launching and watching the runs is
:mod:`normbench.sweep.baking.launch`. :func:`bake` goes through the steps: :func:`survey_queue`, archiving the runs
finished here, :func:`~normbench.sweep.baking.launch.train_queue`, :func:`boards_held`, :func:`rebuild_boards`,
:func:`report_bake`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from normbench.archive.board_keys import board_folder
from normbench.archive.store import Archive
from normbench.boards.replicates.report import write_report
from normbench.io import atomic_write_text
from normbench.judge.tuned import ChoiceNotReady
from normbench.publish.files import Refused
from normbench.sweep.backends import available_cpus
from normbench.sweep.baking.estimate import CostScale, estimate, estimate_lines, waiting_runs
from normbench.sweep.baking.fits import RunTimes
from normbench.sweep.baking.launch import BakeState, plan_schedule, train_or_stop
from normbench.sweep.baking.progress import BakeProgress
from normbench.sweep.baking.queue import (
    BakeReport,
    QueueItem,
    Slot,
    Waiting,
    archive_finished_here,
    count_trained,
    in_queue_order,
    load_queue,
    survey,
    training_order,
)
from normbench.sweep.options import BakeOptions, SweepOptions
from normbench.training.monitoring.progress import progress_interval

QUEUE = "queues/bake.yaml"
TOKEN_TASKS = ("lm", "sst2")  # tasks whose runs the sst2 token report (Tables 3-4) reads


def bake(
    queue: str = QUEUE,
    options: BakeOptions | None = None,
    *,
    dry_run: bool = False,
    cost_scale: CostScale | None = None,
) -> BakeReport:
    """Train the queue's runs in priority order within ``options.budget`` minutes (``None``: until the queue is done).

    Args:
        queue: the queue file (YAML: ``queue:`` a list of ``board``, ``task``, ``preset``, ``variants``, ``seeds``).
        options: how the runs train (:class:`~normbench.sweep.options.BakeOptions`: the budget, at whose end every
            started run is checkpointed and archived unfinished and the boards are rebuilt; the GPUs, the concurrent
            runs, the CPU priority, where runs train, the results root, whether runs trained from uncommitted
            code are archived and shown; ``train`` false: train nothing, rebuild every queued board that has a run
            held; ``pages`` false: leave the norm leaderboard and the docs pages as they are).
        dry_run: print where each queued run stands and what would train; train nothing.
        cost_scale: a factor on the dry run's time estimate of a run whose config the archive has never timed
            (:func:`normbench.sweep.baking.estimate.estimate`; a card's: its norm's measured speed).
    """
    options = options or BakeOptions()
    options.check()
    train = options.train
    gpu_ids = options.planned_gpu_ids() if dry_run else options.gpu_ids()
    start = time.time()
    state = survey_queue(queue, options, restore=not dry_run)
    workers = options.workers or (4 * len(gpu_ids) if gpu_ids else available_cpus())
    if dry_run:
        print_dry_run(state, workers, "gpu" if gpu_ids else "cpu", train=train, scale=cost_scale)
        return state.report
    changed = archive_finished_here(
        [s for s in state.slots if s.state == "finished here"], state.archive, state.report, options.uncommitted
    )
    if options.nice:
        os.nice(options.nice)
    schedule = plan_schedule(options.budget, start, workers, gpu_ids)
    state.times = RunTimes(state.archive, "gpu" if gpu_ids else "cpu")
    state.progress = BakeProgress(state.times, len(schedule.shares), progress_interval())
    state.queue_left = list(state.todo) if train else []
    changed |= train_or_stop(state, options, schedule, releaser(state, options) if state.waiting and train else None)
    finished_tasks = count_trained(state.todo, state.archive, state.report)
    changed |= boards_held(state, options, train=train) | owed_boards(options.runs_dir, state.items)
    end = start + options.budget * 60 if options.budget is not None else None
    rebuild_boards(state, options, changed, end)
    report_bake(state, options, finished_tasks, pages=options.pages is not False)
    return state.report


def survey_queue(queue: str, options: BakeOptions, *, restore: bool) -> BakeState:
    """The queue read (:func:`load_queue`) and surveyed (:func:`survey`: unfinished archived runs restored where
    ``restore``): where each run stands, the report's counts of those finished and refused, and the runs to train
    in the order they train (:func:`training_order`)."""
    items = load_queue(queue)
    archive = Archive(options.results_dir)
    waiting: Waiting = []
    slots = survey(items, archive, options.runs_dir, restore=restore, waiting=waiting)
    report = BakeReport(finished_before=sum(s.state == "finished" for s in slots))
    report.refused = sum(s.state == "refused" for s in slots)
    todo = training_order([s for s in slots if s.state in ("in progress", "not started")])
    return BakeState(items, archive, report, slots, waiting, todo)


def print_dry_run(state: BakeState, workers: int, device: str, *, train: bool, scale: CostScale | None = None) -> None:
    """What a bake would do: each queued run and where it stands, what would train (the runs at tuned rates that
    wait for their grid included) and the time it takes per task on this platform class (:mod:`~normbench.sweep.
    baking.estimate`), or what would be rebuilt."""
    for s in state.slots:
        step = f" (step {s.step:,})" if s.state == "in progress" else ""
        print(f"  {s.item.board}\t{s.run.variant}\tseed {s.run.seed}\t{s.state}{step}")
    for item, choice, runs in waiting_runs(state.waiting):
        print(f"  {item.board}\t{runs} runs at the tuned rates\tplanned once results/{choice}/ has chosen the rates")
    here = [s for s in state.slots if s.state == "finished here"]
    archived = f", {len(here)} finished here to archive" if here else ""
    if not train:
        print("normbench: dry run: nothing to train (train false); the boards with runs held would be rebuilt")
        return
    later = state.total() - len(state.todo)
    more = f" and at most {later} at the tuned rates once their grids have chosen ({state.total()} in all)"
    print(
        f"normbench: dry run: {len(state.todo)} runs to train{more if later else ''}{archived}, {workers} at a time; "
        "nothing trained"
    )
    rows = estimate(state.todo, state.waiting, RunTimes(state.archive, device), scale)
    for line in estimate_lines(rows, workers, device) if rows else []:
        print(line)


def releaser(state: BakeState, options: BakeOptions) -> Callable[[list[Slot]], None]:
    """What :func:`train_queue` calls with the runs pending: the runs of the items whose tuning grid has just
    finished (:func:`release_waiting`) join the runs to train and the queue, where their item stands in it."""

    def release(pending: list[Slot]) -> None:
        new = release_waiting(
            state.waiting, pending, state.items, state.archive, options.runs_dir, options.results_dir,
            options.uncommitted,
        )  # fmt: skip
        state.todo.extend(new)
        in_queue_order(state.queue_left, new, state.items)

    return release


def boards_held(state: BakeState, options: BakeOptions, *, train: bool) -> set[str]:
    """The boards to rebuild for the runs held (archived, or finished here) beside those whose runs changed: a board
    not yet built (a report card on published baselines); with ``train`` false, every board with a run held, and
    those of the waiting items whose choice board is one of them (:func:`release_waiting`)."""
    held = {board for s in state.slots if s.state in ("finished", "finished here") for board in s.boards}
    changed = {board for board in held if not board_file(options.results_dir, board).is_file()}
    if not train:  # told to train nothing: every board with a run held is rebuilt from what is held
        released = release_waiting(
            state.waiting, [], state.items, state.archive, options.runs_dir, options.results_dir, options.uncommitted,
            held=held,
        )  # fmt: skip
        changed |= held | {board for s in released if s.state == "finished" for board in s.boards}
    return changed


def rebuild_boards(state: BakeState, options: BakeOptions, changed: set[str], end: float | None = None) -> None:
    """Rebuild each changed board (:func:`rebuild`), in queue order, into ``state.report.boards``, each announced in a
    line; one with a refused archived record is not rebuilt, and one the publishing rule keeps, or whose tuning grid
    is not chosen yet, stays as published (each said in one line). At ``end`` (the budget's), the boards not built
    yet are owed (:func:`owe_boards`): one line names them, and the next bake builds them first."""
    refused = {board for s in state.slots if s.state == "refused" for board in s.boards}
    todo = boards_of(state.items, changed)
    for k, item in enumerate(todo):
        if end is not None and time.time() >= end:
            owe_boards(options.runs_dir, [i.board for i in todo[k:]], [i.board for i in todo[:k]])
            print(
                f"normbench: bake: the budget is spent: {len(todo) - k} board(s) not rebuilt yet "
                f"({', '.join(i.board for i in todo[k:][:4])}{', ...' if len(todo) - k > 4 else ''}); the next bake "
                "(or `normbench bake --train false`) builds them first",
                flush=True,
            )
            return
        print(f"normbench: bake: building results/{item.board}/ ({k + 1} of {len(todo)})", flush=True)
        if item.board in refused:  # its leaderboard would refuse the record too
            print(f"normbench: bake: {item.board} not rebuilt: an archived record of its runs is refused (above)")
            continue
        try:
            rebuild(item, state.items, options.runs_dir, options.results_dir, uncommitted=options.uncommitted)
        except Refused as exc:  # a published board the queue does not cover stays as it is; the others are built
            print(f"normbench: bake: {item.board} kept as published: {exc}")
            continue
        except ChoiceNotReady as exc:  # judged at tuned rates whose grid is not chosen yet: the published board stands
            print(f"normbench: bake: {item.board} waits (kept as published): {exc}")
            continue
        state.report.boards.append(item.board)
    owe_boards(options.runs_dir, [], [i.board for i in todo])


def owed_path(runs_dir: str) -> Path:
    """Where a bake keeps the boards it owes (built by the next bake): beside its runs, a local list."""
    return Path(runs_dir) / "boards-owed.json"


def owe_boards(runs_dir: str, owed: list[str], settled: list[str]) -> None:
    """The owed list less the boards ``settled`` (built or tried now), plus those ``owed``; written atomically (none
    left: the file removed)."""
    path = owed_path(runs_dir)
    boards = sorted((read_owed(path) - set(settled)) | set(owed))
    if not boards:
        path.unlink(missing_ok=True)
        return
    atomic_write_text(path, json.dumps(boards) + "\n")


def read_owed(path: Path) -> set[str]:
    """The boards listed as owed (an unreadable or missing list: none)."""
    try:
        owed = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    return {board for board in owed if isinstance(board, str)} if isinstance(owed, list) else set()


def owed_boards(runs_dir: str, items: list[QueueItem]) -> set[str]:
    """The boards an earlier bake owes that this queue builds."""
    return read_owed(owed_path(runs_dir)) & {item.board for item in items}


def report_bake(state: BakeState, options: BakeOptions, finished_tasks: set[str], *, pages: bool = True) -> None:
    """After the boards: the token analyses of the tasks with runs finished, the norm leaderboard and the docs'
    results pages when a board was rebuilt (and ``pages``), the replicates' report when a run was archived, then
    what the archive took and the bake's last line (:meth:`BakeReport.line`)."""
    report, results_dir = state.report, options.results_dir
    if finished_tasks & set(TOKEN_TASKS):
        token_items = [i for i in state.items if i.task in finished_tasks]
        keep_token_analyses_here(token_items, options.runs_dir, results_dir, state.archive)
    if report.boards and pages:
        refresh_norm_board(results_dir)
        refresh_pages(results_dir)
    if report.archived.get("added") or report.archived.get("continued") or report.archived.get("restarted"):
        write_report(results_dir)
    if report.archived:
        said = ", ".join(f"{n} {what}" for what, n in sorted(report.archived.items()))
        print(f"normbench: run archive {state.archive.root}: {said}")
    print(report.line())


def release_waiting(
    waiting: Waiting, pending: list[Slot], items: list[QueueItem], archive: Archive, runs_dir: str, results_dir: str,
    uncommitted: bool = False, held: set[str] | None = None,
) -> list[Slot]:  # fmt: skip
    """The runs of the waiting items whose choice board this queue trains and has no run ``pending`` of any more: that
    board is rebuilt (its grid finished, the values are chosen) and the items are planned again, so a tuning grid and
    the runs at its chosen values train in one bake. Released items leave ``waiting``, ready or not.

    ``held`` (a bake that trains nothing: the boards with a run held): only the items whose choice board is one of
    them are released, nothing is restored, and every run of theirs is returned, finished or not, so that their
    boards are rebuilt too (a tuned board whose grid and runs another machine trained)."""
    busy = {board for s in pending for board in s.boards}
    ready = [
        (item, board)
        for item, board in waiting
        if board not in busy and (held is None or board in held) and any(i.board == board for i in items)
    ]
    if not ready:
        return []
    for board in dict.fromkeys(board for _, board in ready):
        try:
            rebuild(next(i for i in items if i.board == board), items, runs_dir, results_dir, uncommitted=uncommitted)
        except Refused as exc:
            print(f"normbench: bake: {board} kept as published: {exc}")
    queued = {s.key for s in pending}
    released: list[Slot] = []
    for item, board in ready:
        waiting.remove((item, board))
        still: Waiting = []
        slots = [
            s
            for s in survey([item], archive, runs_dir, restore=held is None, waiting=still)
            if held is not None or (s.state in ("in progress", "not started", "finished here") and s.key not in queued)
        ]
        if not still:
            what = "held" if held is not None else "queued"
            print(f"normbench: bake: results/{board}/ is finished: {len(slots)} runs of results/{item.board}/ {what}")
            released += slots
    return released


def keep_token_analyses_here(items: list[QueueItem], runs_dir: str, results_dir: str, archive: Archive) -> None:
    """The token analyses (:mod:`normbench.run_analyses.sentence_tokens`) of the queued runs that the ``sst2`` token
    report reads, computed while their weights are here and kept in the run archive; one line says how many, or
    why none (the SST-2 dev sentences they need are not at hand)."""
    from normbench.publish.tokens import keep_token_analyses
    from normbench.sweep.run import planner

    plan, read, kept = planner(runs_dir), 0, 0
    try:
        for task, preset in dict.fromkeys((i.task, i.preset) for i in items if i.task in TOKEN_TASKS):
            seeds = sorted({s for i in items if (i.task, i.preset) == (task, preset) for s in i.seeds})
            n, k = keep_token_analyses(plan, archive, results_dir, task, preset, seeds)
            read, kept = read + n, kept + k
    except (ValueError, OSError) as exc:
        print(f"normbench: bake: token analyses not computed: {str(exc).splitlines()[0]}")
        return
    if read:
        print(f"normbench: bake: the sst2 token report reads {read} of the queued runs; {kept} token analyses are kept")


def refresh_norm_board(results_dir: str) -> None:
    """The norm leaderboard (``results/norms.md``) rebuilt from the boards, where the results folder has one."""
    from normbench.render.norm_board_render import publish_norm_board

    if (Path(results_dir) / "norms.json").is_file():
        try:
            print(f"normbench: bake: {publish_norm_board(results_dir)}")
        except ValueError as exc:  # a cell that lost seeds: the published leaderboard stays
            print(f"normbench: bake: {exc}")


def refresh_pages(results_dir: str) -> None:
    """The documentation's generated results pages and the README's teaser, rewritten from the rebuilt boards
    when they are the repository's own (the docs test holds them to the boards)."""
    from normbench.publish import files as publish
    from normbench.site.docs_pages import write_pages
    from normbench.site.teaser import update_readme

    root = publish.repository_root()
    if root is None or not publish.publishes(Path(results_dir)) or not (root / "docs").is_dir():
        return
    stale = write_pages(root / "docs", results_dir)
    if update_readme(root / "README.md", results_dir):
        stale.append(root / "README.md")
    if stale:
        print(f"normbench: bake: rewrote {', '.join(str(p.relative_to(root)) for p in stale)}")


def board_file(results_dir: str, board: str) -> Path:
    """The leaderboard JSON of a queued board (``lm/lr``, ``cards/dyt/lm/lr``)."""
    return board_folder(results_dir, board) / "leaderboard.json"


def boards_of(items: list[QueueItem], changed: set[str]) -> list[QueueItem]:
    """One item per changed board (the first that names it)."""
    out, seen = [], set()
    for item in items:
        if item.board in changed and item.board not in seen:
            seen.add(item.board)
            out.append(item)
    return out


def rebuild(item: QueueItem, items: list[QueueItem], runs_dir: str, results_dir: str, uncommitted: bool = False) -> Any:
    """Rebuild one board from the archive and the local runs: every variant and seed the queue names for it
    (``uncommitted``: runs trained from uncommitted code go on it too, the board saying so; a published board is
    never replaced with fewer runs or other values)."""
    from normbench.sweep.run import run_sweep  # the sweep layer's writer; imported here, where it is needed

    same = [i for i in items if i.board == item.board]
    variants = list(dict.fromkeys(v for i in same for v in i.variants))
    seeds = sorted({s for i in same for s in i.seeds})
    options = SweepOptions(
        config=item.config_arg,
        preset=item.preset,
        seeds=",".join(map(str, seeds)),
        variants=",".join(variants),
        runs_dir=runs_dir,
        results_dir=results_dir,
        name=item.folder,
        progress=False,
        uncommitted=uncommitted,
    )
    return run_sweep(options, train=False)
