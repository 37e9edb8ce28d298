"""One variant's row of a board: its finished run records aggregated over seeds, its failed seeds flagged.

Each metric is read from one logged series of every run (:func:`normbench.tasks.series.series_value`) and
aggregated over the seeds that finished without diverging; a seed at chance or collapsed stays in every mean, named,
and each metric also has its aggregate without the flagged seeds (:func:`flag_seeds`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict, TypeVar

from normbench.archive import wall_time_share_s
from normbench.archive.documents.rows import VariantPlatform
from normbench.archive.files.writing import local_path, runs_root_of
from normbench.archive.record import Provenance, RecordDocument
from normbench.boards.published import (
    NOT_MEASURED,
    is_stand_in,
    published_notes,
    published_seeds,
    value_of,
)
from normbench.io import Config
from normbench.judge.collapse import CollapseSpec, collapse_text, is_collapsed
from normbench.judge.rows import VariantRow
from normbench.judge.stats import aggregate
from normbench.tasks import norm_roles
from normbench.tasks.series import FROM_CHECKPOINT, MetricSpec, series_value
from normbench.training.config import config_value

T = TypeVar("T")
R = TypeVar("R", bound=Mapping[str, Any])


class ChanceSpec(TypedDict):
    """A task's ``bench.chance``: a seed whose final value of ``metric`` is ``at_most`` this level is at chance."""

    metric: str
    at_most: float


def no_checkpoint_note(series: str, records: Sequence[RecordDocument]) -> str | None:
    """Why the checkpoint analysis behind ``series`` has no value: finished runs whose records name no final
    checkpoint (no ``checkpoint`` field); ``None`` when that is not why (e.g. another kind of series)."""
    if not series.startswith(FROM_CHECKPOINT):
        return None
    seeds = [str(r.get("seed")) for r in records if r.get("status") == "done" and not r.get("checkpoint")]
    if not seeds:
        return None
    return (
        f"not measured: the run record of seed {', '.join(seeds)} names no final checkpoint (no `checkpoint` "
        f"field: trained without checkpointing, or the record was edited)"
    )


def flag_seeds(
    entry: VariantRow,
    records: Sequence[RecordDocument],
    chance: ChanceSpec | None,
    collapse: CollapseSpec | None = None,
) -> None:
    """Mark seeds that failed to train: diverged (in no mean or verdict: their values are not
    finite), at chance (``bench.chance``: a leaderboard ``metric`` whose final value is ``at_most`` a
    level, e.g. dev accuracy <= 0.55 on balanced binary labels) or collapsed (``bench.collapse``: a loss
    >= its baseline - ``within``, e.g. validation loss at the unigram entropy of the training stream,
    :mod:`normbench.judge.collapse`; each record carries its ``collapse_baseline``). Seeds at chance or
    collapsed are listed in ``collapsed`` and stay in every mean and verdict; each metric then also gets its
    aggregate without every flagged seed (``without_flagged``), so nothing is averaged away unseen."""
    flags: dict[str, str] = {}
    for seed, step in (entry.get("diverged_at_step") or {}).items():
        flags[seed] = f"diverged at step {step}" if step is not None else "diverged"
    collapsed: list[str] = []
    if chance:
        values = entry["metrics"].get(chance["metric"], {}).get("per_seed") or []
        for record, value in zip(records, values, strict=False):
            if value is not None and value <= float(chance["at_most"]) and str(record["seed"]) not in flags:
                flags[str(record["seed"])] = f"at chance ({chance['metric']} {value:.3g} <= {chance['at_most']:g})"
                collapsed.append(str(record["seed"]))
    if collapse:
        values = entry["metrics"].get(collapse["metric"], {}).get("per_seed") or []
        for record, value in zip(records, values, strict=False):
            base, seed = record.get("collapse_baseline"), str(record["seed"])
            if (
                seed not in flags
                and value is not None
                and base is not None
                and is_collapsed(value, base, collapse["within"])
            ):
                flags[seed] = collapse_text(collapse["metric"], value, collapse["baseline"], base, collapse["within"])
                collapsed.append(seed)
        entry["collapse_baseline"] = {str(r["seed"]): r.get("collapse_baseline") for r in records}
    if chance or collapse:
        entry["collapsed"] = collapsed
    if not flags:
        return
    entry["flagged"] = flags
    if not collapsed:  # diverged seeds are in no mean already
        return
    keep = [str(r["seed"]) not in flags for r in records]
    for agg in entry["metrics"].values():
        kept = [v for v, k in zip(agg["per_seed"], keep, strict=False) if k]
        agg["without_flagged"] = aggregate(kept, [None] * len(kept)) if kept else None


