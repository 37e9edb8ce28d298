"""Sweep backends: train the planned runs that are not finished, here or in subprocesses.

:func:`execute` skips finished runs (a ``done`` or ``diverged`` record of the same config hash),
resumes interrupted ones from their last checkpoint (see :func:`normbench.training.cli.start_point`)
and continues past failures, which it reports at the end. Backends: in this process, one after
another; ``workers`` concurrent ``normbench fit`` subprocesses with the CPU threads split between
them; one subprocess per GPU (or per group of ``gpus_per_run`` GPUs, e.g. for DDP inside a run);
and any slice ``shard=(i, n)`` of the runs, for job arrays on a cluster.
"""

from __future__ import annotations

import ctypes
import math
import os
import queue
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import torch
from tqdm.auto import tqdm

from normbench.sweep.plan import Run
from normbench.training.cli import train
from normbench.training.progress import latest_progress, progress_interval
from normbench.training.records import FINISHED, read_record
from normbench.training.rundir import SWEEP_LOG


def is_finished(run: Run) -> bool:
    """True when ``run`` has a finished record for the same config; corrupt records are reported and redone."""
    if run.record_path is None or not run.record_path.exists():
        return False
    try:
        record = read_record(run.record_path)
    except ValueError as exc:
        tqdm.write(f"normbench: {exc}; the run will be redone", file=sys.stderr)
        return False
    return record.get("status") in FINISHED and record.get("config_hash") == run.config_hash


def needs_subprocess(runs: list[Run]) -> bool:
    """True when a run may start several processes (DDP): Lightning then re-launches the command,
    which must be that run's own ``normbench fit``, not the sweep."""
    for run in runs:
        t = run.trainer
        devices = t.get("devices", "auto")
        if (str(t.get("strategy", "auto")) not in ("auto", "single_device")
                or str(devices) not in ("1", "auto", "[0]") or int(t.get("num_nodes") or 1) > 1):
            return True
    return torch.cuda.device_count() > 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the child gets SIGKILL when the sweep dies, so a killed sweep leaves no orphan run."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def run_subprocess(run: Run, env: dict[str, str], relay: float | None = None) -> int:
    """``normbench fit <run args>`` in a child process; its output goes to ``<run dir>/sweep.log``.

    With ``relay`` (seconds), the child's latest progress line is shown here at most that often
    (:mod:`normbench.training.progress`), so every worker of a sweep reports its own step, loss and ETA.
    """
    assert run.record_path is not None
    run.record_path.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "normbench", "fit", *run.args, "--trainer.enable_progress_bar=false"]
    log_path = run.record_path.parent / SWEEP_LOG
    with open(log_path, "ab") as log:
        start = log.tell()
        preexec = _die_with_parent if sys.platform.startswith("linux") else None
        child = subprocess.Popen(cmd, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT,
                                 preexec_fn=preexec)
        shown, shown_at = None, 0.0
        try:
            while True:
                try:  # poll often, so the first line shows as soon as the child prints it; then one per `relay`
                    code = child.wait(timeout=min(relay, 2.0) if relay else None)
                except subprocess.TimeoutExpired:
                    code = None
                line = latest_progress(log_path, since=start) if relay else None
                if line and line != shown and (code is not None or shown is None or time.monotonic() - shown_at >= relay):
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
        groups = [gpus[i:i + gpus_per_run] for i in range(0, len(gpus), gpus_per_run)]
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


def execute(runs: list[Run], workers: int = 1, progress: bool = True, gpus: list[int] | None = None,
            gpus_per_run: int = 1, subprocesses: bool | None = None, relay: float | None = None) -> Outcome:
    """Train the unfinished ``runs``; a failing run is recorded and reported, the others go on.

    ``subprocesses=None`` picks: in this process when ``workers == 1``, no ``gpus`` are given and
    no run asks for several devices; otherwise one ``normbench fit`` subprocess per run, whose progress
    lines are relayed every ``relay`` seconds (default: the progress interval, 30 s).
    """
    if workers < 1:
        raise ValueError(f"workers: must be >= 1, got {workers}")
    outcome = Outcome()
    todo = [r for r in runs if not is_finished(r)]
    outcome.skipped = len(runs) - len(todo)
    if outcome.skipped:
        tqdm.write(f"normbench: {outcome.skipped} of {len(runs)} runs already finished, skipping them", file=sys.stderr)
    workers = min(workers, max(1, len(todo)))  # fewer runs than workers: each gets more threads
    if subprocesses is None:
        subprocesses = workers > 1 or bool(gpus) or needs_subprocess(todo)
    bar = tqdm(total=len(todo), desc="runs", unit="run", disable=not progress or not todo)
    if relay is None:
        relay = progress_interval()
    if not subprocesses:
        for run in todo:
            try:
                train(run.args + ([] if progress else ["--trainer.enable_progress_bar=false"]))
                outcome.trained.append(run)
            except Exception as exc:  # noqa: BLE001 - the record says "failed"; the sweep goes on
                outcome.failed.append((run, f"{type(exc).__name__}: {exc}"))
            bar.update()
    elif todo:
        slots: queue.Queue[dict[str, str]] = queue.Queue()
        for slot in device_slots(workers, gpus, gpus_per_run):
            slots.put(slot)

        def job(run: Run) -> int:
            env = slots.get()
            try:
                return run_subprocess(run, env, relay)
            finally:
                slots.put(env)

        with ThreadPoolExecutor(max_workers=slots.qsize()) as pool:
            futures = {pool.submit(job, run): run for run in todo}
            for fut in as_completed(futures):
                run = futures[fut]
                code = fut.result()
                if code == 0:
                    outcome.trained.append(run)
                else:
                    outcome.failed.append((run, f"exit status {code}, see {run.record_path.parent / SWEEP_LOG}"))
                bar.set_postfix_str(f"{run.variant} seed {run.seed}")
                bar.update()
    bar.close()
    for run, why in outcome.failed:
        tqdm.write(f"normbench: run {run.variant} seed {run.seed} failed: {why}", file=sys.stderr)
    return outcome
