"""Bakes: work through a queue of wanted runs under a time budget, on whatever machine this is.

The queue (``results/bake.yaml``) lists, in priority order, the runs the published boards want: a board
(``results/<board>/``), its task, preset, variants and seeds. :func:`bake` skips what the run archive already holds
finished, continues unfinished runs from their archived checkpoints, trains the rest in order, and at the deadline
stops every run it started: each saves its checkpoint (:mod:`normbench.training.deadline`) and goes into the archive
unfinished, so the next bake, on this machine or another, continues it. A run still going halfway through the
budget's reserve (past its last training step: its tests and analyses) is
stopped then, so the bake ends within its budget. Finished runs go into the archive as
replicates of this platform. Then the boards whose runs changed are rebuilt from the archive (an unfinished run is a
row, "step k of N"). A bake runs at low CPU priority by default (``nice``), so it can train in the background.

Each run is its own ``normbench sweep`` subprocess of one run, with its own share of the CPU cores (its affinity), or
of the GPUs; a new run starts only while at least ``MIN_SLOT_S`` seconds of the budget are left. A bake with no
budget on the CPU stacks the seeds of a variant where that pays (:func:`stacking_pays`): they train as one
subprocess of stacked seeds (:mod:`normbench.sweep.vectorized`), and a seed its stack could not train is trained
alone. With a budget every run is alone, since a stack keeps no checkpoint before its end.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from normbench.archive.store import Archive, ArchiveError, checkpoint_step, steps_done
from normbench.boards.progress import planned_steps
from normbench.boards.replicates import write_report
from normbench.judge.tuned import ChoiceNotReady
from normbench.publish.files import Refused
from normbench.sweep.archiving import archive_runs
from normbench.sweep.backends import available_cpus, is_finished
from normbench.sweep.device_plan import CPU_STACK_MAX_BATCH
from normbench.sweep.options import SweepOptions, visible_gpus
from normbench.sweep.plan import Run, parse_seeds, plan_runs
from normbench.sweep.vectorized import stack_traits
from normbench.tasks.trust import check_config_code
from normbench.training.config import load_config
from normbench.training.deadline import STOP_AT
from normbench.training.records import FINISHED, read_record
from normbench.training.verify import check_archived, finished_status

QUEUE = "results/bake.yaml"
TOKEN_TASKS = ("lm", "sst2")  # tasks whose runs the sst2 token report (Tables 3-4) reads
MIN_SLOT_S = 60.0  # a run is started only with this much of the budget left (loading data, a few steps, a checkpoint)
REBUILD_RESERVE_S = 60.0  # of the budget, kept for stopping the runs, archiving them and rebuilding the boards
STOP_GRACE_S = 20.0  # a run still going at the hard stop has this long to save its state before it is killed
ITEM_KEYS = ("board", "task", "preset", "variants", "seeds")
OPTIONAL_KEYS = ("config",)  # a config file of the task's (default: its shipped config)


@dataclass(frozen=True)
class QueueItem:
    """Runs wanted by one board: ``variants`` x ``seeds`` of ``task`` at ``preset``, shown on ``results/<board>/``."""

    board: str
    task: str
    preset: str
    variants: tuple[str, ...]
    seeds: tuple[int, ...]
    config: str | None = None

    @property
    def config_arg(self) -> str:
        """What ``--config`` names: the item's config file, else the task."""
        return self.config or self.task

    @property
    def folder(self) -> str | None:
        """The board's subfolder of ``results/<task>/`` (``None``: the task's own board)."""
        rest = self.board.split("/", 1)
        return rest[1] if len(rest) == 2 else None


