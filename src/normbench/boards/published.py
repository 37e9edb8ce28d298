"""Runs published before the run archive, as stand-in records, so that their boards can grow.

A run listed in ``<task>/published.json`` of the archive has no record: its canonical values are the per-seed values
of the board that first published it: the source the boards built since have recorded (``published_seeds``), else the
earliest board that shows it (:func:`normbench.boards.canonical.source_first`). A board that adds
seeds to such runs (a bake growing ``results/lm/`` from 3 to 5 seeds) is built from the new seeds' records and from
one stand-in per published run (:func:`stand_ins`): a record without series whose ``published`` block holds that
seed's value of every metric that board has, its status, flags and provenance. The build reads a stand-in's
values where it reads a record's series (:func:`value_of`), so every mean, interval and verdict is over all seeds;
a metric the published board lacks has no value for those seeds (the board says so), and the figures, drawn from
series, show the seeds with records only.

Each stand-in is taken from the boards once and kept in the archive, beside the run's replicates
(``<task>/<hash>/seed<k>/published-values.json``, :func:`keep_published_values`); a build reads the kept file and no
board, so a board is a function of the archive alone and no rebuild can move another board's stand-ins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from normbench.archive.record import RecordDocument, wall_time_share_s
from normbench.archive.store import Archive
from normbench.boards.canonical import Shown, published_variants, source_first
from normbench.boards.progress import PlannedRun
from normbench.io import atomic_write_json

NOT_MEASURED = "not measured on the runs published on results/{board}/ before the archive"


def stand_ins(task: str, runs: Sequence[PlannedRun], archive: Archive | None) -> list[dict[str, Any]]:
    """A stand-in record for each of ``runs`` that was published before the archive (the others are left out): its
    values kept in the archive, or, for a run whose values are not kept yet, taken from the boards that show it.
    One-line error for such a run no board shows."""
    if archive is None:
        return []
    shown: dict[tuple[str, str], list[Shown]] | None = None
    out = []
    for run in runs:
        digest = run.config_hash
        if not digest or not archive.published_elsewhere(task, digest, run.seed):
            continue
        kept = archive.published_values(task, digest, int(run.seed))
        if kept is not None:  # the values taken once from the boards: no board is read
            out.append({**run_fields(task, run), **{k: v for k, v in kept.items() if k not in RUN_FIELDS}})
            continue
        if shown is None:
            shown = published_variants(archive.root.parent)
        showing = [s for s in shown.get((task, digest)) or [] if run.seed in (s.variant.get("seeds") or [])]
        showing = source_first(showing, int(run.seed))
        if not showing:
            raise ValueError(
                f"archive: {task} run {digest} seed {run.seed} is listed in {task}/published.json, but no board under "
                f"{archive.root.parent} shows it; restore that board or train the run again"
            )
        wall = stand_in_wall_time(task, digest, showing[0].variant, archive)
        provenance = stand_in_provenance(task, digest, showing, archive)
        out.append(stand_in(task, run, showing[0], showing[1:], wall_time_s=wall, provenance=provenance))
    return out


RUN_FIELDS = ("task", "variant", "seed", "config_hash", "config", "series")


def run_fields(task: str, run: PlannedRun) -> dict[str, Any]:
    """The fields of a stand-in record that the planned run gives (its values come from the published board)."""
    return {
        "task": task,
        "variant": run.variant,
        "seed": int(run.seed),
        "config_hash": run.config_hash,
        "config": run.config,
        "series": {},
    }


def keep_published_values(task: str, archive: Archive) -> list[Path]:
    """Write each run of ``<task>/published.json`` that has no kept values yet as its stand-in, taken from the
    boards as :func:`stand_ins` takes it (the run-specific fields left out), beside its replicates; returns the
    files written. Once kept, a build reads the file and no board: a rebuilt board can no longer change another's
    stand-ins."""
    written = []
    for digest, seeds in sorted(archive.published_runs(task).items()):
        for seed in seeds:
            path = archive.published_values_path(task, digest, int(seed))
            if path.exists():
                continue
            run = SimpleNamespace(variant="", seed=int(seed), record_path=None, config_hash=digest, config={})
            (record,) = stand_ins(task, [run], archive)
            written.append(atomic_write_json(path, {k: v for k, v in record.items() if k not in RUN_FIELDS}))
    return written


def stand_in_provenance(task: str, digest: str, showing: Sequence[Shown], archive: Archive) -> dict[str, Any]:
    """The provenance of the stand-in seeds of ``showing[0]``, the board that published them: its own, unless it has
    grown since with seeds from archived records (its lists then join both, and would join again at each rebuild);
    then that of the earliest board that took its values while showing those stand-in seeds only, else its own less
    the values that only its archived seeds have (:func:`without_archived_seeds`)."""
    source = showing[0]

    def stand_ins_only(shown: Shown) -> bool:
        return all(archive.published_elsewhere(task, digest, int(seed)) for seed in shown.variant.get("seeds") or [])

    if stand_ins_only(source):
        return source.variant.get("provenance") or {}
    for shown in showing[1:]:
        took = source.board in (shown.variant.get("published_seeds") or {})
        if stand_ins_only(shown) and (took or shown.variant.get("canonical") == source.board):
            return shown.variant.get("provenance") or {}
    return without_archived_seeds(task, digest, source.variant, archive)


# a board's provenance lists of text and the record field each entry comes from
JOINED = {"git_commits": "git_commit", "torch": "torch", "lightning": "lightning", "devices": "device"}


def without_archived_seeds(task: str, digest: str, variant: dict[str, Any], archive: Archive) -> dict[str, Any]:
    """``variant``'s provenance with the values that its seeds from archived records brought taken out of its text
    lists (``JOINED``): what is left is its stand-in seeds'. A list that would be left empty (the stand-ins share
    every value with the archived seeds) stays whole."""
    provenance = dict(variant.get("provenance") or {})
    records = archived_records(task, digest, variant, archive)
    for key, field in JOINED.items():
        theirs = {str((record.get("provenance") or {}).get(field)) for record in records}
        parts = dict.fromkeys(part for value in provenance.get(key) or [] for part in str(value).split(" + "))
        kept = [part for part in parts if part not in theirs]
        if kept:
            provenance[key] = kept
    return provenance


def stand_in_wall_time(task: str, digest: str, source: dict[str, Any], archive: Archive) -> float:
    """The training wall time of one stand-in seed of ``source`` (a variant of the board that published the runs):
    its sum over seeds, less the seeds it shows from archived records, shared by its stand-in seeds. (A board keeps
    the sum only; dividing that by all its seeds would move the figure at every rebuild of a board that is its own
    source and has grown since.)"""
    total = float((source.get("provenance") or {}).get("wall_time_s") or 0.0)
    records = archived_records(task, digest, source, archive)
    total -= sum(wall_time_share_s(record) for record in records)
    return max(total, 0.0) / max(len(source.get("seeds") or []) - len(records), 1)


def archived_records(task: str, digest: str, variant: dict[str, Any], archive: Archive) -> list[RecordDocument]:
    """The canonical records of the seeds ``variant`` shows from the archive (not from a board's published values)."""
    out: list[RecordDocument] = []
    for seed in variant.get("seeds") or []:
        if not archive.published_elsewhere(task, digest, int(seed)):
            rep = archive.canonical(task, digest, int(seed))
            if rep is not None:
                out.append(rep.record())
    return out


def stand_in(
    task: str,
    run: PlannedRun,
    first: Shown,
    later: Sequence[Shown] = (),
    wall_time_s: float | None = None,
    provenance: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The stand-in record of ``run``, from its entry on the earliest board that shows it; a metric that board lacks
    a value of (an analysis its preset did not run) is read from the next board that shows the run with one.
    ``wall_time_s``: its seed's wall time (default: the board's sum over its seeds, shared equally); ``provenance``:
    that of its seeds (default: the board's)."""
    canon, seed = first.variant, int(run.seed)
    key = str(seed)
    values: dict[str, list[Any]] = {}
    notes: dict[str, str] = {}
    for shown in (first, *later):
        seeds = list(shown.variant.get("seeds") or [])
        i, n = seeds.index(seed), len(seeds)
        for metric, agg in (shown.variant.get("metrics") or {}).items():
            value = [(agg.get("per_seed") or [None] * n)[i], (agg.get("per_seed_lower_bound") or [None] * n)[i]]
            if metric not in values or (values[metric][0] is None and value[0] is not None):
                values[metric] = value
                notes.pop(metric, None)
                if agg.get("note"):
                    notes[metric] = agg["note"]
    n = len(canon["seeds"])
    pv = canon.get("provenance") or {} if provenance is None else provenance
    record: dict[str, Any] = {
        "task": task,
        "variant": run.variant,
        "seed": seed,
        "status": (canon.get("run_status") or {}).get(key, canon.get("status")),
        "config_hash": run.config_hash,
        "config": run.config,
        "series": {},
        "placement": canon.get("placement"),
        "norms": {f"{k}_norm": spec for k, spec in (canon.get("norms") or {}).items()},
        "provenance": {
            "git_commit": one_of(pv.get("git_commits")),
            "dirty": pv.get("dirty"),
            "torch": one_of(pv.get("torch")),
            "lightning": one_of(pv.get("lightning")),
            "device": one_of(pv.get("devices")),
            "threads": one_of(pv.get("threads")),
            "date": (pv.get("dates") or ["unknown"])[0],
            **({"platform": pv["platforms"][0]} if len(pv.get("platforms") or []) == 1 else {}),
        },
        "wall_time_s": float(pv.get("wall_time_s") or 0.0) / n if wall_time_s is None else wall_time_s,
        "log_dir": next((d for d in pv.get("log_dirs") or [] if d and d.rpartition("seed")[2] == key), None),
        "published": {
            "board": first.board,
            "values": values,
            "notes": notes,
        },
    }
    if (step := (canon.get("diverged_at_step") or {}).get(key)) is not None or record["status"] == "diverged":
        record["diverged_at_step"] = step
    if (base := (canon.get("collapse_baseline") or {}).get(key)) is not None:
        record["collapse_baseline"] = base
    return record


def one_of(values: Any) -> Any:
    """The one value of a board's provenance list, or its values joined by `` + `` (a variant over several), each
    once: an entry that is itself such a join is split first, so joining again gives the same string."""
    values = list(values or [])
    if len(values) == 1:
        return values[0]
    parts = [part for value in values for part in str(value).split(" + ")]
    return " + ".join(dict.fromkeys(parts)) if parts else "unknown"


def value_of(record: dict[str, Any], metric: str) -> tuple[float | None, float | None] | None:
    """A stand-in's (value, lower bound) of ``metric`` (``(None, None)``: its board lacks it); ``None`` for a record
    with series, whose value the metric's series gives."""
    if not is_stand_in(record):
        return None
    value, bound = record["published"]["values"].get(metric) or (None, None)
    return value, bound


def published_notes(records: list[dict[str, Any]], metric: str) -> list[str]:
    """The notes the published boards of ``records``' stand-ins gave ``metric`` (e.g. ``not reached by step 5000``)."""
    return list(
        dict.fromkeys(note for r in records if is_stand_in(r) and (note := r["published"]["notes"].get(metric)))
    )


def published_seeds(records: list[dict[str, Any]]) -> dict[str, list[int]]:
    """Board -> the seeds of ``records`` (one variant's) shown from it: the stand-ins'."""
    out: dict[str, list[int]] = {}
    for r in records:
        if is_stand_in(r):
            out.setdefault(r["published"]["board"], []).append(int(r["seed"]))
    return out


def is_stand_in(record: Mapping[str, Any]) -> bool:
    """Whether ``record`` stands in for a run published before the archive (no series)."""
    return bool(record.get("published"))
