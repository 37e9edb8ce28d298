"""A sweep's finished runs go into the run archive (:mod:`normbench.archive.store`), one replicate per platform.

Only runs trained from committed code are archived: a record whose tree was dirty (or unknown) names code that no
commit holds, so nobody could retrain it. ``uncommitted`` archives them anyway; the board then says so.

Archiving is verified: a run's record must be its run's before it is added (:func:`normbench.training.run.verify.
check_record`), and the replicate written must read back as the run's (:func:`normbench.training.run.verify.
check_archived`, the check a bake counts a run done by). A file that cannot be written (a full disk) is an
``OSError`` naming it: the caller stops there, and the run, still finished in its run folder, is archived by the
next bake.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from normbench.archive.store import Archive
from normbench.sweep.plan import Run
from normbench.training.run.records import FINISHED, read_record
from normbench.training.run.verify import check_archived, check_record


def archive_runs(
    archive: Archive, runs: Sequence[Run], *, uncommitted: bool = False, checkpoint: bool = False, quiet: bool = False
) -> Counter:
    """Add every planned run with a local record to ``archive``: the finished ones, and with ``checkpoint`` the
    unfinished ones that have a checkpoint to continue from (a bake's). Prints one line (unless ``quiet``); returns
    the outcomes."""
    outcomes: Counter = Counter()
    for run in runs:
        outcome = archive_run(archive, run, uncommitted=uncommitted, checkpoint=checkpoint)
        if outcome is not None:
            outcomes[outcome] += 1
    if outcomes and not quiet:
        said = ", ".join(f"{n} {what}" for what, n in sorted(outcomes.items()))
        print(f"normbench: run archive {archive.root}: {said}", file=sys.stderr)
    return outcomes


def archive_run(archive: Archive, run: Run, *, uncommitted: bool = False, checkpoint: bool = False) -> str | None:
    """Add one planned run to ``archive`` (see :func:`archive_runs`); what happened, ``None`` for a run with nothing
    to archive. A record that is not its run's, or a replicate that does not read back as written, is refused in one
    line; an ``OSError`` (a full disk) is raised, naming the file."""
    path = run.record_path
    if path is None or not Path(path).is_file():
        return None
    try:
        record = read_record(path)
    except ValueError:
        return None  # the sweep reports broken records itself
    unfinished = record.get("status") not in FINISHED
    if unfinished and not (checkpoint and (Path(path).parent / "checkpoints" / "last.ckpt").is_file()):
        return None
    if (record.get("provenance") or {}).get("dirty") is not False and not uncommitted:
        return "not archived (uncommitted code)"
    try:
        check_record(record, path, run.config_hash)
        rep, outcome = archive.add(Path(path).parent, checkpoint=checkpoint)
        if outcome != "same":
            check_archived(rep, run.config_hash or str(record["config_hash"]))
    except ValueError as exc:  # ArchiveError, or a record that is not its run's
        print(f"normbench: {exc}", file=sys.stderr)
        return "refused"
    return outcome
