"""Sweep backends: train the planned runs that are not finished, here or in subprocesses.

:func:`execute` skips finished runs (a ``done`` or ``diverged`` record of the same config hash, whose
final checkpoint is readable; a run whose record or checkpoint is broken is reported and redone),
checks each distinct data configuration once before any run starts
(:func:`normbench.data.preflight.check_data_configs`), resumes interrupted ones from their last
checkpoint (see :func:`normbench.training.run.resume.start_point`), skips runs another process is training
(:mod:`normbench.training.run.runlock`) and continues past failures, which it reports at the end.
Backends: in this process, one after another; ``workers`` concurrent ``normbench fit`` subprocesses
with the CPU threads split between them; one subprocess per GPU (or per group of ``gpus_per_run``
GPUs, e.g. for DDP inside a run); and any slice ``shard=(i, n)`` of the runs, for job arrays on a
cluster. Ctrl-C stops every backend the same way: running runs are recorded as ``interrupted`` (their
subprocesses get the SIGINT too), no further run starts, and ``KeyboardInterrupt`` reaches the caller.
SIGTERM does the same under ``normbench`` (:func:`normbench.training.stopping.sigterm.sigterm_interrupts`), with
``Terminated``, a kind of ``KeyboardInterrupt``.
"""

from __future__ import annotations

import ctypes
import math
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import torch
from tqdm.auto import tqdm

from normbench.data.preflight import check_data_configs
from normbench.io import show_bars
from normbench.sweep.plan import Run
from normbench.training.fit import train
from normbench.training.monitoring.progress import latest_progress, progress_interval
from normbench.training.run.rundir import SWEEP_LOG
from normbench.training.run.runlock import BUSY_STATUS, RunBusy, is_locked
from normbench.training.run.verify import finished_status
from normbench.training.stopping.sigterm import TERMINATED_STATUS

# `normbench fit` after Ctrl-C or SIGTERM; a child killed by SIGINT or SIGTERM itself
INTERRUPTED_STATUSES = (130, TERMINATED_STATUS, -signal.SIGINT, -signal.SIGTERM)
LAUNCH_FAILED = 127  # a job whose process could not be started (the shell's status for a command not run)
STOP_GRACE_S = 60.0  # how long a stopped subprocess may take to record its interruption before it is killed


def is_finished(run: Run) -> bool:
    """True when ``run`` has a finished record for the same config; a corrupt or edited record, or a missing or
    unreadable final checkpoint, is reported and the run redone."""
    if run.record_path is None:
        return False
    try:
        return finished_status(run.record_path, run.config_hash) is not None
    except ValueError as exc:
        tqdm.write(f"normbench: {exc}; the run will be redone", file=sys.stderr)
        return False


def check_data_of(runs: list[Run]) -> None:
    """Each distinct data configuration of ``runs`` loaded once, before any of them starts: bad data is one
    ``ValueError`` (:func:`normbench.data.preflight.check_data_configs`)."""
    check_data_configs(run.data for run in runs if run.data)


def needs_subprocess(runs: list[Run]) -> bool:
    """True when a run may start several processes (DDP): Lightning then re-launches the command,
    which must be that run's own ``normbench fit``, not the sweep."""
    for run in runs:
        t = run.trainer
        devices = t.get("devices", "auto")
        if (
            str(t.get("strategy", "auto")) not in ("auto", "single_device")
            or str(devices) not in ("1", "auto", "[0]")
            or int(t.get("num_nodes") or 1) > 1
        ):
            return True
    return torch.cuda.device_count() > 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the child gets SIGKILL when the sweep dies, so a killed sweep leaves no orphan run; and SIGINT, the
    sweep's way to stop it, is not ignored (a sweep started in the background by a shell inherits an ignored
    SIGINT, and so would its children: Python turns SIGINT into ``KeyboardInterrupt`` only where it is not)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def fit_command(run: Run) -> list[str]:
    """The command line of a run's own process: ``normbench fit <run args>`` without a progress bar."""
    return [sys.executable, "-m", "normbench", "fit", *run.args, "--trainer.enable_progress_bar=false"]


def run_subprocess(
    run: Run, env: dict[str, str], relay: float | None = None, stop: threading.Event | None = None
) -> int:
    """``normbench fit <run args>`` in a child process; its output goes to ``<run dir>/sweep.log``.

    With ``relay`` (seconds), the child's latest progress line is shown here at most that often
    (:mod:`normbench.training.monitoring.progress`), so every worker of a sweep reports its own step, loss and ETA.
    The child runs in a session of its own, so a Ctrl-C in the terminal reaches the sweep alone; once
    ``stop`` is set (the sweep's Ctrl-C), the child gets one SIGINT: it records the run as
    ``interrupted`` and exits 130; one that takes longer than ``STOP_GRACE_S`` is killed.
    """
    assert run.record_path is not None
    return run_command(fit_command(run), run.record_path.parent / SWEEP_LOG, env, relay, stop)


