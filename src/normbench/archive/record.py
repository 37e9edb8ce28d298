"""The run record: one JSON file per (task, variant, seed) run (``runs/<task>/<run>/seed<k>/record.json``).

:mod:`normbench.training.run.records` writes it while the run trains; :func:`load_record` is the one reader.
A record holds the resolved config, its hash (seed excluded, so all seeds of a variant share it), the norms
the network has, the status (``running`` / ``done`` / ``diverged`` / ``failed`` / ``interrupted``), every
logged metric as a ``[step, value]`` series (step = optimizer steps completed; ``null`` for a value that is
not finite) and provenance. Keys this module does not declare survive a read and a write (``extra``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

from normbench.archive._json import NUMBER, JsonDict, JsonObject, SchemaError, optional, required
from normbench.archive.files.reading import Unreadable, read_json
from normbench.io import strict_json

if TYPE_CHECKING:  # the norms' module imports torch; a record's reader needs only the shape
    from normbench.nn.norms.base import NormSpecFields

STATUSES = ("running", "done", "diverged", "failed", "interrupted")
FINISHED = ("done", "diverged")
# an unfinished run that resumes from its last checkpoint, when it has one (``interrupted``: Ctrl-C)
RESUMABLE = ("running", "failed", "interrupted")

Series = dict[str, list[list[Any]]]


class Platform(TypedDict, total=False):
    """What decides a run's last bits (a provenance's ``platform``;
    :func:`normbench.training.reproducibility.platform_info`): the CPU model, its vector capability, the machine and
    threads, MKL's reproducibility mode, the GPU with its CUDA and cuDNN versions (``None`` on a CPU) and the
    deterministic flags."""

    cpu: str
    cpu_capability: str
    machine: str
    threads: int
    mkl_cbwr: str | None
    gpu: str | None
    cuda: str | None
    cudnn: int | None
    deterministic_algorithms: bool
    cudnn_deterministic: bool
    cudnn_benchmark: bool


class Provenance(TypedDict, total=False):
    """Where and with what a run trained (a record's ``provenance``; :func:`normbench.training.run.records.provenance`):
    the checkout's ``git_commit`` and ``dirty`` state, the library versions, the ``device``, ``threads`` and
    ``platform``, the ``host`` and ``date``, and what the trainer adds (world size, global batch size, host memory,
    the compile mode where one was set)."""

    git_commit: str | None
    dirty: bool | None
    torch: str
    lightning: str
    numpy: str
    scipy: str
    python: str
    device: str
    threads: int
    platform: Platform
    host: str
    date: str
    world_size: int
    global_batch_size: int
    host_memory: Any
    compile: str


class Segment(TypedDict):
    """Who trained a record's steps (:func:`normbench.archive.replicate.segment`; a record continued elsewhere lists
    one per platform in order, as ``segments``): the ``platform`` class
    (:func:`normbench.archive.replicate.platform_slug`), the ``git_commit`` and ``dirty`` state of the tree, the
    ``device`` and ``threads``, and ``to_step``, the steps done by the segment's end
    (:func:`normbench.archive.replicate.steps_done`)."""

    platform: str
    git_commit: str | None
    dirty: bool | None
    device: str | None
    threads: int | None
    to_step: int


class Stack(TypedDict):
    """The stack of seeds a run trained in (a record's ``vectorized``; :mod:`normbench.sweep.vectorized`): its
    ``stack_size`` and the ``seeds`` it trained together, in order."""

    stack_size: int
    seeds: list[int]


class Outcome(TypedDict, total=False):
    """How a run's training ended, as its record says (:meth:`normbench.training.run.records.RunRecordLogger.write`
    adds these to the run's fields; :class:`RunRecord` describes each)."""

    error: str
    final_step: int
    diverged_at_step: int | None
    fit_time_s: float
    test_time_s: float
    checkpoint: str
    resumed_from: str


class PublishedValues(TypedDict):
    """What a record rebuilt from a published board holds of it (a record's ``published``;
    :mod:`normbench.boards.published`): the ``board`` whose values it stands in for, metric -> ``[value, lower bound]``
    of its seed there (``values``), and metric -> why the seed has no value (``notes``)."""

    board: str
    values: dict[str, list[float | None]]
    notes: dict[str, str]


class RecordDocument(Outcome, total=False):
    """A run record as JSON data: what :meth:`RunRecord.to_json` gives and
    :class:`normbench.training.run.records.RunRecordLogger` writes (the fields of :class:`RunRecord`, which
    describes each), with ``segments`` where a run continued from a checkpoint and the keys a reader adds:
    ``archived`` (a record read from the run archive), ``record_path`` (the file it was read from),
    ``checkpoint_step`` (an unfinished archived run's checkpoint step), ``collapse_baseline``
    (:mod:`normbench.judge.collapse`) and, for a record rebuilt from a published board
    (:mod:`normbench.boards.published`), ``published``. The keys of :class:`Outcome` are its own too."""

    task: str
    variant: str
    seed: int
    preset: str | None
    config_hash: str
    config: JsonDict
    norms: dict[str, NormSpecFields] | None
    placement: str | None
    world_size: int
    global_batch_size: int
    log_dir: str | None
    provenance: Provenance
    status: str
    vectorized: Stack
    wall_time_s: float
    updated_at: str
    series: Series
    segments: list[Segment]
    archived: bool
    record_path: str
    checkpoint_step: int | None
    collapse_baseline: float | None
    published: PublishedValues


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunRecord(JsonObject):
    """One run's record. Only ``status`` and ``series`` are in every record (the oldest ones have no more);
    the trainer writes every field down to ``updated_at``, the rest when they apply.

    Attributes:
        task, variant, seed, preset: what was trained (``variant``: the sweep's name of the norms).
        config_hash: hash of the effective config (seed excluded); ``config``: the resolved config.
        norms: the norms the network has (role -> spec); ``placement``: where they sit.
        world_size, global_batch_size: how the run was distributed (part of its identity).
        log_dir: its TensorBoard folder; ``provenance``: where and with what it ran.
        status: one of :data:`STATUSES`; ``wall_time_s``: time since the run (or its resumption) started.
        updated_at: when the record was written; ``series``: metric -> ``[[step, value], ...]``.
        error: why a ``failed`` run stopped; ``final_step``: optimizer steps done.
        diverged_at_step: the step whose loss was not finite (a ``diverged`` run).
        fit_time_s, test_time_s: time in fit and in the test stage; ``checkpoint``: the final weights;
        resumed_from: the checkpoint a resumed run continued from; ``vectorized``: the stack it trained in (its
            ``wall_time_s`` is then the whole stack's: :func:`wall_time_share_s` is the run's share).
    """

    task: str | None = optional(str)
    variant: str | None = optional(str)
    seed: int | None = optional(int)
    preset: str | None = optional(str)
    config_hash: str | None = optional(str)
    config: JsonDict | None = optional(dict)
    norms: dict[str, NormSpecFields] | None = optional(dict)
    placement: str | None = optional(str)
    world_size: int | None = optional(int)
    global_batch_size: int | None = optional(int)
    log_dir: str | None = optional(str)
    provenance: Provenance | None = optional(dict)
    status: str = required(str)
    error: str | None = optional(str)
    final_step: int | None = optional(int)
    diverged_at_step: int | None = optional(int)
    fit_time_s: float | None = optional(*NUMBER)
    test_time_s: float | None = optional(*NUMBER)
    checkpoint: str | None = optional(str)
    resumed_from: str | None = optional(str)
    vectorized: Stack | None = optional(dict)
    wall_time_s: float | None = optional(*NUMBER)
    updated_at: str | None = optional(str)
    series: Series = required(dict)

    SCHEMA_VERSION = 1
    WHAT = "run record"

    @classmethod
    def from_json(cls, data: Any, where: str | None = None) -> RunRecord:
        problem = series_problem(data.get("series")) if isinstance(data, dict) else None
        if problem:
            raise SchemaError(f"{where or cls.WHAT}: {problem}")
        record = super().from_json(data, where)
        if record.status not in STATUSES:
            raise SchemaError(f"{where or cls.WHAT}: status {record.status!r} is not one of {', '.join(STATUSES)}")
        return record

    def document(self) -> RecordDocument:
        """The record as JSON data (:meth:`to_json`), typed: what :func:`load_record` read, checked."""
        return cast(RecordDocument, self.to_json())  # where a record file read and checked becomes a RecordDocument

    @property
    def finished(self) -> bool:
        """Whether the run ended with a result (``done`` or ``diverged``)."""
        return self.status in FINISHED


def wall_time_share_s(record: Mapping[str, Any]) -> float:
    """A run's share of the time it trained in: its ``wall_time_s``, divided by its stack's size where it trained
    stacked with other seeds in one process (every record of a stack holds the stack's whole time), so that a sum over
    runs counts each stack once. (A record's JSON data, or a board's record with its analyses.)"""
    vectorized = record.get("vectorized")
    stack = (vectorized.get("stack_size") if vectorized else None) or 1
    return float(record.get("wall_time_s") or 0.0) / stack


def load_record(path: str | os.PathLike) -> RunRecord:
    """The run record at ``path``; a truncated, oversized, too deeply nested or malformed file is one ``ValueError``
    (:class:`normbench.archive.files.reading.Unreadable`) naming it.

    Records are strict JSON (a value that is not finite is ``null``); an older record's bare
    ``NaN``/``Infinity`` reads as ``None`` too. Malformed: not a JSON object, a missing or unknown
    status, a field of the wrong type, or ``series`` that is not a mapping of metric names to lists of
    ``[step, value]`` points (step an integer, value a number or ``null``).
    """
    archived = str(path).endswith(".gz")  # the run archive's records (normbench.archive.store) are gzipped
    try:
        # within the archive's limits: size, nesting (normbench.archive.files.reading)
        data = strict_json(read_json(path))
    except Unreadable as exc:
        raise Unreadable(Path(path), exc.reason, f"run record {path}: unreadable ({exc.reason})") from None
    if not isinstance(data, dict) or data.get("status") not in STATUSES:
        raise ValueError(f"run record {path}: missing or unknown status")
    if archived:  # its checkpoint stayed where it trained (none is archived for a finished run)
        data["archived"] = True
    try:
        return RunRecord.from_json(data, "record")
    except SchemaError as exc:
        raise ValueError(f"run record {path}: {str(exc).removeprefix('record: ')}") from None


def series_problem(series: Any) -> str | None:
    """What is wrong with a record's ``series`` (see :func:`load_record`), or ``None``."""
    if not isinstance(series, dict):
        return "series missing" if series is None else f"series is {type(series).__name__}, not a mapping"
    for name, points in series.items():
        if not isinstance(points, list):
            return f"series {name!r} is {'null' if points is None else type(points).__name__}, not a list of points"
        for point in points:
            if not (
                isinstance(point, list)
                and len(point) == 2
                and type(point[0]) is int
                and (point[1] is None or type(point[1]) in (int, float))
            ):
                return f"series {name!r} has the point {point!r}, not [step, value]"
    return None
