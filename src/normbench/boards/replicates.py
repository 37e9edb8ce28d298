"""How far replicates of one run drift apart: ``results/reproducibility.{md,json}``, generated from the archive.

For every published board, every run it shows (variant, config hash, seed) and every replicate of that run in the
run archive trained on another platform than the values the board shows, each metric of the board is read off the
replicate's series and archived analyses (the board's own metric spec) and compared with the published per-seed
value. Per metric, the table gives the largest absolute drift, in units of the declared cross-platform tolerance
(:func:`normbench.training.reproducibility.tolerance`) and of the smallest seed std of the boards compared.

The rule the tolerances are held to: each at least 3x the largest drift measured (on two CPU vendors, and a GPU
where one ran), and at most a tenth of the seed std of every board. The table says, per metric, whether the drift
measured so far allows it; a metric where both cannot hold is chaotic and compared by distribution.
"""

from __future__ import annotations

import fnmatch
import math
import statistics
from pathlib import Path
from typing import Any, TypedDict, cast

from normbench.archive import load_board
from normbench.archive.files import read_json
from normbench.archive.replicate import platform_slug
from normbench.archive.store import Archive
from normbench.io import atomic_write_json, atomic_write_text, read_yaml
from normbench.tasks import task_names
from normbench.tasks.series import decomposition_as_series, series_value
from normbench.training.config import load_config
from normbench.training.reproducibility import COUNTED, by_distribution, chaotic, tolerance
from normbench.training.run.rundir import DECOMPOSITION_NAME

REPORT = "reproducibility"
REPORTED = "archive/reported-drift.yaml"  # drift measured where the replicates' records were not kept


class ReplicateValue(TypedDict):
    """A published per-seed value beside a replicate's (``reproducibility.json``: ``values[]``): the ``board``,
    ``variant``, ``seed`` and ``metric``; the ``published`` value and the ``replicate``'s, the replicate's platform
    (``replicate_platform``) and those of the values the board shows (``published_platforms``); ``seed_std``: the
    metric's std over the variant's seeds; ``chaotic``: why the board's task or preset is chaotic (``None``: it is
    not)."""

    board: str
    variant: str
    seed: int
    metric: str
    published: float
    replicate: float
    replicate_platform: str
    published_platforms: list[str]
    seed_std: float | None
    chaotic: str | None


class ReportedDrift(TypedDict):
    """Drift reported from a platform whose replicates are not archived (``reproducibility.json``: ``reported[]``,
    from :data:`REPORTED`): the ``platform``, ``task`` and ``preset``, the ``runs`` compared, the metric ``pattern``,
    the drift as ``absolute`` or ``relative`` (times the largest published value), ``at_least``: a lower bound, and a
    ``note``."""

    platform: str
    task: str
    preset: str | None
    runs: str
    pattern: str
    absolute: float | None
    relative: float | None
    at_least: bool
    note: str


class SeedSpread(TypedDict):
    """One published metric's spread over seeds (:func:`seed_spreads`): ``board``, ``task``, ``variant``,
    ``metric``, the seeds' ``mean`` and ``std`` and their largest absolute value (``max_abs``)."""

    board: str
    task: str
    variant: str
    metric: str
    mean: float
    std: float
    max_abs: float


class Drift(TypedDict):
    """One drift a metric's tolerance answers to: its size (``drift``), the value it was measured ``at``, the
    ``platform``, ``where`` it was measured and whether it is a lower bound (``at_least``)."""

    drift: float
    at: float
    platform: str
    where: str
    at_least: bool