def run_command(
    cmd: list[str], log_path: Path, env: dict[str, str], relay: float | None = None, stop: threading.Event | None = None
) -> int:
    """``cmd`` in a child process with ``env`` added, its output appended to ``log_path``; returns its exit
    status. Progress relay, Ctrl-C and cleanup as :func:`run_subprocess` describes."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        start = log.tell()
        preexec = _die_with_parent if sys.platform.startswith("linux") else None
        # a session of its own: a Ctrl-C in the terminal reaches the sweep alone, which passes it on once
        child = subprocess.Popen(
            cmd,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=preexec,
            start_new_session=True,
        )
        shown, shown_at, stopped_at = None, 0.0, None
        try:
            while True:
                try:  # poll often, so the first line shows as soon as the child prints it; then one per `relay`
                    code = child.wait(timeout=min(relay, 1.0) if relay else 1.0)
                except subprocess.TimeoutExpired:
                    code = None
                if code is None and stop is not None and stop.is_set():
                    if stopped_at is None:
                        child.send_signal(signal.SIGINT)
                        stopped_at = time.monotonic()
                    elif time.monotonic() - stopped_at > STOP_GRACE_S:
                        child.kill()
                line = latest_progress(log_path, since=start) if relay else None
                if (
                    line
                    and line != shown
                    and (code is not None or shown is None or time.monotonic() - shown_at >= (relay or 0.0))
                ):
                    tqdm.write(line, file=sys.stderr)  # the run's last line too, when it ends
                    shown, shown_at = line, time.monotonic()
                if code is not None:
                    return code
        finally:  # interrupted, or the relay itself failed: no orphan run
            if child.poll() is None:
                child.kill()
                child.wait()


CGROUP_CPU_MAX = Path("/sys/fs/cgroup/cpu.max")  # cgroup v2: "<quota> <period>" or "max <period>"


def available_cpus(cpu_max: Path | None = None) -> int:
    """The CPU cores this process may use: its affinity mask, capped by a cgroup CPU quota (containers;
    ``cpu_max`` defaults to the cgroup v2 file)."""
    cpu_max = cpu_max or CGROUP_CPU_MAX
    try:
        cores = len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # pragma: no cover - macOS, Windows
        cores = os.cpu_count() or 1
    try:
        quota, period = cpu_max.read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return cores


def default_workers(gpus: list[int] | None = None, gpus_per_run: int = 1) -> int:
    """Concurrent runs when none is asked for: one per group of ``gpus_per_run`` GPUs with ``gpus``;
    one at a time on a machine with a GPU but no ``gpus`` (runs would share GPU 0); else one per
    available CPU core (each run then gets one thread)."""
    if gpus:
        return max(1, len(gpus) // max(1, gpus_per_run))
    if torch.cuda.is_available():
        return 1
    return available_cpus()


def device_slots(workers: int, gpus: list[int] | None, gpus_per_run: int) -> list[dict[str, str]]:
    """Environment of each concurrent subprocess: its CPU threads and, with ``gpus``, its GPUs."""
    if gpus:
        if gpus_per_run < 1 or len(gpus) % gpus_per_run:
            raise ValueError(f"gpus_per_run: must divide the {len(gpus)} GPUs given, got {gpus_per_run}")
        groups = [gpus[i : i + gpus_per_run] for i in range(0, len(gpus), gpus_per_run)]
        threads = max(1, available_cpus() // len(groups))
        return [{"CUDA_VISIBLE_DEVICES": ",".join(map(str, g)), "OMP_NUM_THREADS": str(threads)} for g in groups]
    threads = max(1, available_cpus() // workers)
    return [{"OMP_NUM_THREADS": str(threads)} for _ in range(workers)]


@dataclass
class Outcome:
    """What :func:`execute` did."""

    skipped: int = 0
    trained: list[Run] = field(default_factory=list)
    failed: list[tuple[Run, str]] = field(default_factory=list)
    busy: list[Run] = field(default_factory=list)  # being trained by another process: skipped


def execute(
    runs: list[Run],
    workers: int = 1,
    progress: bool = True,
    gpus: list[int] | None = None,
    gpus_per_run: int = 1,
    subprocesses: bool | None = None,
    relay: float | None = None,
) -> Outcome:
    """Train the unfinished ``runs``; a failing run is recorded and reported, the others go on.

    Their data is checked first (:func:`check_data_of`): bad data raises one ``ValueError`` before any
    run starts. A run another process is training is skipped with one line (``Outcome.busy``).
    ``subprocesses=None`` picks: in this process when ``workers == 1``, no ``gpus`` are given and
    no run asks for several devices; otherwise one ``normbench fit`` subprocess per run, whose progress
    lines are relayed every ``relay`` seconds (default: the progress interval, 30 s). Ctrl-C
    (``KeyboardInterrupt``) stops the sweep: no run starts after it, the running ones are recorded
    as ``interrupted``, and it is raised again.
    """
    if workers < 1:
        raise ValueError(f"workers: must be >= 1, got {workers}")
    outcome = Outcome()
    todo = unfinished(runs, outcome)
    workers = min(workers, max(1, len(todo)))  # fewer runs than workers: each gets more threads
    if subprocesses is None:
        subprocesses = workers > 1 or bool(gpus) or needs_subprocess(todo)
    bar = tqdm(total=len(todo), desc="runs", unit="run", disable=not show_bars(progress) or not todo)
    if relay is None:
        relay = progress_interval()
    if not subprocesses:
        for run in todo:
            try:
                train(run.args + ([] if progress else ["--trainer.enable_progress_bar=false"]))
                outcome.trained.append(run)
            except RunBusy as exc:
                tqdm.write(f"normbench: {exc}", file=sys.stderr)
                outcome.busy.append(run)
            except Exception as exc:  # noqa: BLE001 - the record says "failed"; the sweep goes on
                outcome.failed.append((run, f"{type(exc).__name__}: {exc}"))
            bar.update()
    elif todo:
        run_in_subprocesses(todo, outcome, bar, device_slots(workers, gpus, gpus_per_run), relay)
    bar.close()
    report_failed(outcome)
    return outcome


def report_failed(outcome: Outcome) -> None:
    """One line per failed run, with why."""
    for run, why in outcome.failed:
        tqdm.write(f"normbench: run {run.variant} seed {run.seed} failed: {why}", file=sys.stderr)


def unfinished(runs: list[Run], outcome: Outcome) -> list[Run]:
    """The runs still to train, their data checked (:func:`check_data_of`); the finished ones are counted as
    ``outcome.skipped``, in one line."""
    todo = [r for r in runs if not is_finished(r)]
    outcome.skipped = len(runs) - len(todo)
    if outcome.skipped:
        tqdm.write(f"normbench: {outcome.skipped} of {len(runs)} runs already finished, skipping them", file=sys.stderr)
    check_data_of(todo)
    return todo


def exit_reason(code: int | None, log_path: Path) -> str:
    """Why a run's subprocess did not finish it, by its exit status."""
    if code in INTERRUPTED_STATUSES:
        return f"interrupted (exit status {code}); the same command resumes it"
    return f"exit status {code}, see {log_path}"


