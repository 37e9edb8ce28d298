"""What a bake will cost: every run it will train, the tuned-rate runs that wait for their grid included, and the time
per task on this machine's platform class, from the archive's per-run times (:class:`~normbench.sweep.baking.fits.
RunTimes`).

A task's estimate is the sum of its runs' expected times over the concurrent runs: t = sum_runs (seconds per step x
steps left) / workers. A run of a config the archive has never trained (a new norm's) takes the seconds per step of
the task's runs of the same length; where the caller gives ``scale`` (a card: its norm's forward + backward time over
LayerNorm's, measured), the estimate is a range, from that (the norm costs what LayerNorm does) to that time scaled by
the factor (as if the whole step slowed as the norm does). A run with no time to read is counted apart ("no
estimate"), never guessed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from normbench.sweep.baking.fits import RunTimes, max_steps_of
from normbench.sweep.baking.queue import QueueItem, Slot, Waiting
from normbench.training.config import load_config
from normbench.training.monitoring.progress import duration

CostScale = Callable[[QueueItem, str], float]
"""A factor on the expected time of a queued item's variant (``scale(item, variant)``)."""


@dataclass
class TaskEstimate:
    """One task's runs to train and their expected seconds (of one run after another; ``unknown``: runs with none)."""

    task: str
    runs: int = 0
    seconds: float = 0.0
    scaled: float = 0.0  # ``seconds`` with the runs the archive has not timed scaled by ``scale``
    unknown: int = 0
    waiting: int = 0  # of ``runs``: those at tuned rates, planned once their grid has chosen

    def text(self, workers: int) -> str:
        """``lm: 40 runs (16 at the tuned rates), about 8.1 h`` or ``..., no estimate``."""
        tuned = f" ({self.waiting} at the tuned rates)" if self.waiting else ""
        known = self.runs - self.unknown
        if not known:
            return f"{self.task}: {self.runs} runs{tuned}, no estimate (no finished run of the task here to time)"
        part = f" for {known} of them ({self.unknown} with no finished run like them to time)" if self.unknown else ""
        return f"{self.task}: {self.runs} runs{tuned}, {span(self.seconds, self.scaled, workers)}{part}"


def span(seconds: float, scaled: float, workers: int) -> str:
    """``about 2h31m`` or ``about 2h31m-3h02m`` (the bound apart where it differs by more than 5%)."""
    low, high = sorted((seconds / max(workers, 1), scaled / max(workers, 1)))
    text = duration(low)[:-3] if low >= 3600 else duration(low)
    if high > 1.05 * low:
        return f"about {text} to {duration(high)[:-3] if high >= 3600 else duration(high)}"
    return f"about {text}"


def waiting_runs(waiting: Waiting) -> list[tuple[QueueItem, str, int]]:
    """Each waiting item (its board judged at tuned rates), the grid board it waits for, and the runs it will add: its
    variants x seeds (the runs already archived among them are not known until its rates are chosen: at most)."""
    return [(item, choice, len(item.variants) * len(item.seeds)) for item, choice in waiting]


def estimate(todo: list[Slot], waiting: Waiting, times: RunTimes, scale: CostScale | None = None) -> list[TaskEstimate]:
    """The runs to train per task, in the order the tasks first appear, with their expected seconds (one after
    another). ``scale(item, variant)``: a factor on the time of a run whose own config the archive has not timed."""
    out: dict[str, TaskEstimate] = {}
    for slot in todo:
        row = out.setdefault(slot.item.task, TaskEstimate(slot.item.task))
        row.runs += 1
        own = times.own_per_step(slot)
        per_step = own if own is not None else times.task_per_step(slot.item.task, max_steps_of(slot))
        if per_step is None:
            row.unknown += 1
            continue
        factor = scale(slot.item, slot.run.variant) if scale is not None and own is None else 1.0
        row.seconds += per_step * slot.steps_left
        row.scaled += per_step * factor * slot.steps_left
    for item, _, runs in waiting_runs(waiting):
        row = out.setdefault(item.task, TaskEstimate(item.task))
        row.runs += runs
        row.waiting += runs
        max_steps = int((load_config(item.config_arg, item.preset).get("trainer") or {}).get("max_steps") or 0)
        per_step = times.task_per_step(item.task, max_steps)
        if per_step is None:
            row.unknown += runs
            continue
        for variant in item.variants:
            factor = scale(item, variant) if scale is not None else 1.0
            row.seconds += per_step * max_steps * len(item.seeds)
            row.scaled += per_step * factor * max_steps * len(item.seeds)
    return list(out.values())


def estimate_lines(rows: list[TaskEstimate], workers: int, device: str) -> list[str]:
    """The dry run's lines of cost: one per task, then the whole (where every task has an estimate)."""
    where = f"on this machine's platform class ({device}, {workers} at a time)"
    lines = [f"normbench: dry run: time {where}, from the archive's per-run times:"]
    lines += [f"  {row.text(workers)}" for row in rows]
    if rows and all(row.runs > row.unknown for row in rows):
        total, scaled = sum(row.seconds for row in rows), sum(row.scaled for row in rows)
        partial = " (of the runs with an estimate)" if any(row.unknown for row in rows) else ""
        lines.append(f"  in all: {span(total, scaled, workers)}{partial}")
    return lines