@dataclass
class BakeReport:
    """What a bake did and what is left."""

    finished_before: int = 0
    finished_now: int = 0
    in_progress: list[tuple[str, int, int, int | None]] = field(default_factory=list)  # variant, seed, step, of
    not_started: int = 0
    unarchived: int = 0  # finished here, but not in the archive (trained from uncommitted code, or refused)
    refused: int = 0  # archived, but the record fails its check (:func:`normbench.training.verify.check_archived`)
    archived: Counter = field(default_factory=Counter)
    boards: list[str] = field(default_factory=list)

    def line(self) -> str:
        """The one line a bake ends with: a run counts as finished only once its archived record is verified."""
        stuck = self.unarchived + self.refused
        total = self.finished_before + self.finished_now + len(self.in_progress) + self.not_started + stuck
        parts = [
            f"{self.finished_before + self.finished_now} of {total} queued runs finished ({self.finished_now} now)"
        ]
        if self.in_progress:
            shown = ", ".join(
                f"{v} seed {s} step {k:,}" + (f" of {n:,}" if n else "") for v, s, k, n in self.in_progress[:4]
            )
            more = f" and {len(self.in_progress) - 4} more" if len(self.in_progress) > 4 else ""
            parts.append(f"{len(self.in_progress)} in progress ({shown}{more})")
        if self.not_started:
            parts.append(f"{self.not_started} not started")
        if self.unarchived:
            parts.append(f"{self.unarchived} finished here but not in the archive (said above)")
        if self.refused:
            parts.append(f"{self.refused} archived but refused (named above: restore them from git)")
        left = self.not_started + len(self.in_progress)
        tail = "; `normbench bake` continues them" if left else "; the queue is not done" if stuck else ""
        tail = tail or "; the queue is done"
        return "normbench: bake: " + ", ".join(parts) + tail


def load_queue(path: str | Path) -> list[QueueItem]:
    """The queue file's items in order; a one-line error naming the file, the item and the field. A queue is
    untrusted input: the config file an item names may name registered code only, unless the user trusts it
    (:func:`normbench.tasks.trust.check_config_code`); nothing it names is imported before that check."""
    path = Path(path)
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"queue: {path} cannot be read ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ValueError(f"queue: {path}{where} is not valid YAML") from None
    items = (doc or {}).get("queue") if isinstance(doc, dict) else None
    if not isinstance(items, list) or not items:
        raise ValueError(f"queue: {path} needs a non-empty list `queue:` of items ({', '.join(ITEM_KEYS)})")
    out = []
    for i, item in enumerate(items):
        where = f"queue: {path} item {i + 1}"
        if not isinstance(item, dict):
            raise ValueError(f"{where} must be a mapping with {', '.join(ITEM_KEYS)}")
        unknown = sorted(set(item) - set(ITEM_KEYS) - set(OPTIONAL_KEYS))
        if unknown:
            raise ValueError(f"{where}: unknown field {unknown[0]!r}; allowed: {', '.join(ITEM_KEYS + OPTIONAL_KEYS)}")
        missing = [k for k in ITEM_KEYS if item.get(k) in (None, "", [])]
        if missing:
            raise ValueError(f"{where}: field {missing[0]!r} is required")
        board, task = str(item["board"]), str(item["task"])
        if not re.fullmatch(r"[A-Za-z0-9_.+=-]+(/[A-Za-z0-9_.+=-]+)?", board) or board.split("/")[0] != task:
            raise ValueError(f"{where}: board {board!r} must be <task> or <task>/<name> of task {task!r}")
        variants = item["variants"]
        if isinstance(variants, str):
            variants = [v for v in variants.split(",") if v]
        if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
            raise ValueError(f"{where}: variants must be a list of variant names")
        try:
            seeds = tuple(parse_seeds(str(item["seeds"])))
        except ValueError as exc:
            raise ValueError(f"{where}: seeds {item['seeds']!r}: {exc}") from None
        config = item.get("config")
        if config is not None and not (path.parent / str(config)).is_file() and not Path(str(config)).is_file():
            raise ValueError(f"{where}: config {config!r} is not a file")
        if config is not None and not Path(str(config)).is_file():
            config = str(path.parent / str(config))  # relative to the queue file
        if config is not None:  # before anything is planned: the code it names (normbench.tasks.trust)
            check_config_code(load_config(config), f"{where}: config {config}")
        out.append(QueueItem(board, task, str(item["preset"]), tuple(variants), seeds, config))
    return out


