"""Whether a run's own files are what they claim: its record matched to its run, its final checkpoint readable.

A record belongs to a run by the config hash recomputed from the record's own config
(:func:`normbench.training.rundir.record_config_hash`), the hash the planner gives that run; a
``config_hash`` field that says otherwise was edited. A finished (``done``) run's final checkpoint,
the one its record names, must be there and readable: every analysis of the run reads it. A sweep
redoes a run whose files fail these checks; a leaderboard names the file and the fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from normbench.training.checkpointing import checkpoint_config_hash
from normbench.training.records import FINISHED, read_record
from normbench.training.rundir import checkpoint_of, record_config_hash


def check_record(record: dict[str, Any], path: str | Path, config_hash: str | None = None) -> None:
    """One-line ``ValueError`` naming ``path`` unless the record is its run's (``config_hash``: the planned
    hash, when known) and, when ``done``, its final checkpoint is readable."""
    try:
        found = record_config_hash(record)
    except ValueError as exc:
        raise ValueError(f"run record {path}: {exc}") from None
    if record.get("config_hash") != found:
        raise ValueError(
            f"run record {path}: config_hash {record.get('config_hash')!r} is not the hash of its config ({found})"
        )
    if config_hash is not None and found != config_hash:
        raise ValueError(f"run record {path}: holds a run of config {found}, not {config_hash}")
    if record.get("status") == "done" and record.get("checkpoint") and not record.get("archived"):
        checkpoint_config_hash(checkpoint_of(record, Path(path).parent))


def finished_status(path: str | Path, config_hash: str) -> str | None:
    """The status of the finished run recorded at ``path`` for ``config_hash`` (``done``, ``diverged``),
    ``None`` when there is none; raises ``ValueError`` naming the file when the record or the final
    checkpoint is broken (the run is then redone)."""
    path = Path(path)
    if not path.exists():
        return None
    record = read_record(path)
    if record.get("status") not in FINISHED:
        return None
    check_record(record, path, config_hash)
    return record["status"]