class MetricDrift(TypedDict):
    """Per metric, the drift measured against its tolerance (``reproducibility.json``: ``metrics[]``, :func:`summary`).

    ``compared``: the values compared, ``bit_identical`` of them; ``platforms``, ``vendors``: where; ``max_drift``
    (``at_least``: a lower bound) and the ``worst`` run; ``tolerance`` (its declared one at the worst value) and the
    ``needed`` 3x drift; ``ceiling``: a tenth of the smallest seed std (``ceiling_at``: where); the drift in
    tolerances and in tenths of that std; ``by_distribution``: why it is compared by distribution (``None``: by its
    tolerance); ``status`` and whether the rule holds (``rule_holds``).
    """

    metric: str
    compared: int
    bit_identical: int
    platforms: list[str]
    vendors: list[str]
    max_drift: float
    at_least: bool
    worst: str
    tolerance: float
    needed: float
    ceiling: float | None
    ceiling_at: str
    drift_in_tolerances: float | None
    drift_in_seed_std: float | None
    by_distribution: str | None
    status: str
    rule_holds: bool


class ChaoticDrift(TypedDict):
    """The largest drift of a metric on a chaotic board (:func:`chaotic_drift`): ``board``, ``metric``, the values
    ``compared``, ``max_drift``, the ``worst`` run and ``why`` the board is chaotic."""

    board: str
    metric: str
    compared: int
    max_drift: float
    worst: str
    why: str | None


class ReproducibilityReport(TypedDict):
    """``results/reproducibility.json``: the drift per metric (``metrics``), the ``reported`` drift and every
    compared value (``values``)."""

    metrics: list[MetricDrift]
    reported: list[ReportedDrift]
    values: list[ReplicateValue]


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
        shown_platforms = [platform_slug({"platform": p}) for p in (board.reproducibility or {}).get("platforms") or []]
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
                        now, _ = series_value(series.get(spec["series"], []), spec)
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


def analysis_series(folder: Path, record: dict[str, Any]) -> dict[str, list[list[float]]]:
    """The series a replicate's archived analyses give a board (its decomposition, at its final step), as the board
    read them when it was built from that run."""
    path = folder / DECOMPOSITION_NAME
    if not path.is_file():
        return {}
    return decomposition_as_series(read_json(path), int(record.get("final_step") or 0))


def vendor(platform: str) -> str:
    """The platform family a replicate's slug names: ``AMD``, ``Intel``, ``GPU`` or ``other``."""
    for prefix, name in (("cpu-amd", "AMD"), ("cpu-intel", "Intel"), ("gpu-", "GPU")):
        if platform.startswith(prefix):
            return name
    return "other"


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


def ceiling(metric: str, spreads: list[SeedSpread]) -> tuple[float | None, str]:
    """A tenth of the smallest seed std of ``metric`` over every board (where the seeds differ at all, and by more
    than 1e-4 of their mean: a metric whose seeds agree to that is stuck, e.g. at the unigram loss), and where; none
    for a count (:data:`~normbench.training.reproducibility.COUNTED`: steps, unselectable keys), which moves by whole
    units, as the published-spread test holds it."""
    if any(fnmatch.fnmatchcase(metric, p) for p in COUNTED):  # a count moves by whole units: no seed-spread ceiling
        return None, ""
    rows = [r for r in spreads if r["metric"] == metric and r["std"] > 1e-4 * abs(r["mean"])]
    if not rows:
        return None, ""
    low = min(rows, key=lambda r: r["std"])
    return low["std"] / 10, f"{low['board']} {low['variant']}"