@dataclass
class Slot:
    """One run of the queue, where it stands."""

    item: QueueItem
    run: Run
    state: str  # finished (archived and verified) | refused | finished here (not archived) | in progress | not started
    step: int = 0
    alone: bool = False  # trained alone even where its seeds could be stacked (its stack did not train it)
    also: list[str] = field(default_factory=list)  # later items' boards that show this run too

    @property
    def boards(self) -> list[str]:
        """Every queued board that shows this run: its item's, then those of later items that plan it too."""
        return [self.item.board, *self.also]

    @property
    def steps_left(self) -> int:
        """The steps this run still trains: its ``trainer.max_steps`` less the steps done (0 where none is set)."""
        return max(int(self.run.trainer.get("max_steps") or 0) - self.step, 0)

    @property
    def key(self) -> tuple[str, str, int]:
        """The run's identity in the archive: (task, config hash, seed)."""
        return run_key(self.item, self.run)


def training_order(slots: list[Slot]) -> list[Slot]:
    """The order a bake trains ``slots`` in: runs in progress first (what is started finishes first), those with the
    fewest steps left (``trainer.max_steps`` less the steps done) before the others, then the queue's order (the sort
    is stable). Steps left, not steps done: 952 of an LM run's 2,000 finish before 2,000 of the paper protocol's
    14,000."""
    return sorted(slots, key=lambda s: (s.state != "in progress", s.steps_left if s.state == "in progress" else 0))


def run_key(item: QueueItem, run: Run) -> tuple[str, str, int]:
    """(task, config hash, seed): one run however many queue items ask for it."""
    return item.task, str(run.config_hash), run.seed


Waiting = list[tuple[QueueItem, str]]
"""Queue items judged at tuned values whose choice board (the second, ``majority/lr``) is not finished yet."""


def survey(
    items: list[QueueItem], archive: Archive, runs_dir: str, restore: bool = True, waiting: Waiting | None = None
) -> list[Slot]:
    """Every queued run in priority order (items in order; in each, seed by seed across the variants), with
    unfinished archived runs restored into ``runs_dir`` where they are further than the local ones. An item whose
    tuning grid is not finished is left out, said in one line, and added to ``waiting``."""
    slots: list[Slot] = []
    seen: dict[tuple[str, str, int], Slot] = {}
    for item in items:
        seeds = ",".join(map(str, item.seeds))
        try:
            _, runs = plan_runs(
                None if item.config else item.task,
                item.preset,
                seeds,
                list(item.variants),
                None,
                runs_dir,
                config_path=item.config,
                results_dir=archive.root.parent,
            )
        except ChoiceNotReady as exc:  # a board judged at tuned rates waits for its tuning grid
            print(f"normbench: bake: results/{item.board}/ waits: {exc}", file=sys.stderr)
            if waiting is not None:
                waiting.append((item, exc.board))
            continue
        order = {v: i for i, v in enumerate(item.variants)}
        for run in sorted(runs, key=lambda r: (r.seed, order.get(r.variant, len(order)))):
            key = run_key(item, run)
            if key in seen:  # trained once, shown on every board that plans it
                if item.board not in seen[key].boards:
                    seen[key].also.append(item.board)
                continue
            seen[key] = stand(item, run, archive, restore)
            slots.append(seen[key])
    return slots


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


def in_queue_order(queue_left: list[Slot], new: list[Slot], items: list[QueueItem]) -> None:
    """Put ``new`` slots into ``queue_left`` where their item stands in the queue (before later items' runs)."""
    rank = {id(item): i for i, item in enumerate(items)}
    for slot in new:
        at = next((k for k, s in enumerate(queue_left) if rank[id(s.item)] > rank[id(slot.item)]), len(queue_left))
        queue_left.insert(at, slot)


