"""One run, one result: a run that several published boards show has the same values on every one.

A run is (task, config hash, seed). Its canonical values are those of the earliest board that published it
(``generated_at``): for a run built from the archive that board already shows the archive's canonical replicate
(:meth:`normbench.archive.store.Archive.canonical`); for a run published before the archive it is the board
where it first appeared, as the boards built since record it (``published_seeds``: a rebuild moves a board's
``generated_at``, never that name). Another board that shows the same run with other values (a replicate trained
on another platform) takes the canonical values, variant by variant; its metrics the canonical board does not have
are left without a value (they were measured on the replicate only), and its claims are judged again
(``normbench rejudge``). A metric only one board has, on the same runs, is an analysis the other did not run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from normbench.judge.rows import MetricRow, RowProvenance, VariantRow
from normbench.judge.stats import aggregate

CANONICAL_NOTE = "not measured on the canonical runs ({board})"


@dataclass(frozen=True)
class Shown:
    """One variant of one published board: where, when it was built, and the variant's JSON."""

    board: str  # the board's folder under the results root, e.g. ``lm/dyt-tuned``
    generated_at: str
    variant: VariantRow


def published_variants(results_dir: str | Path) -> dict[tuple[str, str], list[Shown]]:
    """Every published board's variants by (task, config hash), the canonical board first (:func:`source_first`),
    then the others, earliest first."""
    results_dir = Path(results_dir)
    out: dict[tuple[str, str], list[Shown]] = {}
    for path in sorted(results_dir.rglob("leaderboard.json")):
        if "archive" in path.relative_to(results_dir).parts:
            continue
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue  # not a board (the commands that read it say so)
        if not isinstance(doc, dict):
            continue
        board = str(path.parent.relative_to(results_dir))
        for variant in doc.get("variants") or []:
            if variant.get("config_hash") and variant.get("seeds"):
                key = (str(doc.get("task")), str(variant["config_hash"]))
                out.setdefault(key, []).append(Shown(board, str(doc.get("generated_at", "")), variant))
    for shown in out.values():
        shown.sort(key=lambda s: (s.generated_at, s.board))
        shown[:] = source_first(shown)
    return out


def source_first(shown: list[Shown], seed: int | None = None) -> list[Shown]:
    """``shown`` (earliest board first) with the recorded source of its runs published before the archive (of
    ``seed``, or of any seed) moved to the front, if it still shows them.

    The source is the board that the earliest board to record one (``published_seeds``) names. A board's
    ``generated_at`` moves each time it is rebuilt, so "the earliest board" alone would hand the runs' canonical
    values to another board after each rebuild of the first one; the name recorded when a board first took their
    values does not move."""
    boards = {s.board for s in shown}
    for s in shown:
        for name, seeds in (s.variant.get("published_seeds") or {}).items():
            if name in boards and (seed is None or seed in seeds):
                return sorted(shown, key=lambda other: other.board != name)  # stable: the others stay by date
    return list(shown)


def differing_metrics(variant: VariantRow, canonical: VariantRow) -> list[str]:
    """The metrics both variants have whose values differ for a seed both show a value of: ``variant`` shows another
    replicate of the runs. (A metric only one of them has a value of is an analysis the other did not run.)"""
    seeds, canon_seeds = list(variant.get("seeds") or []), list(canonical.get("seeds") or [])
    out = []
    for metric, agg in (variant.get("metrics") or {}).items():
        theirs_agg = (canonical.get("metrics") or {}).get(metric)
        if theirs_agg is None:
            continue
        mine = dict(zip(seeds, (agg or {}).get("per_seed") or [], strict=False))
        theirs = dict(zip(canon_seeds, theirs_agg.get("per_seed") or [], strict=False))
        both = [seed for seed in mine if mine[seed] is not None and theirs.get(seed) is not None]
        if any(mine[seed] != theirs[seed] for seed in both):
            out.append(metric)
    return out


def conflicts(results_dir: str | Path) -> list[tuple[str, str, str, list[str]]]:
    """(task, config hash, board, metrics) for each board showing a run with other values than its canonical."""
    out = []
    for (task, digest), shown in published_variants(results_dir).items():
        first = shown[0]
        for other in shown[1:]:
            metrics = differing_metrics(other.variant, first.variant)
            if metrics:
                out.append((task, digest, other.board, metrics))
    return out


def adopt_canonical(
    board: dict[str, Any], board_name: str, results_dir: str | Path
) -> tuple[dict[str, Any], list[str]]:
    """``board`` (JSON) with each variant whose runs an earlier board shows taking that board's values (metrics,
    seeds' status, provenance); returns the new board and one line per variant changed."""
    shown = published_variants(results_dir)
    variants: list[VariantRow] = []
    changed: list[str] = []
    for variant in board.get("variants") or []:
        key = (str(board.get("task")), str(variant.get("config_hash")))
        earlier = shown.get(key)
        first = earlier[0] if earlier else None
        if first is None or first.board == board_name or not differing_metrics(variant, first.variant):
            variants.append(variant)
            continue
        canon = first.variant
        seeds = list(variant.get("seeds") or [])
        missing = sorted(set(seeds) - set(canon.get("seeds") or []))
        if missing:
            raise ValueError(
                f"results: {board_name} shows {variant['name']} ({key[1]}) seeds {missing}, which its canonical "
                f"board {first.board} does not; rebuild it from the archive"
            )
        variants.append({**variant, **canonical_entry(variant, canon, seeds, first.board), "canonical": first.board})
        changed.append(f"{variant['name']} ({key[1]}): the values of results/{first.board}/")
    return {**board, "variants": variants}, changed


def canonical_entry(variant: VariantRow, canon: VariantRow, seeds: list[int], board: str) -> VariantRow:
    """The fields of ``variant`` (showing ``seeds``) taken from ``canon``, its entry on the canonical ``board``:
    each metric re-aggregated from the canonical per-seed values of those seeds (``None``: a metric ``canon``
    lacks), and the runs' status, provenance and collapse flags."""
    index = {seed: i for i, seed in enumerate(canon.get("seeds") or [])}
    metrics: dict[str, MetricRow] = {}
    for metric in variant.get("metrics") or {}:
        agg = (canon.get("metrics") or {}).get(metric)
        if agg is None:
            metrics[metric] = {
                **aggregate([None] * len(seeds), [None] * len(seeds)),
                "note": CANONICAL_NOTE.format(board=f"results/{board}/"),
            }
            continue
        values = [agg["per_seed"][index[seed]] for seed in seeds]
        lower = agg.get("per_seed_lower_bound") or [None] * len(index)
        metrics[metric] = {
            **aggregate(values, [lower[index[seed]] for seed in seeds]),
            **({"note": agg["note"]} if agg.get("note") else {}),
        }
    keep = {str(seed) for seed in seeds}
    out: VariantRow = {"metrics": metrics, "status": canon["status"] if "status" in canon else variant["status"]}
    if canon.get("run_status") is not None:
        out["run_status"] = {k: v for k, v in canon["run_status"].items() if k in keep}
    if canon.get("collapse_baseline") is not None:
        out["collapse_baseline"] = {k: v for k, v in canon["collapse_baseline"].items() if k in keep}
    if canon.get("collapsed") is not None:
        out["collapsed"] = [s for s in canon["collapsed"] if s in keep]
    if canon.get("provenance") is not None:
        pv: RowProvenance = {**canon["provenance"]}
        if pv.get("log_dirs"):
            pv["log_dirs"] = [d for d in pv["log_dirs"] if d is not None and d.rpartition("seed")[2] in keep]
        out["provenance"] = pv
    return out