def summary(
    rows: list[ReplicateValue],
    reported: list[ReportedDrift] | None = None,
    spreads: list[SeedSpread] | None = None,
) -> list[MetricDrift]:
    """Per metric: the largest drift measured between replicates (archived ones on boards whose task is not
    chaotic, and reported ones), the tolerance it asks for (3x), the ceiling (a tenth of the smallest seed std of
    every board) and the rule's status: ``holds``, ``by distribution`` (declared, and no tolerance can satisfy
    both bounds), or what breaks it."""
    reported, spreads = reported or [], spreads or []
    drifts: dict[str, list[Drift]] = {}
    compared: dict[str, list[ReplicateValue]] = {}
    for r in rows:
        compared.setdefault(r["metric"], []).append(r)
        if r.get("chaotic"):
            continue
        drifts.setdefault(r["metric"], []).append(
            {
                "drift": abs(r["replicate"] - r["published"]),
                "at": abs(r["published"]),
                "platform": r["replicate_platform"],
                "where": f"{r['board']} {r['variant']} seed {r['seed']}",
                "at_least": False,
            }
        )
    metrics_of_task: dict[str, set[str]] = {}
    for s in spreads:
        metrics_of_task.setdefault(str(s["task"]), set()).add(s["metric"])
    for r in rows:
        metrics_of_task.setdefault(str(r["board"]).split("/")[0], set()).add(r["metric"])
    for rep in reported:
        if rep["preset"] and board_chaos(rep["task"], rep["preset"]):
            continue  # a chaotic config's drift is compared by distribution
        for metric in sorted(m for m in metrics_of_task.get(rep["task"], ()) if fnmatch.fnmatchcase(m, rep["pattern"])):
            largest = max(
                (s["max_abs"] for s in spreads if s["metric"] == metric and s["task"] == rep["task"]), default=0
            )
            relative = cast(float, rep["relative"])  # a report gives its drift as absolute, else as relative
            drift = rep["absolute"] if rep["absolute"] is not None else relative * largest
            drifts.setdefault(metric, []).append(
                {
                    "drift": float(drift),
                    "at": largest,
                    "platform": rep["platform"],
                    "where": f"reported: {rep['runs']}",
                    "at_least": rep["at_least"],
                }
            )
    out: list[MetricDrift] = []
    # a metric compared on chaotic configurations only has no drift a tolerance answers to: it is listed apart
    held = {m for m, group in compared.items() if any(not r.get("chaotic") for r in group)}
    for metric in sorted(set(drifts) | held):
        group, found = compared.get(metric, []), drifts.get(metric, [])
        worst = max(found, key=lambda d: d["drift"]) if found else None
        tol = tolerance(metric)
        allowed = tol.abs + tol.rel * (worst["at"] if worst else 0.0)
        drift = worst["drift"] if worst else 0.0
        cap, cap_at = ceiling(metric, spreads)
        declared = by_distribution(metric)
        if declared:
            status = (
                "by distribution"
                if (cap is not None and 3 * drift > cap)
                else "declared by distribution, yet a tolerance fits"
            )
        elif allowed < 3 * drift:
            status = "tolerance below 3x the drift"
        elif cap is not None and allowed > cap:
            status = "tolerance above a tenth of the seed std"
        else:
            status = "holds"
        out.append(
            {
                "metric": metric,
                "compared": len(group),
                "bit_identical": sum(r["replicate"] == r["published"] for r in group),
                "platforms": sorted({d["platform"] for d in found} | {r["replicate_platform"] for r in group}),
                "vendors": sorted({vendor(d["platform"]) for d in found}),
                "max_drift": drift,
                "at_least": bool(worst and worst["at_least"]),
                "worst": worst["where"] if worst else "",
                "tolerance": allowed,
                "needed": 3 * drift,
                "ceiling": cap,
                "ceiling_at": cap_at,
                "drift_in_tolerances": drift / allowed if allowed else None,
                "drift_in_seed_std": 10 * drift / cap if cap else None,
                "by_distribution": declared,
                "status": status,
                "rule_holds": status in ("holds", "by distribution"),
            }
        )
    return out


def chaotic_drift(rows: list[ReplicateValue]) -> list[ChaoticDrift]:
    """Per (board, metric) of a chaotic task or preset: the largest drift, compared with the seeds' spread."""
    by_key: dict[tuple[str, str], list[ReplicateValue]] = {}
    for r in rows:
        if r.get("chaotic"):
            by_key.setdefault((r["board"], r["metric"]), []).append(r)
    out: list[ChaoticDrift] = []
    for (board, metric), group in sorted(by_key.items()):
        worst = max(group, key=lambda r: abs(r["replicate"] - r["published"]))
        out.append(
            {
                "board": board,
                "metric": metric,
                "compared": len(group),
                "max_drift": abs(worst["replicate"] - worst["published"]),
                "worst": f"{worst['variant']} seed {worst['seed']}",
                "why": worst["chaotic"],
            }
        )
    return out


def fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3g}"


