"""Runs in progress on a board: an unfinished run is a row ("step k of N"), never a value.

A long protocol (the paper's 14,000 steps at batch 6000) finishes across machines: a bake trains what its budget
allows and leaves each unfinished run's checkpoint in the run archive. The board names each such run with the
steps it has done, the steps its protocol plans, and the platforms that trained it; its values and verdicts use the
finished runs only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from normbench.archive.documents.sections import RunInProgress
from normbench.archive.record import RecordDocument
from normbench.archive.replicate import platform_slug, segment, steps_done
from normbench.archive.store import Archive
from normbench.io import Config
from normbench.training.run.records import FINISHED, read_record


class PlannedRun(Protocol):
    """One planned (variant, seed) run, as the sweep layer describes it (:class:`normbench.sweep.plan.Run`); read
    only here (a frozen :class:`normbench.boards.shown.ShownRun` is one too)."""

    @property
    def variant(self) -> str: ...

    @property
    def seed(self) -> int: ...

    @property
    def record_path(self) -> Path | None: ...

    @property
    def config_hash(self) -> str | None: ...

    @property
    def config(self) -> Config: ...


def record_file(run: PlannedRun) -> Path:
    """``run.record_path`` of a run planned into a runs folder (every run a sweep plans and trains has one; one
    without is a ``TypeError``, as ``Path(None)`` is)."""
    if run.record_path is None:
        raise TypeError(f"run {run.variant} seed {run.seed}: planned without a record path")
    return Path(run.record_path)


def planned_steps(config: Config) -> int | None:
    """The optimizer steps a run's config plans: ``trainer.max_steps``, else ``max_epochs`` times the steps of an
    epoch where the data config says them (sequences x (1 - test fraction) / batch size); ``None`` when unknown."""
    trainer = config.get("trainer") or {}
    if int(trainer.get("max_steps") or -1) > 0:
        return int(trainer["max_steps"])
    data = (config.get("data") or {}).get("init_args") or {}
    epochs = int(trainer.get("max_epochs") or -1)
    if epochs > 0 and data.get("num_sequences") and data.get("batch_size"):
        train = int(data["num_sequences"]) - round(int(data["num_sequences"]) * float(data.get("test_fraction") or 0))
        return epochs * math.ceil(train / int(data["batch_size"]))
    return None


def in_progress(
    task: str, runs: Sequence[PlannedRun], archive: Archive | None, finished: set[tuple[str, int]]
) -> list[RunInProgress]:
    """One row per planned run that is not finished but has trained steps (locally or in the archive): the
    further of the two. Runs in ``finished`` (variant, seed) are left out."""
    rows: list[RunInProgress] = []
    for run in runs:
        if (run.variant, run.seed) in finished:
            continue
        candidates: list[RecordDocument] = []
        if run.record_path is not None and Path(run.record_path).is_file():
            try:
                candidates.append(read_record(run.record_path))
            except ValueError:
                pass  # a broken local record: the archive's, if any, is shown
        rep = archive.in_progress(task, run.config_hash, run.seed) if archive and run.config_hash else None
        archived = rep.record() if rep is not None else None
        if archived is not None:
            candidates.append(archived)
        candidates = [r for r in candidates if r.get("status") not in FINISHED and steps_done(r) > 0]
        if not candidates:
            continue
        record = max(candidates, key=steps_done)
        # who trained it: the archived replicate's segments, then the record shown (a local run continuing it)
        platforms = [
            *((s["platform"] for s in archived.get("segments") or [segment(archived)]) if archived else []),
            *(s["platform"] for s in record.get("segments") or []),
            platform_slug(record.get("provenance") or {}),
        ]
        rows.append(
            {
                "variant": run.variant,
                "seed": run.seed,
                "config_hash": run.config_hash,
                "status": record.get("status"),
                "step": steps_done(record),
                "of": planned_steps(run.config),
                "platforms": list(dict.fromkeys(platforms)),
                "checkpoint_archived": rep is not None and rep.checkpoint.is_file(),
            }
        )
    return rows


def render_progress(rows: list[RunInProgress] | None) -> list[str]:
    """The Markdown table of runs in progress (nothing when there are none)."""
    if not rows:
        return []
    lines = [
        "## Runs in progress",
        "",
        "These runs have not finished their protocol; no value or verdict below uses them. "
        "`normbench bake` continues each from its checkpoint in the run archive, on any machine.",
        "",
        "| variant | seed | progress | trained on | checkpoint |",
        "|---|---|---|---|---|",
    ]
    for r in rows:
        of = f" of {r['of']:,}" if r.get("of") else ""
        where = ", then ".join(f"`{p}`" for p in r["platforms"])
        ckpt = "archived" if r.get("checkpoint_archived") else "local only"
        lines.append(f"| `{r['variant']}` | {r['seed']} | step {r['step']:,}{of} | {where} | {ckpt} |")
    return [*lines, ""]
