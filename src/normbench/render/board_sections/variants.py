"""A board's variants in Markdown: the headline table, its flagged, collapsed and failed seeds, the means without the
flagged seeds, every seed's values, and what each metric is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from normbench.archive import Board, Metric, VariantEntry
from normbench.render.board_sections.cells import (
    fmt_metric,
    fmt_value,
    norms_cell,
    seed_status,
    seeds_cell,
    status_cell,
)
from normbench.render.markdown import Lines, cell


def variants_table(board: Board) -> Lines:
    names = board.shown_metrics
    lines = [
        "## Variants",
        "",
        "| variant | norms | seeds | status | " + " | ".join(names) + " |",
        "|---|---|---|---|" + "---|" * len(names),
    ]
    for v in board.variants:
        cells = [fmt_metric(v.metrics[m]) for m in names]
        lines.append(
            f"| `{v.name}` | {norms_cell(v)} | {seeds_cell(v)} | {status_cell(v)} | " + " | ".join(cells) + " |"
        )
    return lines


def chance_note(board: Board) -> Lines:
    if not any("chance" in m.keys or m.chance is not None for v in board.variants for m in v.metrics.values()):
        return []
    return [
        "",
        "Unselectable fractions: (chance x) is the same statistic for Gaussian random keys N(0, I_d) with the "
        "same width d and number of keys per set (`normbench.judge.chance`); (0 by construction) marks keys a "
        "scaling norm puts on a sphere, where every key is selectable: a sanity check of the geometry, "
        "not evidence.",
    ]


def with_flagged_means(board: Board) -> list[VariantEntry]:
    """The variants with flagged seeds whose metrics also have an aggregate without them."""
    return [
        v
        for v in board.variants
        if v.flagged and any("without_flagged" in m.keys or m.without_flagged for m in v.metrics.values())
    ]


def flagged_seeds(board: Board) -> Lines:
    flagged = [(v.name, seed, why) for v in board.variants for seed, why in (v.flagged or {}).items()]
    if not flagged:
        return []
    lead = (
        "Flagged seeds (a seed at chance or collapsed is kept in every mean and verdict above, the means "
        "without the flagged seeds follow; a diverged seed is in no mean or verdict):"
        if with_flagged_means(board)
        else "Flagged seeds (a diverged seed is in no mean or verdict):"
    )
    return ["", lead, ""] + [f"- `{name}` seed {seed}: {why}" for name, seed, why in flagged]


def render_collapse(collapse: Mapping[str, Any] | None, variants: tuple[VariantEntry, ...]) -> Lines:
    """How collapse was judged (``bench.collapse``): the rule, the baseline values, the runs without one."""
    if not collapse:
        return []
    found = {round(v, 4) for e in variants for v in (e.collapse_baseline or {}).values() if v is not None}
    shown = ", ".join(f"{v:.4f}" for v in sorted(found)) or "none computed"
    lines = [
        "",
        f"Collapse: a seed is flagged collapsed when `{collapse['metric']}` >= {collapse['baseline']} - "
        f"{collapse['within']:g}, its baseline computed from the run's own training data ({shown}); "
        f"collapsed seeds are listed per variant in `leaderboard.json` (`collapsed`).",
    ]
    if collapse.get("unavailable"):
        lines += ["", "Not judged for collapse (no baseline):", ""]
        lines += [f"- {cell(why)}" for why in collapse["unavailable"]]
    return lines


def failed_runs(board: Board) -> Lines:
    failed = [(v.name, seed, why) for v in board.variants for seed, why in (v.failed or {}).items()]
    names = {v.name for v in board.variants}
    failed += [
        (r["variant"], str(r["seed"]), r.get("error") or "failed")
        for r in board.failed_runs or ()
        if r["variant"] not in names
    ]
    if not failed:
        return []
    lines = ["", "Failed runs (in no mean or verdict; the same command retries them):", ""]
    return lines + [f"- `{name}` seed {seed}: failed ({cell(why)})" for name, seed, why in failed]


def without_flagged_table(board: Board) -> Lines:
    without = with_flagged_means(board)
    if not without:
        return []
    names = board.shown_metrics
    lines = [
        "",
        "| variant | " + " | ".join(f"{m} without flagged" for m in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for v in without:
        cells = [fmt_metric(v.metrics[m].without_flagged or NO_SEED_LEFT) for m in names]
        lines.append(f"| `{v.name}` | " + " | ".join(cells) + " |")
    return lines


NO_SEED_LEFT = Metric(per_seed=(), n=0, mean=None, std=None, note="no seed left")


def per_seed_table(board: Board) -> Lines:
    names = board.shown_metrics
    lines = [
        "",
        "### Per seed",
        "",
        "| variant | seed | status | " + " | ".join(names) + " |",
        "|---|---|---|" + "---|" * len(names),
    ]
    for v in board.variants:
        for i, seed in enumerate(v.seeds):
            mark = " (flagged)" if str(seed) in (v.flagged or {}) else ""
            cells = [fmt_value(v.metrics[m].per_seed[i] if i < len(v.metrics[m].per_seed) else None) for m in names]
            lines.append(f"| `{v.name}` | {seed}{mark} | {cell(seed_status(v, seed))} | " + " | ".join(cells) + " |")
        for failed in v.failed or {}:
            lines.append(f"| `{v.name}` | {failed} | failed (seed {failed}) | " + " | ".join("–" for _ in names) + " |")
    return lines


def measured_anywhere(board: Board, metric: str) -> bool:
    """Whether any seed of any variant of ``board`` has a value of ``metric``."""
    return any(x is not None for v in board.variants if metric in v.metrics for x in v.metrics[metric].per_seed)


def metric_definitions(board: Board) -> Lines:
    defined = board.metrics or {}
    others = [m for m in defined if m not in board.shown_metrics]
    hidden = [m for m in others if measured_anywhere(board, m)]
    lines: Lines = []
    if hidden:
        shown = ", ".join(f"`{m}`" for m in hidden)
        lines += ["", f"Also measured (in `leaderboard.json` and the tables below): {shown}."]
    if unmeasured := [m for m in others if m not in hidden]:
        lines += ["", f"Not measured by this sweep (no run has a value): {', '.join(f'`{m}`' for m in unmeasured)}."]
    lines += ["", "Metric definitions (series of every run, then aggregated over seeds):", ""]
    for name, spec in defined.items():
        how = (
            f"first step with `{spec['series']}` ≤ {spec['first_below']}"
            if "first_below" in spec
            else f"`{spec['series']}` at step {spec.get('at_step', 'last')}"
        )
        lines.append(f"- `{name}`: {how}")
    return lines