def local_steps(run: Run, record: dict[str, Any]) -> int:
    """The steps a local unfinished run continues from: its checkpoint's (0 without one, or with one that cannot be
    read: the run starts afresh)."""
    ckpt = Path(run.record_path).parent / "checkpoints" / "last.ckpt"
    try:
        return checkpoint_step(ckpt) if ckpt.is_file() else 0
    except ArchiveError:
        return 0


def archived_state(archive: Archive, task: str, run: Run) -> tuple[str | None, str]:
    """Whether the archive holds a run done: ``("finished", "")`` when a board published it before the archive, or
    its canonical replicate passes the check a leaderboard makes of it (:func:`normbench.training.verify.
    check_archived`); ``("refused", why)`` when that replicate fails it (or a file of the run's folder cannot be
    read); ``(None, "")`` when the archive holds no finished replicate."""
    key = str(run.config_hash)
    try:
        rep = archive.canonical(task, key, run.seed)
        if rep is None:
            return ("finished" if archive.published_elsewhere(task, key, run.seed) else None), ""
        check_archived(rep, key)
    except ValueError as exc:
        return "refused", str(exc)
    return "finished", ""


def local_finished(run: Run) -> bool:
    """Whether the run's own folder holds it finished and its files pass the sweep's check (one that fails it is
    trained again, by its sweep)."""
    try:
        return bool(run.record_path) and finished_status(run.record_path, str(run.config_hash)) is not None
    except ValueError:
        return False


def stand(item: QueueItem, run: Run, archive: Archive, restore: bool = True) -> Slot:
    """Where one queued run stands: finished when the archive holds it done (:func:`archived_state`), refused (said
    in one line) when its archived record fails that check, finished here when only its run folder holds it finished
    (the bake archives it); an archived unfinished replicate further than the local run is restored (``restore``)."""
    state, why = archived_state(archive, item.task, run)
    if state == "refused":
        print(f"normbench: bake: {why}; the run is not counted done (restore the file from git)", file=sys.stderr)
    if state is not None:
        return Slot(item, run, state)
    if local_finished(run):
        return Slot(item, run, "finished here")
    try:
        local = read_record(run.record_path) if run.record_path and Path(run.record_path).is_file() else None
    except ValueError:
        local = None  # its sweep redoes it
    step = local_steps(run, local) if local is not None else 0
    try:
        rep = archive.in_progress(item.task, str(run.config_hash), run.seed)
    except ValueError as exc:
        print(f"normbench: bake: {exc}; the run is not counted done (restore the file from git)", file=sys.stderr)
        return Slot(item, run, "refused")
    archived_step = steps_done(rep.record()) if rep is not None else 0
    if rep is not None and archived_step > step:
        step = archived_step
        if restore:
            archive.restore(rep, Path(run.record_path).parent)
    return Slot(item, run, "in progress" if step else "not started", step)


def run_command(batch: list[Slot], runs_dir: str, results_dir: str, gpus: str | None) -> list[str]:
    """The ``normbench sweep`` of one queued run, or of several seeds of one variant stacked: no board, no archiving
    (the bake does both)."""
    first = batch[0]
    seeds = ",".join(str(slot.run.seed) for slot in batch)
    command = [sys.executable, "-m", "normbench", "sweep", "--config", first.item.config_arg]
    command += ["--preset", first.item.preset]
    command += ["--variants", first.run.variant, "--seeds", seeds, "--runs_dir", runs_dir]
    command += ["--results_dir", results_dir, "--leaderboard", "false", "--archive", "false", "--progress", "false"]
    command += ["--vectorize", str(len(batch))] if len(batch) > 1 else []
    return command + (["--gpus", gpus] if gpus else [])


