"""Per-run analyses computed once from a run's final checkpoint and cached as JSON in its run folder.

A cached result is valid while the checkpoint (its size and modification time) and the analysis'
parameters are the ones it was computed with; otherwise it is recomputed and rewritten atomically.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypedDict, TypeVar, cast

from normbench.archive.files.reading import ArchiveError, read_json
from normbench.archive.record import RecordDocument
from normbench.io import atomic_write_json
from normbench.training.run.loading import REDO
from normbench.training.run.rundir import checkpoint_of, record_path, run_of_record


class CheckpointStamp(TypedDict):
    """What identifies a checkpoint's content for the cache (:func:`checkpoint_stamp`)."""

    checkpoint_size: int
    """The checkpoint file's size in bytes."""
    checkpoint_mtime_ns: int
    """Its modification time, in nanoseconds."""


AnalysisT = TypeVar("AnalysisT", bound=Mapping[str, object])
RecordT = TypeVar("RecordT", bound=RecordDocument)
"""A run record, or one with the keys an analysis or the board's build added: an analysis hands back the kind it was
given."""


def checkpoint_stamp(ckpt: Path) -> CheckpointStamp:
    """What identifies a checkpoint's content for the cache: its size and modification time."""
    stat = Path(ckpt).stat()
    return {"checkpoint_size": stat.st_size, "checkpoint_mtime_ns": stat.st_mtime_ns}


def cached_analysis(
    record: RecordDocument, file_name: str, params: Mapping[str, object], compute: Callable[[Path], AnalysisT]
) -> AnalysisT | None:
    """``<run>/<file_name>``: ``compute(final checkpoint)`` plus ``params``, recomputed when stale.

    ``None`` for a run without a final checkpoint; a final checkpoint its record names that is not
    there is one ``ValueError`` naming it (never an empty cell that reads "not logged").
    """
    document = cast(RecordDocument, record)  # a run record as JSON data
    run = run_of_record(document)
    if record.get("archived"):  # the run archive keeps the analysis, not the weights: read it as it is
        # the archived file compute once wrote (with the cache key beside its fields)
        return cast("AnalysisT | None", read_cached(run / file_name, params))
    ckpt = checkpoint_of(document, run)
    if ckpt is None:
        return None
    if not ckpt.is_file():
        raise ValueError(f"checkpoint {ckpt}: missing (the final checkpoint of {record_path(run)}); {REDO}")
    path = run / file_name
    key = {**checkpoint_stamp(ckpt), **params}
    if path.is_file():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
            if all(old.get(k) == v for k, v in key.items()):
                return cast(AnalysisT, old)  # the file compute wrote (with the cache key beside its fields), read back
        except ValueError:
            pass  # corrupt: recompute
    result = {**compute(ckpt), **key}
    atomic_write_json(path, result)
    return cast(AnalysisT, result)  # as the file just written holds it: compute's document with the cache key


def read_cached(path: Path, params: Mapping[str, object]) -> dict[str, object] | None:
    """An analysis kept beside an archived record, when it was computed with ``params`` (``None`` otherwise)."""
    if not path.is_file():
        return None
    try:
        old = read_json(path)  # an archived file: read within the archive's limits
    except ArchiveError as exc:
        raise ValueError(f"{exc}; restore it from git") from None
    if not isinstance(old, dict):
        raise ValueError(f"archive: {path}: not a JSON object; restore it from git")
    return old if all(old.get(k) == v for k, v in params.items()) else None


def final_step(record: RecordDocument) -> int:
    """The optimizer steps a record's run did (0 where it names none): the step of its analyses' one-point series."""
    return int(record.get("final_step") or 0)


def with_final_values(record: RecordT, values: dict[str, float]) -> RecordT:
    """``record`` with each of ``values`` (series name -> value) added as a one-point series at its final step."""
    step = final_step(record)
    grown = {**record, "series": {**record["series"], **{name: [[step, v]] for name, v in values.items()}}}
    return cast(RecordT, grown)  # the same keys as ``record``, its series grown
