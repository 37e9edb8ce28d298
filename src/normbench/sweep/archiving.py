"""A sweep's finished runs go into the run archive (:mod:`normbench.archive.store`), one replicate per platform.

Only runs trained from committed code are archived: a record whose tree was dirty (or unknown) names code that no
commit holds, so nobody could retrain it. ``uncommitted`` archives them anyway; the board then says so.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from normbench.archive.store import Archive, ArchiveError
from normbench.sweep.plan import Run
from normbench.training.records import FINISHED, read_record


def archive_runs(
    archive: Archive, runs: Sequence[Run], *, uncommitted: bool = False, checkpoint: bool = False, quiet: bool = False
) -> Counter:
    """Add every planned run with a local record to ``archive``: the finished ones, and with ``checkpoint`` the
    unfinished ones that have a checkpoint to continue from (a bake's). Prints one line (unless ``quiet``); returns
    the outcomes."""
    outcomes: Counter = Counter()
    for run in runs:
        path = run.record_path
        if path is None or not Path(path).is_file():
            continue
        try:
            record = read_record(path)
        except ValueError:
            continue  # the sweep reports broken records itself
        unfinished = record.get("status") not in FINISHED
        if unfinished and not (checkpoint and (Path(path).parent / "checkpoints" / "last.ckpt").is_file()):
            continue
        if (record.get("provenance") or {}).get("dirty") is not False and not uncommitted:
            outcomes["not archived (uncommitted code)"] += 1
            continue
        try:
            _, outcome = archive.add(Path(path).parent, checkpoint=checkpoint)
        except ArchiveError as exc:
            print(f"normbench: {exc}", file=sys.stderr)
            outcomes["refused"] += 1
            continue
        outcomes[outcome] += 1
    if outcomes and not quiet:
        said = ", ".join(f"{n} {what}" for what, n in sorted(outcomes.items()))
        print(f"normbench: run archive {archive.root}: {said}", file=sys.stderr)
    return outcomes