def stacking_pays(slot: Slot) -> bool:
    """Whether a run's seeds train faster stacked than alone on the CPU: its task module stacks
    (:func:`normbench.sweep.vectorized.can_stack`) and its batch is at most ``CPU_STACK_MAX_BATCH`` rows (results/perf:
    10 majority seeds at batch 256 take 0.61x the time of 10 lone runs, at batch 4096 1.8x)."""
    batch, stackable = stack_traits(slot.run.config)  # the task's own module: the plan built it already
    return stackable and batch is not None and batch <= CPU_STACK_MAX_BATCH


def next_batch(queue_left: list[Slot], stack: bool) -> list[Slot]:
    """The runs to launch next: the first queued one, and with ``stack`` every other not-started run of its queue item
    and variant, where stacking their seeds pays (:func:`stacking_pays`)."""
    first = queue_left.pop(0)
    if not stack or first.alone or first.state != "not started" or not stacking_pays(first):
        return [first]
    mates = [
        s
        for s in queue_left
        if s.item is first.item and s.run.variant == first.run.variant and s.state == "not started" and not s.alone
    ]
    for slot in mates:
        queue_left.remove(slot)
    return [first, *mates]


def cpu_shares(workers: int) -> list[set[int]]:
    """The CPU cores of this process split into ``workers`` disjoint shares (one per concurrent run)."""
    try:
        cores = sorted(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows: no affinity
        return [set() for _ in range(workers)]
    cores = cores[: max(available_cpus(), 1)]
    workers = max(1, min(workers, len(cores)))
    return [set(cores[i::workers]) for i in range(workers)]


def launch(command: list[str], cores: set[int], deadline: float | None, log: Path) -> subprocess.Popen:
    """Start one run's subprocess on ``cores``, with the deadline in its environment."""
    env = {**os.environ, "OMP_NUM_THREADS": str(max(1, len(cores)))}
    if deadline is not None:
        env[STOP_AT] = f"{deadline:.3f}"
    log.parent.mkdir(parents=True, exist_ok=True)
    out = log.open("a", encoding="utf-8")

    def pin() -> None:  # pragma: no cover - runs in the child
        if cores and hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, cores)

    return subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=pin)


