"""The reproducibility report written: ``results/reproducibility.md`` (:func:`render`) and ``.json``
(:func:`write_report`), from the archive, the reported drift and the published boards."""

from __future__ import annotations

from pathlib import Path

from normbench.boards.replicates.compare import REPORTED, comparisons, read_reported, seed_spreads
from normbench.boards.replicates.drift import chaotic_drift, summary
from normbench.boards.replicates.rows import MetricDrift, ReplicateValue, ReportedDrift, ReproducibilityReport
from normbench.formatting import significant
from normbench.io import atomic_write_json, atomic_write_text

REPORT = "reproducibility"


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
        drift = ("≥ " if t["at_least"] else "") + significant(t["max_drift"])
        status = t["status"] if t["rule_holds"] else f"**{t['status']}**"
        tol = "–" if t["by_distribution"] else significant(t["tolerance"])
        lines.append(
            f"| `{t['metric']}` | {t['compared']} | {t['bit_identical']} | {platforms} | {drift} "
            f"| {significant(t['needed'])} | {tol} | {significant(t['ceiling'])} | {status} | {t['worst']} |"
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
            f"| {c['board']} | `{c['metric']}` | {c['compared']} | {significant(c['max_drift'])} | {c['worst']} "
            f"| {c['why']} |"
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
