"""How far replicates of one run drift apart: ``results/reproducibility.{md,json}``, generated from the archive.

For every published board, every run it shows (variant, config hash, seed) and every replicate of that run in the
run archive trained on another platform than the values the board shows, each metric of the board is read off the
replicate's series (the board's own metric spec) and compared with the published per-seed value. Per metric, the
table gives the largest absolute drift, in units of the declared cross-platform tolerance
(:func:`normbench.training.reproducibility.tolerance`) and of the smallest seed std of the boards compared.

The rule the tolerances are held to: each at least 3x the largest drift measured (on two CPU vendors, and a GPU
where one ran), and at most a tenth of the seed std of every board. The table says, per metric, whether the drift
measured so far allows it; a metric where both cannot hold is chaotic and compared by distribution.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from normbench.archive.store import Archive, platform_slug
from normbench.io import atomic_write_json, atomic_write_text
from normbench.tasks.series import series_value
from normbench.training.reproducibility import tolerance

REPORT = "reproducibility"


def published_boards(results_dir: Path) -> list[Path]:
    return sorted(p for p in Path(results_dir).rglob("leaderboard.json") if "archive" not in p.parts)


def comparisons(results_dir: str | Path) -> list[dict[str, Any]]:
    """One row per (board, variant, seed, metric, replicate) where the archive holds a replicate whose series give
    the metric: the published value, the replicate's, and the platforms."""
    results_dir = Path(results_dir)
    archive = Archive(results_dir)
    rows = []
    for path in published_boards(results_dir):
        board = json.loads(path.read_text(encoding="utf-8"))
        task, specs = board.get("task"), board.get("metrics") or {}
        shown_platforms = [
            platform_slug({"platform": p}) for p in (board.get("reproducibility") or {}).get("platforms") or []
        ]
        for variant in board.get("variants") or []:
            seeds, config_hash = variant.get("seeds") or [], variant.get("config_hash")
            for i, seed in enumerate(seeds):
                reps = archive.replicates(task, config_hash, int(seed)) if task and config_hash else []
                shown = archive.canonical(task, config_hash, int(seed)) if reps else None
                for rep in reps:
                    if rep == shown:  # the board's own values: not a replicate of them
                        continue
                    record = rep.record()
                    if record.get("status") != "done":
                        continue
                    for metric, spec in specs.items():
                        if not isinstance(spec, dict) or "series" not in spec:
                            continue
                        published = ((variant.get("metrics") or {}).get(metric) or {}).get("per_seed") or []
                        was = published[i] if i < len(published) else None
                        now, _ = series_value((record.get("series") or {}).get(spec["series"], []), spec)
                        if was is None or now is None:
                            continue
                        std = ((variant.get("metrics") or {}).get(metric) or {}).get("std")
                        rows.append(
                            {
                                "board": str(path.parent.relative_to(results_dir)),
                                "variant": variant["name"],
                                "seed": int(seed),
                                "metric": metric,
                                "published": float(was),
                                "replicate": float(now),
                                "replicate_platform": rep.name,
                                "published_platforms": shown_platforms,
                                "seed_std": std,
                            }
                        )
    return rows


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per metric: runs compared, the largest drift, in tolerance units and in seed-std units, and the rule."""
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_metric.setdefault(r["metric"], []).append(r)
    out = []
    for metric, group in sorted(by_metric.items()):
        worst = max(group, key=lambda r: abs(r["replicate"] - r["published"]))
        drift = abs(worst["replicate"] - worst["published"])
        tol = tolerance(metric)
        allowed = tol.abs + tol.rel * abs(worst["published"])
        stds = [r["seed_std"] for r in group if r.get("seed_std")]
        min_std = min(stds) if stds else None
        out.append(
            {
                "metric": metric,
                "compared": len(group),
                "bit_identical": sum(r["replicate"] == r["published"] for r in group),
                "platforms": sorted({r["replicate_platform"] for r in group}),
                "max_drift": drift,
                "worst": f"{worst['board']} {worst['variant']} seed {worst['seed']}",
                "tolerance": allowed,
                "drift_in_tolerances": drift / allowed if allowed else None,
                "drift_in_seed_std": drift / min_std if min_std else None,
                "rule_holds": bool(allowed >= 3 * drift and (min_std is None or allowed <= 0.1 * min_std)),
            }
        )
    return out


def fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.3g}"


def render(rows: list[dict[str, Any]], table: list[dict[str, Any]]) -> str:
    lines = [
        "# Reproducibility: drift between replicates",
        "",
        "Generated from the run archive (`results/archive/`) and the published boards; do not edit by hand.",
        "Each published per-seed value is compared with every archived replicate of its run trained on another "
        "platform (the board's own metric, read off the replicate's series). The rule: each tolerance at least "
        "3x the largest drift measured and at most a tenth of the smallest seed std of the boards compared.",
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
        "| metric | values compared | bit-identical | replicate platforms | largest drift | in tolerances "
        "| in seed stds | rule holds | worst run |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for t in table:
        platforms = ", ".join(f"`{p}`" for p in t["platforms"])
        lines.append(
            f"| `{t['metric']}` | {t['compared']} | {t['bit_identical']} | {platforms} "
            f"| {fmt(t['max_drift'])} | {fmt(t['drift_in_tolerances'])} | {fmt(t['drift_in_seed_std'])} "
            f"| {'yes' if t['rule_holds'] else '**no**'} | {t['worst']} |"
        )
    return "\n".join([*lines, ""])


def write_report(results_dir: str | Path = "results") -> Path:
    """Write ``results/reproducibility.{json,md}`` from the archive and the boards; returns the Markdown path."""
    results_dir = Path(results_dir)
    rows = comparisons(results_dir)
    table = summary(rows)
    atomic_write_json(results_dir / f"{REPORT}.json", {"metrics": table, "values": rows})
    return atomic_write_text(results_dir / f"{REPORT}.md", render(rows, table))


if __name__ == "__main__":  # python -m normbench.reporting.replicates [RESULTS_DIR]
    import sys

    print(f"normbench: wrote {write_report(sys.argv[1] if len(sys.argv) > 1 else 'results')}")