def bake(
    queue: str = QUEUE,
    budget: float | None = None,
    gpus: str | None = None,
    workers: int | None = None,
    nice: int = 10,
    runs_dir: str = "runs",
    results_dir: str = "results",
    uncommitted: bool = False,
    dry_run: bool = False,
    train: bool = True,
) -> BakeReport:
    """Train the queue's runs in priority order within ``budget`` minutes (``None``: until the queue is done).

    Args:
        queue: the queue file (YAML: ``queue:`` a list of ``board``, ``task``, ``preset``, ``variants``, ``seeds``).
        budget: minutes of wall-clock time for training; at the end every started run is checkpointed, archived
            unfinished, and the boards are rebuilt.
        gpus: comma-separated GPU ids: the runs train there, ``workers`` per GPU (default 4 per GPU).
        workers: concurrent runs (default: one per CPU core, or 4 per GPU with ``gpus``).
        nice: CPU priority increment of the bake and its runs (0: normal priority).
        runs_dir: where runs train (their logs, checkpoints and records).
        results_dir: the results root: the run archive (``archive/``) and the boards.
        uncommitted: archive runs trained from uncommitted code, and show such runs on the rebuilt boards (which say
            so); a published board is still never replaced with fewer runs or other values.
        dry_run: print where each queued run stands and what would train; train nothing.
        train: ``False``: train nothing; rebuild every queued board that has a run held (archived or finished here).
    """
    if budget is not None and budget <= 0:
        raise ValueError(f"budget: {budget} must be a positive number of minutes")
    if nice < 0:
        raise ValueError(f"nice: {nice} must be >= 0 (a bake never raises its priority)")
    gpu_ids = planned_gpus(gpus) if dry_run else bake_gpus(gpus)
    start = time.time()
    items = load_queue(queue)
    archive = Archive(results_dir)
    waiting: Waiting = []
    slots = survey(items, archive, runs_dir, restore=not dry_run, waiting=waiting)
    report = BakeReport(finished_before=sum(s.state == "finished" for s in slots))
    report.refused = sum(s.state == "refused" for s in slots)
    here = [s for s in slots if s.state == "finished here"]
    todo = training_order([s for s in slots if s.state in ("in progress", "not started")])
    workers = workers or (4 * len(gpu_ids) if gpu_ids else available_cpus())
    if dry_run:
        for s in slots:
            step = f" (step {s.step:,})" if s.state == "in progress" else ""
            print(f"  {s.item.board}\t{s.run.variant}\tseed {s.run.seed}\t{s.state}{step}")
        archived = f", {len(here)} finished here to archive" if here else ""
        if not train:
            print("normbench: dry run: nothing to train (train false); the boards with runs held would be rebuilt")
        else:
            print(f"normbench: dry run: {len(todo)} runs to train{archived}, {workers} at a time; nothing trained")
        return report
    changed = archive_finished_here(here, archive, report, uncommitted)
    if nice:
        os.nice(nice)
    # the budget covers the end too: each run's last checkpoint, the archive and the boards' rebuild
    reserve = min(REBUILD_RESERVE_S, 0.2 * budget * 60) if budget is not None else 0.0
    deadline = start + budget * 60 - reserve if budget is not None else None
    hard_stop = start + budget * 60 - reserve / 2 if budget is not None else None
    shares = cpu_shares(workers)
    running: dict[int, tuple[subprocess.Popen, list[Slot]]] = {}
    queue_left = list(todo) if train else []
    stack = deadline is None and not gpu_ids  # stacks keep no checkpoint; on GPUs they trained slower (docs/archive.md)

    def release(pending: list[Slot]) -> None:  # the runs of items whose tuning grid has just finished join the queue
        new = release_waiting(waiting, pending, items, archive, runs_dir, results_dir, uncommitted)
        todo.extend(new)
        in_queue_order(queue_left, new, items)

    try:
        changed |= train_queue(
            queue_left, running, shares, deadline, archive, report, runs_dir, results_dir, gpu_ids, uncommitted, stack,
            release=release if waiting and train else None, hard_stop=hard_stop,
        )  # fmt: skip
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the runs started stop too, checkpointed and archived, then it ends
        stop_runs([proc for proc, _ in running.values()])
        started = [slot.run for _, batch in running.values() for slot in batch]
        archive_runs(archive, started, uncommitted=uncommitted, checkpoint=True, quiet=True)
        raise
    except OSError:  # a file of the archive could not be written (a full disk): one line naming it, runs stopped
        stop_runs([proc for proc, _ in running.values()])
        raise
    finished_tasks = count_trained(todo, archive, report)
    # a board not yet built whose runs the archive holds (a report card on published baselines) is built too
    held = {board for s in slots if s.state in ("finished", "finished here") for board in s.boards}
    changed |= {board for board in held if not board_file(results_dir, board).is_file()}
    if not train:  # told to train nothing: every board with a run held is rebuilt from what is held
        released = release_waiting(waiting, [], items, archive, runs_dir, results_dir, uncommitted, held=held)
        changed |= held | {board for s in released if s.state == "finished" for board in s.boards}
    refused = {board for s in slots if s.state == "refused" for board in s.boards}
    for item in boards_of(items, changed):
        if item.board in refused:  # its leaderboard would refuse the record too
            print(f"normbench: bake: {item.board} not rebuilt: an archived record of its runs is refused (above)")
            continue
        try:
            rebuild(item, items, runs_dir, results_dir, uncommitted=uncommitted)
        except Refused as exc:  # a published board the queue does not cover stays as it is; the others are built
            print(f"normbench: bake: {item.board} kept as published: {exc}")
            continue
        except ChoiceNotReady as exc:  # judged at tuned rates whose grid is not chosen yet: the published board stands
            print(f"normbench: bake: {item.board} waits (kept as published): {exc}")
            continue
        report.boards.append(item.board)
    if finished_tasks & set(TOKEN_TASKS):
        keep_token_analyses_here([i for i in items if i.task in finished_tasks], runs_dir, results_dir, archive)
    if report.boards:
        refresh_norm_board(results_dir)
        refresh_pages(results_dir)
    if report.archived.get("added") or report.archived.get("continued") or report.archived.get("restarted"):
        write_report(results_dir)
    if report.archived:
        said = ", ".join(f"{n} {what}" for what, n in sorted(report.archived.items()))
        print(f"normbench: run archive {archive.root}: {said}")
    print(report.line())
    return report