def run_in_subprocesses(
    todo: list[Run], outcome: Outcome, bar: tqdm, slots_env: list[dict[str, str]], relay: float | None
) -> None:
    """Each run of ``todo`` as a ``normbench fit`` subprocess, as many at once as there are ``slots_env``.

    A run another process holds is skipped with one line (before its subprocess starts, or reported by
    it: exit status ``BUSY_STATUS``). Ctrl-C as :func:`run_in_slots` says.
    """

    def launch(run: Run, env: dict[str, str], stop: threading.Event) -> int:
        if run.record_path is not None and is_locked(run.record_path.parent):
            return BUSY_STATUS
        return run_subprocess(run, env, relay, stop)

    def done(run: Run, code: int | None) -> None:
        assert run.record_path is not None
        if code == 0:
            outcome.trained.append(run)
        elif code == BUSY_STATUS:
            tqdm.write(f"normbench: {RunBusy(run.record_path.parent)}", file=sys.stderr)
            outcome.busy.append(run)
        else:
            outcome.failed.append((run, exit_reason(code, run.record_path.parent / SWEEP_LOG)))
        bar.set_postfix_str(f"{run.variant} seed {run.seed}")
        bar.update()

    run_in_slots(todo, slots_env, launch, done)


Job = TypeVar("Job")


def run_in_slots(
    jobs: list[Job],
    slots_env: list[dict[str, str]],
    launch: Callable[[Job, dict[str, str], threading.Event], int | None],
    done: Callable[[Job, int | None], None],
) -> None:
    """``launch(job, slot env, stop)`` of each job in a thread of its own, as many at once as there are
    ``slots_env`` (a slot is held while its job runs); ``done(job, exit status)`` here as each one ends.

    On ``KeyboardInterrupt`` (or any error here) ``stop`` is set: no further job starts (its status is
    ``None``), the running ones stop their subprocesses (:func:`run_command`) and are waited for, and
    the exception is raised again.
    """
    slots: queue.Queue[dict[str, str]] = queue.Queue()
    for slot in slots_env:
        slots.put(slot)
    stop = threading.Event()

    def job(item: Job) -> int | None:
        env = slots.get()
        try:
            return None if stop.is_set() else launch(item, env, stop)
        except OSError as exc:  # the process could not start: this job fails, the others go on
            tqdm.write(f"normbench: could not start a job: {exc}", file=sys.stderr)
            return LAUNCH_FAILED
        finally:
            slots.put(env)

    pool = ThreadPoolExecutor(max_workers=slots.qsize())
    try:
        futures = {pool.submit(job, item): item for item in jobs}
        for fut in as_completed(futures):
            done(futures[fut], fut.result())
    except BaseException:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        pool.shutdown(wait=True)
