"""The values a reproducibility report compares: each published per-seed value beside every archived replicate of
its run from another platform (:func:`comparisons`), the drift reported from platforms whose replicates are not
archived (:func:`read_reported`) and the spread of every published metric over seeds (:func:`seed_spreads`)."""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import cast

from normbench.archive import load_board
from normbench.archive.files.reading import read_json
from normbench.archive.record import RecordDocument
from normbench.archive.replicate import platform_slug
from normbench.archive.store import Archive
from normbench.boards.replicates.rows import ReplicateValue, ReportedDrift, SeedSpread
from normbench.io import read_yaml
from normbench.tasks import task_names
from normbench.tasks.series import MetricSpec, decomposition_as_series, series_value
from normbench.training.config import load_config
from normbench.training.reproducibility import chaotic
from normbench.training.run.rundir import DECOMPOSITION_NAME

REPORTED = "archive/reported-drift.yaml"  # drift measured where the replicates' records were not kept


def published_boards(results_dir: Path) -> list[Path]:
    return sorted(p for p in Path(results_dir).rglob("leaderboard.json") if "archive" not in p.parts)


def comparisons(results_dir: str | Path) -> list[ReplicateValue]:
    """One row per (board, variant, seed, metric, replicate) where the archive holds a replicate whose series give
    the metric: the published value, the replicate's, and the platforms."""
    results_dir = Path(results_dir)
    archive = Archive(results_dir)
    rows: list[ReplicateValue] = []
    for path in published_boards(results_dir):
        board = load_board(path)
        task, specs = board.task, board.metrics or {}
        chaos = board_chaos(task, board.preset)
        board_platforms = board.reproducibility["platforms"] if board.reproducibility else []
        shown_platforms = [platform_slug({"platform": p}) for p in board_platforms]
        for variant in board.variants:
            config_hash = variant.config_hash
            if not config_hash:
                continue
            for i, seed in enumerate(variant.seeds):
                reps = archive.replicates(task, config_hash, int(seed))
                shown = archive.canonical(task, config_hash, int(seed)) if reps else None
                for rep in reps:
                    if rep == shown:  # the board's own values: not a replicate of them
                        continue
                    record = rep.record()
                    if record.get("status") != "done":
                        continue
                    series = {**(record.get("series") or {}), **analysis_series(rep.path, record)}
                    for metric, spec in specs.items():
                        if not isinstance(spec, dict) or "series" not in spec:
                            continue
                        aggregate = variant.metrics.get(metric)
                        published = aggregate.per_seed if aggregate is not None else ()
                        was = published[i] if i < len(published) else None
                        now, _ = series_value(series.get(spec["series"], []), cast(MetricSpec, spec))
                        if was is None or now is None:
                            continue
                        std = aggregate.std if aggregate is not None else None
                        rows.append(
                            {
                                "board": str(path.parent.relative_to(results_dir)),
                                "variant": variant.name,
                                "seed": int(seed),
                                "metric": metric,
                                "published": float(was),
                                "replicate": float(now),
                                "replicate_platform": rep.name,
                                "published_platforms": shown_platforms,
                                "seed_std": std,
                                "chaotic": chaos,
                            }
                        )
    return rows


def analysis_series(folder: Path, record: RecordDocument) -> dict[str, list[list[float]]]:
    """The series a replicate's archived analyses give a board (its decomposition, at its final step), as the board
    read them when it was built from that run."""
    path = folder / DECOMPOSITION_NAME
    if not path.is_file():
        return {}
    return decomposition_as_series(read_json(path), int(record.get("final_step") or 0))


def read_reported(results_dir: Path) -> list[ReportedDrift]:
    """The drift reported from platforms whose replicates are not archived (:data:`REPORTED`), one row per
    (report, metric pattern): ``absolute`` drift, or ``relative`` (times the largest published value)."""
    path = Path(results_dir) / REPORTED
    if not path.is_file():
        return []
    doc = read_yaml(path) or {}
    rows: list[ReportedDrift] = []
    for report in doc.get("reports") or []:
        for pattern, drift in (report.get("drift") or {}).items():
            rows.append(
                {
                    "platform": str(report["platform"]),
                    "task": str(report["task"]),
                    "preset": report.get("preset"),
                    "runs": str(report.get("runs", "")),
                    "pattern": str(pattern),
                    "absolute": drift.get("absolute"),
                    "relative": drift.get("relative"),
                    "at_least": bool(drift.get("at_least", False)),
                    "note": str(drift.get("note", "")),
                }
            )
    return rows


def board_chaos(task: str | None, preset: str | None) -> str | None:
    """Why a board's task or preset is chaotic (its config's ``bench.reproducibility.chaotic``), or ``None``."""
    if task not in task_names():
        return None
    try:
        config = load_config(task, preset if preset and preset != "default" else None)
    except (KeyError, ValueError):
        config = load_config(task)
    return chaotic(config.get("bench"))


def seed_spreads(results_dir: Path) -> list[SeedSpread]:
    """(board, variant, metric, mean, std) of every published metric with 3+ finite seeds on a board whose task
    is not chaotic: the spread a tolerance must sit far below."""
    out: list[SeedSpread] = []
    for path in published_boards(results_dir):
        board = load_board(path)
        if board_chaos(board.task, board.preset):
            continue
        for variant in board.variants:
            for metric, agg in variant.metrics.items():
                seeds = [v for v in agg.per_seed if isinstance(v, (int, float)) and math.isfinite(v)]
                if len(seeds) < 3:
                    continue
                out.append(
                    {
                        "board": str(path.parent.relative_to(results_dir)),
                        "task": board.task,
                        "variant": variant.name,
                        "metric": metric,
                        "mean": statistics.fmean(seeds),
                        "std": statistics.stdev(seeds),
                        "max_abs": max(abs(v) for v in seeds),
                    }
                )
    return out
