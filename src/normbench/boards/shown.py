"""The record a board shows for each planned run: the run archive's canonical replicate where it has one, else the
local record; and the analyses computed from local checkpoints, kept beside their replicates in the archive (which
keeps no weights), so that a rebuild from the archive alone reads them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from normbench.archive.replicate import Replicate, same_numbers
from normbench.archive.store import Archive
from normbench.boards.progress import PlannedRun
from normbench.io import Config
from normbench.training.run.records import read_record


@dataclass(frozen=True)
class ShownRun:
    """A planned run with the record a board shows for it (the archive's canonical replicate, or the local one)."""

    variant: str
    seed: int
    record_path: Path | None
    config_hash: str | None
    config: Config


def shown_runs(task: str, runs: Sequence[PlannedRun], archive: Archive | None) -> list[PlannedRun]:
    """``runs`` with each record path pointing at what the board shows: the canonical replicate where the run
    archive has a finished one (so published numbers change only when the canonical runs do), else the local
    record."""
    if archive is None:
        return list(runs)
    out: list[PlannedRun] = []
    for r in runs:
        rep = archive.canonical(task, r.config_hash, r.seed) if r.config_hash else None
        path = rep.record_path if rep is not None else r.record_path
        if rep is not None and r.record_path is not None and is_replicate_here(r.record_path, rep):
            path = r.record_path  # the canonical run itself, with its checkpoint: its analyses are computed here
        out.append(ShownRun(r.variant, r.seed, path, r.config_hash, r.config))
    return out


def is_replicate_here(local: Path, rep: Replicate) -> bool:
    """Whether the local record at ``local`` is the run of the archived replicate ``rep`` (same numbers)."""
    if not Path(local).is_file():
        return False
    try:
        return same_numbers(read_record(local), rep.record())
    except ValueError:
        return False


def keep_analyses(task: str, runs: Sequence[PlannedRun], archive: Archive | None) -> None:
    """Copy the analyses computed from local checkpoints (decomposition, key sets) beside their canonical
    replicates in the archive, which keeps no weights: a rebuild from the archive then reads them."""
    if archive is None:
        return
    for r in runs:
        rep = archive.canonical(task, r.config_hash, r.seed) if r.config_hash else None
        if rep is not None and r.record_path is not None and is_replicate_here(r.record_path, rep):
            archive.attach_analyses(Path(r.record_path).parent, rep)
