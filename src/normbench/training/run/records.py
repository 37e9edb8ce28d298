"""Run records: one JSON file per (task, variant, seed) run, written atomically.

A record holds the resolved config, its hash (:mod:`normbench.training.run.rundir`: seed excluded,
so all seeds of a variant share it), the norms the network has, the status (``running`` / ``done`` / ``diverged`` /
``failed``), every logged metric as a ``[step, value]`` series (step = optimizer steps completed; ``null`` for a value
that is not finite), and provenance. Leaderboards are built from records only.
"""

from __future__ import annotations

import math
import os
import platform
import subprocess
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import lightning
import numpy
import scipy
import torch
from lightning.pytorch.loggers.logger import Logger, rank_zero_experiment
from lightning.pytorch.utilities import rank_zero_only

from normbench.archive.record import (  # noqa: F401 - re-exported: the statuses and series check live in the archive
    FINISHED,
    RESUMABLE,
    STATUSES,
    Outcome,
    Provenance,
    RecordDocument,
    Segment,
    Series,
    load_record,
    series_problem,
)
from normbench.archive.replicate import segment
from normbench.io import atomic_write_json
from normbench.training.reproducibility import platform_info

if TYPE_CHECKING:
    from typing import Unpack  # Python 3.11; only the type checker reads it


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class GitState(TypedDict):
    """The checkout a result was produced in (:func:`git_state`; a provenance's first keys): its ``git_commit`` and
    whether it is ``dirty`` (``None`` for both outside a git checkout)."""

    git_commit: str | None
    dirty: bool | None


class TrainerProvenance(TypedDict, total=False):
    """What a trainer adds to a run's :class:`~normbench.archive.record.Provenance` (:func:`provenance`'s ``extra``):
    its world size and global batch size, the host allocator in use (``host_memory``:
    :func:`normbench.training.allocator.keep_freed_memory`) and the compile mode, where one was set."""

    world_size: int
    global_batch_size: int
    host_memory: str
    compile: str


def git_state(cwd: str | Path | None = None) -> GitState:
    """``{"git_commit": sha or None, "dirty": bool or None}`` of the checkout at ``cwd``.

    ``dirty``: tracked files differ from the commit, outside ``results/``, ``docs/`` and ``README.md``. The
    generated outputs there (the README's results teaser among them) do not make the code that produces them
    dirty (a task's second report written after its leaderboard, another task's uncommitted leaderboard, or the
    results pages a bake or a card rewrites after its boards would otherwise: the next bake in the same checkout
    could not archive its runs, and a card would call its own build dirty).
    """
    cwd = Path(cwd or Path(__file__).resolve().parent)
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, check=True
        ).stdout.strip()
        status = subprocess.run(
            [
                "git",
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ":(top)",
                ":(top,exclude)results",
                ":(top,exclude)docs",
                ":(top,exclude)README.md",
            ],
            cwd=cwd,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return {"git_commit": sha, "dirty": bool(status.strip())}
    except (OSError, subprocess.CalledProcessError):
        return {"git_commit": None, "dirty": None}


def provenance(
    device: str | None = None, torch_device: torch.device | str | None = None, **extra: Unpack[TrainerProvenance]
) -> Provenance:
    """Where and with what a result was produced (``extra``: e.g. world size and global batch size).

    ``platform`` names what decides the last bits (:func:`normbench.training.reproducibility.platform_info`):
    for a run the device it trained on (``torch_device``), for a leaderboard the machine that built it.
    """
    if device is None:
        device = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    return {
        **git_state(),
        "torch": torch.__version__,
        "lightning": lightning.__version__,
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "python": platform.python_version(),
        "device": device,
        "threads": torch.get_num_threads(),
        "platform": platform_info(torch_device),
        "host": platform.node(),
        "date": utc_now(),
        **extra,
    }


def add_points(series: Series, metrics: Mapping[str, float | torch.Tensor], step: int | None) -> None:
    """Append ``metrics`` to ``series`` as ``[steps done, value]`` points.

    Lightning passes the 0-based index of the last optimizer step; records count steps done. A value
    that is not finite (a diverged run's NaN or inf loss) is kept as ``None``, a record's ``null``.
    """
    done = int(step or 0) + 1
    for key, value in metrics.items():
        if key != "epoch":
            value = float(value)
            series.setdefault(key, []).append([done, value if math.isfinite(value) else None])


class RunRecordLogger(Logger):
    """A Lightning logger that keeps every logged metric as a series and writes the run record.

    Lightning calls :meth:`log_metrics` for everything ``self.log`` sends to loggers; the record is
    written (atomically) when the run starts, at every :meth:`save` and by :meth:`write`.
    """

    def __init__(self, path: str | os.PathLike, meta: RecordDocument) -> None:
        super().__init__()
        self.path = Path(path)
        self.meta = meta.copy()
        self.series: Series = {}
        self.started = datetime.now(timezone.utc)
        self.earlier: list[Segment] = []  # a resumed run's earlier segments (who trained which steps)
        self.earlier_wall_s = 0.0

    def continue_from(self, previous: RecordDocument, step: int) -> None:
        """This attempt resumes ``previous`` (the run's record) from its checkpoint at ``step``: the record names
        every segment that trained it (platform, commit, clean tree, steps reached) and its wall time is their sum."""
        earlier = [s.copy() for s in previous.get("segments") or [segment(previous)]]
        earlier[-1]["to_step"] = step
        self.earlier, self.earlier_wall_s = earlier, float(previous.get("wall_time_s") or 0.0)

    @property
    def name(self) -> str:
        return "record"

    @property
    def version(self) -> str:
        return str(self.path.parent.name)

    @property
    @rank_zero_experiment
    def experiment(self) -> None:
        return None

    @rank_zero_only
    def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
        pass  # the resolved config is part of ``meta``

    @rank_zero_only
    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        add_points(self.series, metrics, step)

    def record(self, status: str, **extra: Unpack[Outcome]) -> RecordDocument:
        if status not in STATUSES:
            raise ValueError(f"status: {status!r} is not one of {', '.join(STATUSES)}")
        wall = self.earlier_wall_s + (datetime.now(timezone.utc) - self.started).total_seconds()
        record: RecordDocument = {
            **self.meta,
            "status": status,
            **extra,
            "wall_time_s": round(wall, 3),
            "updated_at": utc_now(),
            "series": self.series,
        }
        if self.earlier:
            record["segments"] = [*self.earlier, segment(record)]
        return record

    @rank_zero_only
    def write(self, status: str, **extra: Unpack[Outcome]) -> None:
        atomic_write_json(self.path, self.record(status, **extra))


def read_record(path: str | os.PathLike) -> RecordDocument:
    """The run record at ``path`` as a JSON object (:func:`normbench.archive.record.load_record` reads it:
    a truncated or malformed file raises ``ValueError`` naming it)."""
    return load_record(path).document()
