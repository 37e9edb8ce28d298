"""Where a board's runs trained and what a re-run may give, in Markdown: the provenance of each variant (config hash,
seeds, commits, dates, wall time) and the platforms with their declared tolerances."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from typing import Any

from normbench.archive import Board
from normbench.render.markdown import Lines
from normbench.training.reproducibility import tolerance_table


def provenance_table(board: Board) -> Lines:
    lines = [
        "",
        "## Provenance per variant",
        "",
        "| variant | config hash | seeds | commits | dates | wall time (s) |",
        "|---|---|---|---|---|---|",
    ]
    for v in board.variants:
        pv = v.provenance or {}
        commits = ", ".join(c[:12] for c in pv["git_commits"]) + (" (dirty)" if pv["dirty"] else "")
        lines.append(
            f"| `{v.name}` | `{v.config_hash}` | {', '.join(map(str, v.seeds))} | {commits} | "
            f"{pv['dates'][0]} – {pv['dates'][1]} | {pv['wall_time_s']:.0f} |"
        )
    shared = [v for v in board.variants if v.canonical]
    grown = [v for v in board.variants if v.published_seeds]
    if shared or grown:
        lines.append("")
    for v in grown:
        for where, seeds in (v.published_seeds or {}).items():
            lines.append(
                f"- `{v.name}`, seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}: the values published "
                f"on `results/{where}/` before the run archive kept records (no series kept: the figures show the "
                f"other seeds)."
            )
    for v in shared:
        lines.append(
            f"- `{v.name}`: the values of its canonical runs, published first on `results/{v.canonical}/` "
            f"(one run, one result); metrics that board does not have are left without a value."
        )
    return lines


def stored_tolerance(table: list[Mapping[str, Any]], metric: str) -> Mapping[str, Any]:
    """The row of a board's stored tolerance table that applies to ``metric`` (first match wins)."""
    for row in table:
        if fnmatch.fnmatchcase(metric, row["metrics"]):
            return row
    return tolerance_table()[-1] if not table else table[-1]


def render_reproducibility(rep: Mapping[str, Any] | None) -> Lines:
    """Where the runs trained and what a re-run may give (:mod:`normbench.training.reproducibility`)."""
    if not rep:
        return []
    lines = ["", "## Reproducibility", ""]
    for p in rep["platforms"]:
        gpu = f", {p['gpu']} (CUDA {p['cuda']}, cuDNN {p['cudnn']})" if p.get("gpu") else ""
        flags = ", deterministic algorithms" if p.get("deterministic_algorithms") else ""
        lines.append(
            f"- Trained on {p['cpu']} ({p['cpu_capability']}, {p['threads']} threads, "
            f"MKL_CBWR={p.get('mkl_cbwr')}){gpu}{flags}, torch {p['torch']}."
        )
    if rep["runs_without_platform"]:
        lines.append(
            f"- {rep['runs_without_platform']} {'run was' if rep['runs_without_platform'] == 1 else 'runs were'} "
            "recorded before provenance named the platform "
            f"(their torch and device are in the provenance table)."
        )
    if rep.get("chaotic"):  # no per-value tolerance holds between platforms: the distribution over seeds does
        return [
            *lines,
            "- The same platform and torch retrain every run bit for bit; another platform does not: per-seed values "
            "drift apart between platforms by more than any tolerance a tenth of the seed spread allows (measured "
            "between archived replicates in `results/reproducibility.md`).",
            f"- **Chaotic task**: {rep['chaotic']}. Per-seed values do not travel between platforms; "
            f"compare a re-run by its distribution over seeds (the verdicts below rest on the seeds' "
            f"spread), not digit by digit.",
        ]
    table = rep.get("tolerances") or []
    acc, loss, angle = (stored_tolerance(table, name) for name in ("acc", "loss", "angle"))
    by_distribution = rep.get("by_distribution") or []
    lines.append(
        "- The same platform and torch retrain every run bit for bit; any other platform gives every "
        f"metric within its declared tolerance (accuracies {acc['abs']:g}, losses "
        f"{loss['rel']:g} relative, angles {angle['abs']:g}°; "
        "`normbench.training.reproducibility.TOLERANCES`)"
        + (
            ", except "
            + " and ".join(f"`{row['metrics']}`" for row in by_distribution)
            + ": no tolerance below a tenth of their seed spread covers their drift between platforms, so a re-run "
            "of those lies within three seed standard deviations of the published seeds (`results/reproducibility.md`)."
            if by_distribution
            else "."
        )
    )
    return lines