def variant_entry(
    name: str,
    records: Sequence[RecordDocument],
    metrics: Mapping[str, MetricSpec],
    chance: ChanceSpec | None = None,
    failed: Sequence[RecordDocument] | None = None,
    collapse: CollapseSpec | None = None,
) -> VariantRow:
    """One variant's row: its finished ``records`` (``done`` or ``diverged``) aggregated over seeds.

    Only ``done`` seeds enter the statistics (mean, std, intervals, verdicts): a diverged seed has
    no finite value to give (``per_seed`` holds ``None`` for it) and is named with its step in
    ``diverged_at_step``; the seeds of ``failed`` records are named in ``failed`` (seed -> error).
    """
    records = sorted(records, key=lambda r: r["seed"])
    statuses = {r["status"] for r in records}
    entry: VariantRow = {
        "name": name,
        # the norms the network has (normbench.nn.placement decides; recorded by the run itself)
        "placement": records[0].get("placement"),
        "norms": {k.removesuffix("_norm"): spec for k, spec in (records[0].get("norms") or {}).items()},
        "seeds": [r["seed"] for r in records],
        "status": statuses.pop() if len(statuses) == 1 else "mixed",
        "run_status": {str(r["seed"]): r["status"] for r in records},
        "metrics": {},
        # attention options that are not norms (QK-norm)
        "qk_norm": bool(
            ((records[0].get("config") or {}).get("model", {}).get("init_args", {}).get("arch") or {}).get("qk_norm")
        ),
        "config_hash": records[0]["config_hash"],
        "final_step": max(r.get("final_step", 0) for r in records),
        "n_layers": n_layers_of(records[0].get("config") or {}),
        # each norm's role (block, final, embedding), by the names in `norms`: what feeds each attention
        "norm_roles": {k.removesuffix("_norm"): role for k, role in norm_roles(records[0]["task"]).items()}
        if records[0].get("task")
        else {},
    }
    diverged = {str(r["seed"]): r.get("diverged_at_step") for r in records if r["status"] == "diverged"}
    if diverged:
        entry["diverged_at_step"] = diverged
    if failed:
        entry["failed"] = {str(r["seed"]): r.get("error") or "failed" for r in sorted(failed, key=lambda r: r["seed"])}
    counted = [r["status"] == "done" for r in records]
    for metric, spec in metrics.items():
        # a diverged run counts in no statistic, and its last step bounds nothing: it stopped
        pairs = [value_of(r, metric) or series_value(r["series"].get(spec["series"], []), spec) for r in records]
        agg = aggregate([p[0] for p in pairs], [p[1] for p in pairs], counted)
        lacking = sorted(
            {r["published"]["board"] for r in records if is_stand_in(r) and metric not in r["published"]["values"]}
        )
        if agg["mean"] is None and (lacking or all(is_stand_in(r) for r in records)):
            notes = [NOT_MEASURED.format(board=b) for b in lacking] + published_notes(records, metric)
            if notes:
                agg["note"] = "; ".join(dict.fromkeys(notes))
        elif agg["mean"] is None:
            logged = [
                points
                for r, keep in zip(records, counted, strict=False)
                if keep and (points := r["series"].get(spec["series"]))
            ]
            if not any(counted):
                agg["note"] = "no seed finished without diverging"
            elif not logged:
                agg["note"] = no_checkpoint_note(spec["series"], records) or (
                    f"not logged by this variant (no series {spec['series']})"
                )
            else:
                last = max(points[-1][0] for points in logged)
                agg["note"] = (
                    f"not reached by step {last}" if "first_below" in spec else f"not measured: runs end at step {last}"
                )
        entry["metrics"][metric] = agg
    flag_seeds(entry, records, chance, collapse)
    prov = [r["provenance"] for r in records]
    entry["provenance"] = {
        "git_commits": sorted({p.get("git_commit") or "unknown" for p in prov}),
        "dirty": any(p.get("dirty") for p in prov),
        "torch": sorted({p["torch"] for p in prov}),
        "lightning": sorted({p["lightning"] for p in prov}),
        "devices": sorted({p["device"] for p in prov}),
        "threads": sorted({p["threads"] for p in prov}),
        "world_sizes": sorted({r.get("world_size", 1) for r in records}),
        "global_batch_sizes": sorted({r.get("global_batch_size") for r in records}, key=str),
        "dates": [min(p["date"] for p in prov), max(p["date"] for p in prov)],
        "wall_time_s": round(sum(wall_time_share_s(r) for r in records), 1),  # a stack of seeds counted once
        "log_dirs": [archived_log_dir(r.get("log_dir")) for r in records],
        "platforms": unique_platforms(prov),
    }
    if published := published_seeds(records):
        entry["published_seeds"] = published
    return entry


def archived_log_dir(log_dir: str | None) -> str | None:
    """A run's log directory as the archive keeps it (``runs/<task>/<run>/seed<k>``), so a board built straight after
    training names its runs as one rebuilt from the archive does."""
    if not log_dir or not Path(log_dir).is_absolute():
        return log_dir
    return local_path(log_dir, runs_root_of(Path(log_dir)))


def distinct(blocks: list[T]) -> list[T]:
    """``blocks`` without repeats, in first-seen order."""
    return list({json.dumps(b, sort_keys=True): b for b in blocks}.values())  # equal blocks: one key, first place


def unique_platforms(provenances: Sequence[Provenance]) -> list[VariantPlatform]:
    """The distinct ``platform`` blocks of run provenances, with their torch version (runs recorded before
    provenance named the platform contribute none)."""
    blocks: list[VariantPlatform] = [
        {"torch": p.get("torch"), **p["platform"]} for p in provenances if isinstance(p.get("platform"), dict)
    ]
    return distinct(blocks)


def group_by_variant(records: Sequence[R]) -> dict[str, list[R]]:
    """Run records (any JSON objects with a ``variant``) by their ``variant`` name, in first-seen order."""
    groups: dict[str, list[R]] = defaultdict(list)
    for record in records:
        groups[record["variant"]].append(record)
    return dict(groups)


def n_layers_of(config: Config) -> int:
    """The network's number of layers in a run's resolved config (1 when it names none)."""
    return int(config_value(config, "model.init_args.arch.n_layers") or 1)
