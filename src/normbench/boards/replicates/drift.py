"""Per metric, the drift measured between replicates against its tolerance and the seeds' spread (:func:`summary`),
and the drift of a chaotic board's metrics, listed apart (:func:`chaotic_drift`)."""

from __future__ import annotations

import fnmatch
from typing import cast

from normbench.archive.board_keys import board_task
from normbench.boards.replicates.compare import board_chaos
from normbench.boards.replicates.rows import ChaoticDrift, Drift, MetricDrift, ReplicateValue, ReportedDrift, SeedSpread
from normbench.training.reproducibility import COUNTED, by_distribution, tolerance


def vendor(platform: str) -> str:
    """The platform family a replicate's slug names: ``AMD``, ``Intel``, ``GPU`` or ``other``."""
    for prefix, name in (("cpu-amd", "AMD"), ("cpu-intel", "Intel"), ("gpu-", "GPU")):
        if platform.startswith(prefix):
            return name
    return "other"


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
        metrics_of_task.setdefault(board_task(str(r["board"])), set()).add(r["metric"])
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
