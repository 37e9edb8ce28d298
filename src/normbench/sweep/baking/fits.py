"""Whether a queued run is worth starting in the time a bake has left.

A run stopped at the end of a budget is carried to the next bake by its checkpoint, which the archive keeps only for
small models (:data:`normbench.archive.files.writing.MAX_CHECKPOINT_BYTES`). A run whose checkpoint is larger
(SST-2's 446k-parameter encoder: about 5 MiB) loses everything it trained when the budget ends, so it is started only
when it is expected to finish: t = (seconds per step of the archive's finished runs) x (its steps left), read from the
other seeds of its config, else from the task's finished runs at the same number of steps, each on the platform
class it would train on (``cpu`` or ``gpu``: a CPU time says nothing of a GPU's). Its checkpoint is estimated as
b = 12 n bytes for n trainable parameters (fp32 weights and AdamW's two moments).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from normbench.archive.files.writing import MAX_CHECKPOINT_BYTES
from normbench.archive.record import RecordDocument
from normbench.archive.replicate import FINISHED, Replicate, first_finished
from normbench.archive.store import Archive
from normbench.sweep.baking.queue import Slot
from normbench.training.model_size import parameter_count

BYTES_PER_PARAMETER = 12  # fp32 weights + AdamW's exp_avg and exp_avg_sq
TASK_SAMPLE = 3  # finished runs of the task read for its seconds per step when a config has none of its own


def checkpoint_bytes(slot: Slot) -> int | None:
    """The expected size of the run's checkpoint (``None``: its network does not build from its config here)."""
    try:
        return BYTES_PER_PARAMETER * parameter_count(slot.run.config)
    except ValueError:
        return None


def seconds_per_step(record: RecordDocument) -> float | None:
    """A finished run's wall time per step, from its record (``None``: unfinished, or it names neither)."""
    wall, steps = record.get("wall_time_s"), record.get("final_step")
    finished = record.get("status") in FINISHED
    return float(wall) / int(steps) if finished and wall and steps else None


def max_steps_of(slot: Slot) -> int:
    """The run's ``trainer.max_steps`` (0 where none is set)."""
    return int(slot.run.trainer.get("max_steps") or 0)


@dataclass
class RunTimes:
    """Expected run times read from an archive, each config and task read once, from the replicates of the platform
    class ``device`` (``cpu``, ``gpu``: the first part of a replicate's name, :func:`~normbench.archive.replicate.
    platform_slug`)."""

    archive: Archive
    device: str = "cpu"
    by_config: dict[tuple[str, str], float | None] = field(default_factory=dict)
    by_task: dict[tuple[str, int], float | None] = field(default_factory=dict)

    def own_per_step(self, slot: Slot) -> float | None:
        """Seconds per step of the run's own config (its other seeds; ``None``: none of them finished here)."""
        task, config_hash = slot.item.task, str(slot.run.config_hash)
        if (task, config_hash) not in self.by_config:
            folder = self.archive.root / task / config_hash
            seeds = sorted(p.name for p in folder.glob("seed*")) if folder.is_dir() else []
            found = (
                first_finished(self.on_device(self.archive.replicates(task, config_hash, int(s[4:])))) for s in seeds
            )
            self.by_config[task, config_hash] = next(
                (t for rep in found if rep and (t := seconds_per_step(rep.record()))), None
            )
        return self.by_config[task, config_hash]

    def per_step(self, slot: Slot) -> float | None:
        """Seconds per step of the run's config (its other seeds), else of the task at the same ``max_steps``."""
        own = self.own_per_step(slot)
        return own if own is not None else self.task_per_step(slot.item.task, max_steps_of(slot))

    def on_device(self, reps: list[Replicate]) -> list[Replicate]:
        """The replicates of this platform class."""
        return [rep for rep in reps if rep.name.split("-", 1)[0] == self.device]

    def task_per_step(self, task: str, max_steps: int) -> float | None:
        """Seconds per step of the task's finished runs of ``max_steps`` steps (the median of the first few)."""
        if (task, max_steps) not in self.by_task:
            times = []
            for rep in self.archive.runs(task):
                if not self.on_device([rep]):
                    continue
                record = rep.record()
                if int(record.get("final_step") or -1) == max_steps and (t := seconds_per_step(record)):
                    times.append(t)
                if len(times) == TASK_SAMPLE:
                    break
            self.by_task[task, max_steps] = statistics.median(times) if times else None
        return self.by_task[task, max_steps]

    def expected_s(self, slot: Slot) -> float | None:
        """The run's expected training time: seconds per step times its steps left (``None``: unknown)."""
        per_step = self.per_step(slot)
        return None if per_step is None else per_step * slot.steps_left


def lost_if_stopped(slot: Slot, times: RunTimes, time_left: float) -> float | None:
    """The run's expected seconds where starting it now would lose its work: it is expected to outlast ``time_left``
    and its checkpoint is too large for the archive to carry it to the next bake; ``None`` otherwise (or unknown)."""
    expected = times.expected_s(slot)
    if expected is None or expected <= time_left:
        return None
    size = checkpoint_bytes(slot)
    return expected if size is not None and size > MAX_CHECKPOINT_BYTES else None
