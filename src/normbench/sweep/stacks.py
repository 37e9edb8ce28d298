"""Stacks of seeds (:mod:`normbench.sweep.vectorized`) as sweep jobs: one after another in this process,
or as concurrent subprocesses over CPU thread slots or GPUs, like lone runs (:mod:`normbench.sweep.backends`).

A stack's subprocess is ``python -m normbench.sweep.stacks <first seed's run dir>/stack.json``, the file
holding the seeds' fit arguments (each seed's carries its whole config: too long for one command-line
argument at 10 seeds); its output goes to the first seed's ``sweep.log``. Ctrl-C stops it as it stops a lone run's
subprocess: its seeds are recorded ``interrupted`` and the same command trains them again.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from normbench.io import atomic_write_json, quiet_third_party, show_bars
from normbench.sweep.backends import (
    Outcome,
    device_slots,
    exit_reason,
    is_finished,
    report_failed,
    run_command,
    run_in_slots,
    unfinished,
)
from normbench.sweep.plan import Run
from normbench.training.monitoring.progress import progress_interval
from normbench.training.run.rundir import SWEEP_LOG

NO_BAR = "--trainer.enable_progress_bar=false"


def stacks_of(runs: list[Run], stack_size: int) -> list[list[Run]]:
    """``runs`` grouped by variant, each group cut into stacks of at most ``stack_size`` seeds."""
    by_variant: dict[str, list[Run]] = {}
    for run in runs:
        by_variant.setdefault(run.variant, []).append(run)
    return [group[i : i + stack_size] for group in by_variant.values() for i in range(0, len(group), stack_size)]


STACK_ARGS = "stack.json"


def stack_command(stack: list[Run]) -> list[str]:
    """The command line of a stack's own process; writes the seeds' arguments to ``stack.json`` beside its log."""
    path = first_log(stack).with_name(STACK_ARGS)
    atomic_write_json(path, [run.args + [NO_BAR] for run in stack])
    return [sys.executable, "-m", "normbench.sweep.stacks", str(path)]


def execute_vectorized(
    runs: list[Run], stack_size: int, progress: bool = True, workers: int = 1, gpus: list[int] | None = None
) -> Outcome:
    """Train the unfinished ``runs`` in stacks of up to ``stack_size`` seeds of one variant.

    ``workers == 1`` without ``gpus``: the stacks one after another in this process. Otherwise each stack
    is a subprocess, as many at once as :func:`~normbench.sweep.backends.device_slots` gives (``workers``
    CPU slots with the threads split between them, or ``workers`` slots spread over ``gpus``).
    """
    outcome = Outcome()
    stacks = stacks_of(unfinished(runs, outcome), stack_size)
    bar = tqdm(total=len(stacks), desc="stacks", unit="stack", disable=not show_bars(progress) or not stacks)
    if workers > 1 or gpus:
        slots = device_slots(workers, gpus, 1) if not gpus or workers <= len(gpus) else gpu_slots(workers, gpus)
        stacks_in_subprocesses(stacks, outcome, bar, slots)
    else:
        for stack in stacks:
            train_in_process(stack, outcome)
            bar.update()
    bar.close()
    report_failed(outcome)
    return outcome


def gpu_slots(workers: int, gpus: list[int]) -> list[dict[str, str]]:
    """``workers`` slots spread round-robin over ``gpus`` (several stacks share a GPU), CPU threads split evenly."""
    per_gpu = device_slots(len(gpus), gpus, 1)
    threads = max(1, int(per_gpu[0]["OMP_NUM_THREADS"]) * len(gpus) // workers)
    return [{**per_gpu[i % len(gpus)], "OMP_NUM_THREADS": str(threads)} for i in range(workers)]


def train_in_process(stack: list[Run], outcome: Outcome) -> None:
    from normbench.sweep.vectorized.fit import train_stack  # the training stack is imported only where it runs

    try:
        trained = {str(path) for path in train_stack([run.args + [NO_BAR] for run in stack])}
        outcome.trained += [run for run in stack if str(run.record_path) in trained]
        outcome.busy += [run for run in stack if str(run.record_path) not in trained and not is_finished(run)]
    except Exception as exc:  # noqa: BLE001 - records say "failed"; the sweep goes on
        outcome.failed += [(run, f"{type(exc).__name__}: {exc}") for run in stack]


def first_log(stack: list[Run]) -> Path:
    """Where a stack's subprocess writes its output: its first seed's ``sweep.log``."""
    assert stack[0].record_path is not None
    return stack[0].record_path.parent / SWEEP_LOG


def stacks_in_subprocesses(
    stacks: list[list[Run]], outcome: Outcome, bar: tqdm, slots_env: list[dict[str, str]]
) -> None:
    """Each stack as a subprocess, as many at once as there are ``slots_env``; Ctrl-C as
    :func:`~normbench.sweep.backends.run_in_slots` says."""
    relay = progress_interval()

    def launch(stack: list[Run], env: dict[str, str], stop: threading.Event) -> int:
        return run_command(stack_command(stack), first_log(stack), env, relay, stop)

    def done(stack: list[Run], code: int | None) -> None:
        for run in stack:
            assert run.record_path is not None
            if is_finished(run):
                outcome.trained.append(run)
            elif code == 0:  # left out of its stack: another process held it (or has finished it meanwhile)
                outcome.busy.append(run)
            else:
                outcome.failed.append((run, "stack " + exit_reason(code, first_log(stack))))
        bar.set_postfix_str(f"{stack[0].variant} seeds {','.join(str(r.seed) for r in stack)}")
        bar.update()

    run_in_slots(stacks, slots_env, launch, done)


def main(argv: list[str] | None = None) -> int:
    """A stack's process: train the seeds whose fit arguments the JSON file ``argv[0]`` lists; 130 after Ctrl-C."""
    from normbench.sweep.vectorized.fit import train_stack

    quiet_third_party()
    arg_lists: Any = json.loads(Path((argv or sys.argv[1:])[0]).read_text())
    try:
        train_stack(arg_lists)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
