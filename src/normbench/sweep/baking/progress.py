"""A bake a person can follow: one line per running run at a steady interval, and one as each run ends.

    normbench: bake: run 3 of 84 (cards/pnorm/majority, pre/pnorm seed 0): step 1200/5000 (24%), loss 0.41,
    5.1 steps/s, ETA 12m25s; the bake: 2 of 84 done, ETA about 1h20m

Each run's own progress line (:mod:`normbench.training.monitoring.progress`) is read from its log; the bake's ETA is
the time left of the runs going (their steps left over their rate) and of those queued (:mod:`~normbench.sweep.
baking.estimate`), over the concurrent runs. The interval is ``$NORMBENCH_PROGRESS_SECONDS`` (default 30).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from normbench.sweep.baking.estimate import estimate
from normbench.sweep.baking.fits import RunTimes
from normbench.sweep.baking.queue import Slot, Waiting
from normbench.training.monitoring.progress import PREFIX, duration, latest_progress

LINE = "normbench: bake: "
STEP = re.compile(r"step (\d+)/(\d+).*?([0-9.]+(?:e[+-]?\d+)?) steps/s")


@dataclass
class Launched:
    """A run (or a stack of seeds) the bake started: its number among the bake's runs, its log and where its output
    begins in it, and when it started."""

    number: int
    batch: list[Slot]
    log: Path
    offset: int
    at: float


@dataclass
class BakeProgress:
    """What the bake prints of its runs as they train (:meth:`tick`) and end (:meth:`ended`)."""

    times: RunTimes
    workers: int
    interval: float
    launched: dict[int, Launched] = field(default_factory=dict)
    started: int = 0
    done: int = 0
    last: float = field(default_factory=time.monotonic)

    def launch(self, slot_index: int, batch: list[Slot], log: Path) -> None:
        """Note a run started on ``slot_index``, its output appended to ``log``."""
        offset = log.stat().st_size if log.is_file() else 0
        self.launched[slot_index] = Launched(self.started + 1, batch, log, offset, time.monotonic())
        self.started += len(batch)

    def tick(self, total: int, queue_left: list[Slot], waiting: Waiting) -> None:
        """Every ``interval`` seconds: one line per run going (``total``: the runs the bake trains)."""
        if time.monotonic() - self.last < self.interval:
            return
        self.last = time.monotonic()
        left = [self.left_s(run) for run in self.launched.values()]
        queued = estimate(queue_left, waiting, self.times)
        unknown = any(s is None for s in left) or any(row.unknown for row in queued)
        seconds = (sum(s or 0.0 for s in left) + sum(row.seconds for row in queued)) / max(self.workers, 1)
        eta = f"ETA about {duration(seconds)}" + (" (some runs have no estimate)" if unknown else "")
        for run in self.launched.values():
            line = latest_progress(run.log, since=run.offset)
            said = line.split(": ", 2)[-1] if line and line.startswith(PREFIX) else "starting"
            print(f"{LINE}{self.name(run, total)}: {said}; the bake: {self.done} of {total} done, {eta}", flush=True)

    def ended(self, slot_index: int, total: int, outcome: str) -> None:
        """One line as a run ends: its number, how long it took and what the archive made of it."""
        run = self.launched.pop(slot_index, None)
        if run is None:
            return
        self.done += len(run.batch)
        took = duration(time.monotonic() - run.at)
        print(f"{LINE}{self.name(run, total)} ended after {took} ({outcome}); {self.done} of {total} done", flush=True)

    @staticmethod
    def name(run: Launched, total: int) -> str:
        """``run 3 of 84 (board, variant seed 0)``; a stack: ``runs 3-5 of 84 (board, variant seeds 0, 1, 2)``."""
        first = run.batch[0]
        if len(run.batch) == 1:
            return f"run {run.number} of {total} ({first.item.board}, {first.run.variant} seed {first.run.seed})"
        seeds = ", ".join(str(s.run.seed) for s in run.batch)
        last = run.number + len(run.batch) - 1
        return f"runs {run.number}-{last} of {total} ({first.item.board}, {first.run.variant} seeds {seeds})"

    def left_s(self, run: Launched) -> float | None:
        """A running run's seconds left: its steps left over its rate, from its last progress line, else what the
        archive expects less the time it has run (``None``: unknown)."""
        line = latest_progress(run.log, since=run.offset)
        found = STEP.search(line) if line else None
        if found and float(found.group(3)) > 0:
            return (int(found.group(2)) - int(found.group(1))) / float(found.group(3))
        expected = self.times.expected_s(run.batch[0])
        return None if expected is None else max(expected - (time.monotonic() - run.at), 0.0)