def bake_gpus(gpus: str | None) -> list[str]:
    """The GPU ids ``--gpus`` names (``"0,1"``), each one CUDA sees here (:func:`normbench.sweep.options.visible_gpus`);
    a one-line error ``bake: --gpus ...: ...`` otherwise, before anything is planned (the runs could not train, and
    only their logs would say why)."""
    ids = [g for g in str(gpus or "").replace(" ", "").strip("[]").split(",") if g]
    if not ids:
        return []
    flag = f"--gpus {','.join(ids)}"
    if not all(g.isdigit() for g in ids):
        raise ValueError(f"bake: {flag}: not GPU ids; give comma-separated ids, e.g. 0,1")
    visible = visible_gpus()
    absent = [g for g in ids if int(g) not in visible]
    if absent:
        seen = f"the GPUs visible here are {', '.join(map(str, visible))}" if visible else "CUDA finds no GPU here"
        fix = "give the ids of visible GPUs" if visible else "drop --gpus to train on the CPU"
        raise ValueError(f"bake: {flag}: GPU {absent[0]} is not visible ({seen}); {fix}")
    return ids


def planned_gpus(gpus: str | None) -> list[str]:
    """The GPU ids a dry run plans for: those ``--gpus`` names, said in one line where this machine lacks them (a
    queue may be planned here for a GPU machine; a bake that trains refuses, :func:`bake_gpus`)."""
    try:
        return bake_gpus(gpus)
    except ValueError as exc:
        print(f"normbench: dry run: {exc} (planned as given; a bake that trains here refuses)", file=sys.stderr)
        return [g for g in str(gpus or "").replace(" ", "").strip("[]").split(",") if g]


def archive_finished_here(slots: list[Slot], archive: Archive, report: BakeReport, uncommitted: bool) -> set[str]:
    """Archive the runs their run folders hold finished that the archive lacks (a bake stopped while it archived
    them, by a full disk say); each one the archive then holds done counts as finished now, any other as finished
    here but not archived. Returns the boards of the runs added."""
    if not slots:
        return set()
    outcome = archive_runs(archive, [s.run for s in slots], uncommitted=uncommitted, checkpoint=True, quiet=True)
    report.archived.update(outcome)
    changed: set[str] = set()
    for slot in slots:
        if archived_state(archive, slot.item.task, slot.run)[0] == "finished":
            slot.state = "finished"
            report.finished_now += 1
            changed.update(slot.boards)
        else:
            report.unarchived += 1
    return changed


def count_trained(todo: list[Slot], archive: Archive, report: BakeReport) -> set[str]:
    """Count where the runs a bake trained stand now (finished: archived and verified; finished here but not
    archived; in progress; not started); returns the tasks with runs finished here."""
    finished_tasks: set[str] = set()
    for slot in todo:
        try:
            record = read_record(slot.run.record_path) if Path(slot.run.record_path).is_file() else None
        except ValueError:
            record = None
        if record is not None and record.get("status") in FINISHED:
            finished_tasks.add(slot.item.task)
            if archived_state(archive, slot.item.task, slot.run)[0] == "finished":
                report.finished_now += 1
            else:
                report.unarchived += 1
        elif record is not None and (step := local_steps(slot.run, record)) > 0:
            report.in_progress.append((slot.run.variant, slot.run.seed, step, planned_steps(slot.run.config)))
        else:
            report.not_started += 1
    return finished_tasks