def render(rows: list[ReplicateValue], table: list[MetricDrift], reported: list[ReportedDrift] | None = None) -> str:
    lines = [
        "# Reproducibility: drift between replicates",
        "",
        "Generated from the run archive (`results/archive/`), the drift reported from platforms whose records are "
        f"not archived (`results/{REPORTED}`) and the published boards; do not edit by hand "
        "(`python -m normbench.boards.replicates`).",
        "Each published per-seed value is compared with every archived replicate of its run trained on another "
        "platform (the board's own metric, read off the replicate's series, or its archived decomposition for the "
        "decomposition's shares).",
        "",
        "The rule (`normbench.training.reproducibility`): each tolerance at least 3x the largest drift measured "
        "and at most a tenth of the smallest seed std of every board (the ceiling). Where no tolerance can "
        "satisfy both, the metric is compared by its distribution over seeds, and a task or preset whose per-seed "
        "values do not travel at all is declared chaotic (its drift is listed apart, not held to a tolerance).",
        "",
    ]
    if not table:
        lines += [
            "No published run has an archived replicate from another platform yet: train one with "
            "`normbench bench <task>` or `normbench bake` on another machine and commit `results/archive/`.",
            "",
        ]
        return "\n".join(lines)
    lines += [
        "| metric | values compared | bit-identical | platforms | largest drift | 3x drift | tolerance "
        "| ceiling | status | worst run |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for t in table:
        platforms = ", ".join(f"`{p}`" for p in t["platforms"])
        drift = ("≥ " if t["at_least"] else "") + fmt(t["max_drift"])
        status = t["status"] if t["rule_holds"] else f"**{t['status']}**"
        tol = "–" if t["by_distribution"] else fmt(t["tolerance"])
        lines.append(
            f"| `{t['metric']}` | {t['compared']} | {t['bit_identical']} | {platforms} | {drift} "
            f"| {fmt(t['needed'])} | {tol} | {fmt(t['ceiling'])} | {status} | {t['worst']} |"
        )
    chaos = chaotic_drift(rows)
    if chaos:
        lines += [
            "",
            "## Chaotic configurations",
            "",
            "Their per-seed values do not travel between platforms; a re-run elsewhere is compared by the "
            "distribution over seeds.",
            "",
            "| board | metric | values compared | largest drift | worst run | why |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {c['board']} | `{c['metric']}` | {c['compared']} | {fmt(c['max_drift'])} | {c['worst']} | {c['why']} |"
            for c in chaos
        ]
    if reported:
        lines += [
            "",
            "## Reported drift",
            "",
            "Measured on platforms whose replicates are not in the archive (their records were not kept).",
            "",
            "| platform | task | runs | metrics | drift | note |",
            "|---|---|---|---|---|---|",
        ]
        for r in reported:
            drift = f"{r['absolute']:g}" if r["absolute"] is not None else f"{r['relative']:g} relative"
            where = r["task"] + (f" (preset {r['preset']})" if r["preset"] else "")
            lines.append(
                f"| {r['platform']} | {where} | {r['runs']} | `{r['pattern']}` | "
                f"{'≥ ' if r['at_least'] else ''}{drift} | {r['note']} |"
            )
    return "\n".join([*lines, ""])


def write_report(results_dir: str | Path = "results") -> Path:
    """Write ``results/reproducibility.{json,md}`` from the archive and the boards; returns the Markdown path."""
    results_dir = Path(results_dir)
    rows = comparisons(results_dir)
    reported = read_reported(results_dir)
    table = summary(rows, reported, seed_spreads(results_dir))
    report: ReproducibilityReport = {"metrics": table, "reported": reported, "values": rows}
    atomic_write_json(results_dir / f"{REPORT}.json", report)
    return atomic_write_text(results_dir / f"{REPORT}.md", render(rows, table, reported))


if __name__ == "__main__":  # python -m normbench.boards.replicates [RESULTS_DIR]
    import sys

    print(f"normbench: wrote {write_report(sys.argv[1] if len(sys.argv) > 1 else 'results')}")
