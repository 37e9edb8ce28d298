"""A bake's runs launched and watched: each queued run (or several seeds of one variant, stacked) is a ``normbench
sweep`` subprocess on its own share of the CPU cores or on a GPU, started while the budget has room for it, archived as
it ends, and stopped at the end of the budget (:func:`train_queue`).
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from normbench.archive.store import Archive
from normbench.boards.progress import record_file
from normbench.sweep.archiving import archive_runs
from normbench.sweep.backends import available_cpus, is_finished
from normbench.sweep.baking.estimate import waiting_runs
from normbench.sweep.baking.fits import RunTimes, lost_if_stopped
from normbench.sweep.baking.progress import BakeProgress
from normbench.sweep.baking.queue import BakeReport, QueueItem, Slot, Waiting
from normbench.sweep.device_plan import CPU_STACK_MAX_BATCH
from normbench.sweep.options import BakeOptions
from normbench.sweep.vectorized.seed_stack import stack_traits
from normbench.training.stopping.deadline import STOP_AT

MIN_SLOT_S = 60.0  # a run is started only with this much of the budget left (loading data, a few steps, a checkpoint)
REBUILD_RESERVE_S = 60.0  # of the budget, kept for stopping the runs, archiving them and rebuilding the boards
STOP_GRACE_S = 20.0  # a run still going at the hard stop has this long to save its state before it is killed

Running = dict[int, tuple[subprocess.Popen, list[Slot]]]
"""The runs going: slot index -> its process and the runs it trains (several seeds of one variant when stacked)."""


@dataclass
class BakeState:
    """A bake as it goes: its queue, where each queued run stands, what it trains, what is running, what it did.

    Args:
        items: the queue's items, in order.
        archive: the run archive the runs go into.
        report: what the bake did and what is left.
        slots: every queued run, where it stood when the bake began (:func:`normbench.sweep.baking.queue.survey`).
        waiting: items judged at tuned values whose choice board is not finished yet.
        todo: the runs the bake trains: those unfinished when it began, then those released from ``waiting``.
        queue_left: the runs not launched yet, in the order they launch.
        running: the runs going (:data:`Running`).
        times: the runs' expected times, read from the archive as they are needed (:mod:`normbench.sweep.baking.fits`).
        held: the runs not started because they would not finish in the time left and could not be carried.
        progress: the lines a person follows the bake by (:mod:`normbench.sweep.baking.progress`; ``None``: none).
    """

    items: list[QueueItem]
    archive: Archive
    report: BakeReport
    slots: list[Slot] = field(default_factory=list)
    waiting: Waiting = field(default_factory=list)
    todo: list[Slot] = field(default_factory=list)
    queue_left: list[Slot] = field(default_factory=list)
    running: Running = field(default_factory=dict)
    times: RunTimes | None = None
    held: list[Slot] = field(default_factory=list)
    progress: BakeProgress | None = None

    def total(self) -> int:
        """The runs this bake trains: those to train, and at most those waiting for their grid."""
        return len(self.todo) + sum(runs for _, _, runs in waiting_runs(self.waiting))

    def pending(self) -> list[Slot]:
        """The runs not finished by this bake yet: those queued, then those running."""
        return [*self.queue_left, *(slot for _, batch in self.running.values() for slot in batch)]


@dataclass(frozen=True)
class Schedule:
    """When and where a bake's runs train (:func:`plan_schedule`).

    Args:
        shares: the CPU cores of each concurrent run (one share per slot).
        gpu_ids: the GPUs the runs train on, slot ``i`` on ``gpu_ids[i % len(gpu_ids)]`` (none: the CPU).
        deadline: the time the runs stop training at, each saving its checkpoint (``None``: no budget).
        hard_stop: the time a run still going (past its last training step) is stopped at (``None``: never).
        stack: seeds of a variant train stacked where that pays (:func:`stacking_pays`) and, under a budget, fits.
    """

    shares: list[set[int]]
    gpu_ids: list[str]
    deadline: float | None = None
    hard_stop: float | None = None
    stack: bool = False


def plan_schedule(budget: float | None, start: float, workers: int, gpu_ids: list[str]) -> Schedule:
    """The schedule of a bake begun at ``start`` with ``budget`` minutes: the budget covers the end too (each run's
    last checkpoint, the archive and the boards' rebuild), so the runs stop training a reserve before its end, and
    a run still going is stopped halfway through that reserve. On the CPU seeds are stacked where that pays, under a
    budget only where the stack is expected to end in time (a stack keeps no checkpoint: :func:`next_batch`); on GPUs
    stacks trained slower (docs/archive.md)."""
    reserve = min(REBUILD_RESERVE_S, 0.2 * budget * 60) if budget is not None else 0.0
    deadline = start + budget * 60 - reserve if budget is not None else None
    hard_stop = start + budget * 60 - reserve / 2 if budget is not None else None
    stack = not gpu_ids
    return Schedule(cpu_shares(workers), gpu_ids, deadline, hard_stop, stack)


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
    (:func:`normbench.sweep.vectorized.seed_stack.can_stack`) and its batch is at most ``CPU_STACK_MAX_BATCH`` rows
    (results/perf: 10 majority seeds at batch 256 take 0.61x the time of 10 lone runs, at batch 4096 1.8x)."""
    batch, stackable = stack_traits(slot.run.config)  # the task's own module: the plan built it already
    return stackable and batch is not None and batch <= CPU_STACK_MAX_BATCH


def next_batch(queue_left: list[Slot], stack: bool, fits: Callable[[list[Slot]], bool] | None = None) -> list[Slot]:
    """The runs to launch next: the first queued one, and with ``stack`` every other not-started run of its queue item
    and variant, where stacking their seeds pays (:func:`stacking_pays`). Under a budget (``fits``), a stack keeps no
    checkpoint before its end, so it is launched only where ``fits(stack)`` (it is expected to end in the time left);
    otherwise the seeds train one by one, each checkpointed at the deadline."""
    first = queue_left.pop(0)
    if not stack or first.alone or first.state != "not started" or not stacking_pays(first):
        return [first]
    mates = [
        s
        for s in queue_left
        if s.item is first.item and s.run.variant == first.run.variant and s.state == "not started" and not s.alone
    ]
    if fits is not None and not fits([first, *mates]):
        return [first]
    for slot in mates:
        queue_left.remove(slot)
    return [first, *mates]


def stack_fits(times: RunTimes, deadline: float) -> Callable[[list[Slot]], bool]:
    """Whether a stack of seeds is expected to end before ``deadline``: the sum of its seeds' expected times alone (a
    stack takes less: results/perf), known for every seed, within the time left."""

    def fits(batch: list[Slot]) -> bool:
        expected = [times.expected_s(slot) for slot in batch]
        return all(t is not None for t in expected) and sum(t or 0.0 for t in expected) <= deadline - time.time()

    return fits


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


def train_queue(
    state: BakeState, options: BakeOptions, schedule: Schedule, release: Callable[[list[Slot]], None] | None = None
) -> set[str]:
    """Launch the queued runs (``state.queue_left``) as slots free up (``schedule.stack``: seeds of a variant stacked
    where that pays), archive each as it ends; returns the boards whose runs changed. A seed its stack did not finish
    goes back to the front of the queue, to train alone. ``release(pending)``, called before the first launch and
    after each run ends, queues the runs that waited for a grid no longer pending. At ``schedule.hard_stop`` the runs
    still going are stopped (:func:`stop_runs`): a run past the deadline's last training step does not see the
    deadline."""
    changed: set[str] = set()
    hard_stop = schedule.hard_stop
    if release is not None:
        release(state.pending())
    while state.queue_left or state.running:
        launch_free(state, options, schedule)
        if not state.running:
            break
        if hard_stop is not None and time.time() >= hard_stop:
            stop_late(state)
            hard_stop = None
        time.sleep(1.0)
        changed |= collect_ended(state, options, release)
        if state.progress is not None:
            state.progress.tick(state.total(), state.queue_left, state.waiting)
    return changed


def launch_free(state: BakeState, options: BakeOptions, schedule: Schedule) -> None:
    """Launch the next queued runs on the free slots, while the deadline leaves at least ``MIN_SLOT_S`` seconds; a run
    that would lose its work at the deadline is held back (:func:`hold_back`)."""
    free = [i for i in range(len(schedule.shares)) if i not in state.running]
    time_left = None if schedule.deadline is None else schedule.deadline - time.time()
    while free and state.queue_left and (time_left is None or time_left > MIN_SLOT_S):
        if time_left is not None:
            hold_back(state, time_left)
            if not state.queue_left:
                break
        fits = stack_fits(state.times or RunTimes(state.archive), schedule.deadline) if schedule.deadline else None
        i, batch = free.pop(0), next_batch(state.queue_left, schedule.stack, fits)
        log = record_file(batch[0].run).parent / "bake.log"
        gpu = schedule.gpu_ids[i % len(schedule.gpu_ids)] if schedule.gpu_ids else None
        command = run_command(batch, options.runs_dir, options.results_dir, gpu)
        state.running[i] = (launch(command, schedule.shares[i], schedule.deadline, log), batch)
        if state.progress is not None:
            state.progress.launch(i, batch, log)


def hold_back(state: BakeState, time_left: float) -> None:
    """Take out of the front of the queue each run expected to outlast ``time_left`` whose checkpoint the archive
    cannot carry to the next bake (:func:`normbench.sweep.baking.fits.lost_if_stopped`), said in one line each, until
    the next run is one worth starting; the next bake, with the time, starts those."""
    state.times = state.times or RunTimes(state.archive)
    while state.queue_left and (expected := lost_if_stopped(state.queue_left[0], state.times, time_left)) is not None:
        slot = state.queue_left.pop(0)
        state.held.append(slot)
        print(
            f"normbench: bake: {slot.run.variant} seed {slot.run.seed} ({slot.item.board}) not started: expected "
            f"to take {expected / 60:.0f} min with {time_left / 60:.0f} min left, and its checkpoint is too large "
            "to carry to the next bake; a bake with the time starts it",
            flush=True,
        )


def stop_late(state: BakeState) -> None:
    """Stop the runs still going at the end of the budget (past training: their tests and analyses), said in one
    line; each resumes from its checkpoint."""
    late = [proc for proc, _ in state.running.values() if proc.poll() is None]
    if late:
        print(
            f"normbench: bake: {len(late)} run(s) still going at the end of the budget (after training: tests "
            "and analyses) stopped; each resumes from its checkpoint",
            file=sys.stderr,
        )
        stop_runs(late, grace_s=STOP_GRACE_S)


def collect_ended(state: BakeState, options: BakeOptions, release: Callable[[list[Slot]], None] | None) -> set[str]:
    """Archive each run that has ended (with its checkpoint, when unfinished) and free its slot; a seed its stack did
    not finish is queued first, to train alone. Returns the boards of the runs added, continued or restarted."""
    changed: set[str] = set()
    for i, (proc, batch) in list(state.running.items()):
        if proc.poll() is None:
            continue
        del state.running[i]
        outcome = archive_runs(
            state.archive, [s.run for s in batch], uncommitted=options.uncommitted, checkpoint=True, quiet=True
        )
        state.report.archived.update(outcome)
        if state.progress is not None:
            said = ", ".join(f"{what}: {n}" for what, n in sorted(outcome.items()) if n) or "nothing archived"
            state.progress.ended(i, state.total(), f"archive {said}")
        if outcome.get("added") or outcome.get("continued") or outcome.get("restarted"):
            changed.update(board for slot in batch for board in slot.boards)
        if len(batch) > 1:  # a seed the stack did not finish (e.g. a norm vmap cannot map) is trained alone
            state.queue_left[:0] = [dataclasses.replace(s, alone=True) for s in batch if not is_finished(s.run)]
        if release is not None:
            release(state.pending())
    return changed


def train_or_stop(
    state: BakeState, options: BakeOptions, schedule: Schedule, release: Callable[[list[Slot]], None] | None
) -> set[str]:
    """:func:`train_queue`, stopping the runs it started when it is stopped: Ctrl-C or SIGTERM stops them too,
    checkpointed and archived, then the bake ends; a file of the archive that cannot be written (a full disk) is one
    line naming it, the runs stopped."""
    try:
        return train_queue(state, options, schedule, release)
    except KeyboardInterrupt:
        stop_runs([proc for proc, _ in state.running.values()])
        started = [slot.run for _, batch in state.running.values() for slot in batch]
        archive_runs(state.archive, started, uncommitted=options.uncommitted, checkpoint=True, quiet=True)
        raise
    except OSError:
        stop_runs([proc for proc, _ in state.running.values()])
        raise