def train_queue(
    queue_left: list[Slot], running: dict[int, tuple[subprocess.Popen, list[Slot]]], shares: list[set[int]],
    deadline: float | None, archive: Archive, report: BakeReport, runs_dir: str, results_dir: str,
    gpu_ids: list[str], uncommitted: bool, stack: bool = False, release: Callable[[list[Slot]], None] | None = None,
    hard_stop: float | None = None,
) -> set[str]:  # fmt: skip
    """Launch the queued runs as slots free up (``running``: slot index -> its process and runs; ``stack``: seeds of
    a variant stacked where that pays), archive each as it ends; the boards whose runs changed. A seed its stack did
    not finish goes back to the front of the queue, to train alone. ``release(pending)``, called before the first
    launch and after each run ends, queues the runs that waited for a grid no longer pending. At ``hard_stop`` (a
    time) the runs still going are stopped (:func:`stop_runs`): a run past the deadline's last training step does
    not see the deadline."""
    changed: set[str] = set()

    def pending() -> list[Slot]:
        return [*queue_left, *(slot for _, batch in running.values() for slot in batch)]

    if release is not None:
        release(pending())
    while queue_left or running:
        free = [i for i in range(len(shares)) if i not in running]
        time_left = None if deadline is None else deadline - time.time()
        while free and queue_left and (time_left is None or time_left > MIN_SLOT_S):
            i, batch = free.pop(0), next_batch(queue_left, stack)
            log = Path(batch[0].run.record_path).parent / "bake.log"
            gpu = gpu_ids[i % len(gpu_ids)] if gpu_ids else None
            running[i] = (launch(run_command(batch, runs_dir, results_dir, gpu), shares[i], deadline, log), batch)
        if not running:
            break
        if hard_stop is not None and time.time() >= hard_stop:
            late = [proc for proc, _ in running.values() if proc.poll() is None]
            if late:
                print(
                    f"normbench: bake: {len(late)} run(s) still going at the end of the budget (after training: tests "
                    "and analyses) stopped; each resumes from its checkpoint",
                    file=sys.stderr,
                )
                stop_runs(late, grace_s=STOP_GRACE_S)
            hard_stop = None
        time.sleep(1.0)
        for i, (proc, batch) in list(running.items()):
            if proc.poll() is None:
                continue
            del running[i]
            outcome = archive_runs(
                archive, [s.run for s in batch], uncommitted=uncommitted, checkpoint=True, quiet=True
            )
            report.archived.update(outcome)
            if outcome.get("added") or outcome.get("continued") or outcome.get("restarted"):
                changed.update(board for slot in batch for board in slot.boards)
            if len(batch) > 1:  # a seed the stack did not finish (e.g. a norm vmap cannot map) is trained alone
                queue_left[:0] = [dataclasses.replace(s, alone=True) for s in batch if not is_finished(s.run)]
            if release is not None:
                release(pending())
    return changed


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


def stop_runs(procs: list[subprocess.Popen], grace_s: float = 120.0) -> None:
    """SIGTERM to every run still going (each saves its checkpoint and records itself interrupted), then wait for
    them; a run that outlives ``grace_s`` is killed."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    end = time.time() + grace_s
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, end - time.time()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


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
    from normbench.site.docs_pages import update_readme, write_pages

    root = publish.repository_root()
    if root is None or not publish.publishes(Path(results_dir)) or not (root / "docs").is_dir():
        return
    stale = write_pages(root / "docs", results_dir)
    if update_readme(root / "README.md", results_dir):
        stale.append(root / "README.md")
    if stale:
        print(f"normbench: bake: rewrote {', '.join(str(p.relative_to(root)) for p in stale)}")


def board_file(results_dir: str, board: str) -> Path:
    """The leaderboard JSON of a queued board (``lm/lr``)."""
    return Path(results_dir) / board / "leaderboard.json"


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
