"""A board in Markdown: ``leaderboard.md`` is :func:`render` of ``leaderboard.json``, one function per section.

The Markdown is a pure function of the :class:`~normbench.archive.Board` (its figures included), so any
clone renders every published board again byte for byte; it is never edited by hand.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from normbench.archive import Board, JudgedClaim, Metric, VariantEntry
from normbench.boards.progress import render_progress
from normbench.judge.chance import chance_text
from normbench.judge.choice import render_choice
from normbench.judge.collapse import AT_CHANCE, COLLAPSED
from normbench.judge.reference_runs import render_reference
from normbench.judge.stats import gap, values_of
from normbench.render.chance_view import against_chance_table
from normbench.render.claims_view import claims_table, findings
from normbench.render.markdown import Lines, cell
from normbench.render.matrix import UNSELECTABLE, panels
from normbench.render.tuned_view import rates_table, side_by_side
from normbench.render.width import render_width
from normbench.training.reproducibility import tolerance_table

# --------------------------------------------------------------------------------------------------- cells


def fmt_value(value: float | None) -> str:
    """One seed's value: 3 decimals, whole numbers from 100 up, ``–`` when missing."""
    if value is None:
        return "–"
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3f}"


def fmt_metric(m: Metric) -> str:
    """``mean ± std`` (``± –`` when fewer than two seeds give a spread), with ``(n = k of s seeds)`` when
    some seeds (diverged) are not in the mean."""
    n_seeds = len(m.per_seed)
    if m.mean is not None:
        digits = 0 if abs(m.mean) >= 100 else 3
        std = "–" if m.std is None or m.n < 2 else f"{m.std:.{digits}f}"
        of = f" (n = {m.n} of {n_seeds} seeds)" if m.n < n_seeds else ""
        return f"{m.mean:.{digits}f} ± {std}{of}{chance_text(m.chance)}"
    if m.n:
        return f"{m.n}/{n_seeds} seeds only; others {m.note or 'missing'}"
    return m.note or "missing"


def diverged_text(seed: str | int, step: int | None) -> str:
    """``diverged at step k (seed s)``: k is the record's ``diverged_at_step``."""
    return f"diverged at step {step} (seed {seed})" if step is not None else f"diverged (seed {seed})"


def status_cell(variant: VariantEntry) -> str:
    """``done``, or e.g. ``diverged at step 37 (seed 1); failed (seed 2); 2 done`` when some seeds
    diverged or failed, with ``; collapsed (seeds 0, 2)`` when some collapsed and ``; at chance (seed 1)`` when some
    stayed at chance."""
    diverged = variant.diverged_at_step or {}
    failed = variant.failed or {}
    mark = "".join(f"; {what} ({seeds_text(seeds)})" for what, seeds in flagged_kinds(variant).items())
    if not diverged and not failed:
        return variant.status + mark
    parts = [diverged_text(seed, step) for seed, step in diverged.items()]
    parts += [f"failed (seed {seed})" for seed in failed]
    done = sum(s == "done" for s in (variant.run_status or {}).values())
    return "; ".join(parts + ([f"{done} done"] if done else [])) + mark


def flagged_kinds(variant: VariantEntry) -> dict[str, list[str]]:
    """The variant's seeds kept in its means but flagged, by why: ``{"collapsed": [...], "at chance": [...]}``."""
    kinds: dict[str, list[str]] = {}
    for seed in map(str, variant.collapsed or []):
        why = str((variant.flagged or {}).get(seed, COLLAPSED))
        kinds.setdefault(AT_CHANCE if why.startswith(AT_CHANCE) else COLLAPSED, []).append(seed)
    return kinds


def seeds_text(seeds: list[str]) -> str:
    """``seed 1`` or ``seeds 0, 2``."""
    return f"seed{'s' if len(seeds) > 1 else ''} {', '.join(seeds)}"


def seeds_cell(variant: VariantEntry) -> str:
    """The number of seeds with a finished run, ``+ k failed`` when some failed."""
    failed = len(variant.failed or {})
    return f"{len(variant.seeds)}" + (f" + {failed} failed" if failed else "")


def seed_status(variant: VariantEntry, seed: int | str) -> str:
    """One seed's status in the per-seed table: ``done``, ``diverged at step k (seed s)`` or why it is flagged."""
    key = str(seed)
    diverged = variant.diverged_at_step or {}
    if key in diverged:
        return diverged_text(key, diverged[key])
    status = (variant.run_status or {}).get(key, variant.status or "done")
    flag = (variant.flagged or {}).get(key)
    return f"{status}, {flag}" if flag else status


def norms_cell(variant: VariantEntry) -> str:
    """``attn: both, ffn: both+affine``, with ``, QK-norm`` when attention normalises queries and keys."""
    return ", ".join(
        f"{k}: {s.get('component')}{'+affine' if s.get('affine') and s.get('component') != 'none' else ''}"
        for k, s in variant.norms.items()
    ) + (", QK-norm" if variant.qk_norm else "")


def measured_anywhere(board: Board, metric: str) -> bool:
    """Whether any seed of any variant of ``board`` has a value of ``metric``."""
    return any(x is not None for v in board.variants if metric in v.metrics for x in v.metrics[metric].per_seed)


# -------------------------------------------------------------------------------------------- other views


def render_protocol(protocol: Mapping[str, Any] | None) -> Lines:
    """The sweep's settings beside the paper's, then the protocol's notes."""
    if not protocol or not (protocol.get("settings") or protocol.get("notes")):
        return []
    lines = ["## Protocol", ""]
    if protocol.get("settings"):
        lines += ["| setting | this sweep | paper |", "|---|---|---|"]
        for row in protocol["settings"]:
            paper = row["paper"] if row["paper"] is not None else "–"
            lines.append(f"| {cell(row['setting'])} | {cell(row['this_sweep'])} | {cell(paper)} |")
        lines.append("")
    lines += [f"- {note}" for note in protocol.get("notes") or []]
    return lines + [""]


def render_uncommitted(marked: Any) -> Lines:
    """A warning line when some runs were trained from code that no commit holds (published with ``--force``)."""
    if not marked:
        return []
    return [
        "**Trained from uncommitted code: some runs of this board name a commit whose tree had changes, so no "
        "commit retrains them exactly; their values are shown but not reproducible from the repository.**",
        "",
    ]


def render_incomplete(planned: int | None, finished: int | None) -> Lines:
    """A warning line when some planned runs of the sweep have no finished record."""
    if planned is None or finished is None or finished >= planned:
        return []
    return [
        f"**Incomplete sweep: {planned - finished} of its {planned} planned runs have no finished record yet. "
        f"Every value and verdict below is computed on the {finished} finished runs only; the same command "
        f"trains the rest.**",
        "",
    ]


def matrix_cell(c: Mapping[str, Any] | None, key: str) -> str:
    """One cell of a matrix panel: mean ± std over seeds, then every seed's value."""
    if c is None:
        return "–"
    m = c.get("metrics", {}).get(key) or {}
    if m.get("mean") is None:
        return c["status"] if c["status"] != "done" else "not measured"
    scale = 100 if key == UNSELECTABLE else 1
    fmt = (lambda v: "–" if v is None else f"{scale * v:.1f}") if scale != 1 else fmt_value
    seeds = ", ".join(fmt(v) for v in m.get("per_seed") or [])
    flag = " ⚑" if c.get("flagged") else ""
    n = sum(v is not None for v in m.get("per_seed") or [])
    spread = f" ± {fmt(m.get('std') or 0.0)}" if n > 1 else " (one seed)"
    digits = 1 if scale != 1 else 3
    return f"{fmt(m['mean'])}{spread}{flag}{chance_text(m.get('chance'), scale, digits)}<br>({seeds})"


def render_matrix(matrix: Mapping[str, Any] | None) -> Lines:
    """Markdown of a placement x component matrix (:mod:`normbench.render.matrix`): one table per
    panel, each cell mean ± std over seeds with every seed's value, then the cells' status."""
    if not matrix:
        return []
    lines = [
        "## Matrix: placement x component",
        "",
        "Rows: where the norms sit; columns: the component of the attention norm (the variant "
        "`<placement>/<component>`). Each cell: mean ± std over seeds, then every seed's value; "
        "– : no such variant in this sweep.",
        "",
    ]
    by_cell = {(c["placement"], c["component"]): c for c in matrix["cells"]}
    for key, title in panels(matrix):
        lines += [
            f"**{title}{' (%)' if key == UNSELECTABLE else ''}**",
            "",
            "| placement | " + " | ".join(f"`{c}`" for c in matrix["columns"]) + " |",
            "|---|" + "---|" * len(matrix["columns"]),
        ]
        for row in matrix["rows"]:
            cells = [matrix_cell(by_cell.get((row, col)), key) for col in matrix["columns"]]
            lines.append(f"| `{row}` | " + " | ".join(cells) + " |")
        lines.append("")
    unfinished = [c for c in matrix["cells"] if c["status"] not in ("done",)]
    if unfinished:
        lines += ["Cells not done (shown, never dropped):", ""]
        for c in unfinished:
            why = "; ".join(f"seed {s}: {w}" for s, w in (c.get("flagged") or {}).items())
            lines.append(f"- `{c['variant']}`: {c['status']}{f' ({why})' if why else ''}")
        lines.append("")
    return lines


def measured_cell(m: Mapping[str, Any]) -> str:
    """A table cell: ``mean ± std`` to one decimal, ``n/a`` when not measured."""
    return "n/a" if m["mean"] is None else f"{m['mean']:.1f} ± {m['std']:.1f}{chance_text(m.get('chance'), 1.0, 1)}"


def paper_cell(value: float | None) -> str:
    """A table cell of the paper's value, ``–`` where it reports none."""
    return "–" if value is None else f"{value:g}"


def render_table(table: Mapping[str, Any]) -> Lines:
    """Markdown of one paper table (:func:`normbench.boards.paper.build_tables`): measured mean ± std,
    then the paper's value."""
    lines = [f"### {table['title']}", ""]
    if table["note"]:
        lines += [table["note"], ""]
    if table.get("paper_column"):  # one paper value per row, measured apart from the columns
        lines.append("| model | " + " | ".join(table["columns"]) + f" | {table['paper_column']} |")
        lines.append("|---|" + "---|" * (len(table["columns"]) + 1))
        for row in table["rows"]:
            cells = [measured_cell(m) for m in row["measured"]]
            null = row.get("paper_null")
            at = (
                f" (chance {'–'.join(f'{m:.1f}' for m in null['mean'])} at {'–'.join(map(str, null['n']))} keys)"
                if null
                else ""
            )
            cells.append(paper_cell(row["paper"]) + at)
            lines.append(f"| {cell(row['label'])} (`{row['variant']}`) | " + " | ".join(cells) + " |")
        return lines + [""]
    lines.append("| model | " + " | ".join(f"{c} measured | {c} paper" for c in table["columns"]) + " |")
    lines.append("|---|" + "---|---|" * len(table["columns"]))
    for row in table["rows"]:
        paper = row["paper"] or [None] * len(table["columns"])
        cells = []
        for m, p in zip(row["measured"], paper, strict=False):
            cells.append(measured_cell(m))
            cells.append(paper_cell(p))
        lines.append(f"| {cell(row['label'])} (`{row['variant']}`) | " + " | ".join(cells) + " |")
    return lines + [""]


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


def gap_text(g: Mapping[str, Any] | None) -> str:
    if not g:
        return "–"
    mean = g["paper"] + g["estimate"]
    interval = "" if g.get("low") is None else f" [{g['low']:+.3f}, {g['high']:+.3f}]"
    return f"{mean:.3f} ({g['estimate']:+.3f}{interval})"


def closed_text(then: Mapping[str, Any] | None, now: Mapping[str, Any] | None) -> str:
    """``yes`` when today's interval of the gap contains 0 and the earlier one did not; else how it moved."""
    if not then or not now or now.get("low") is None:
        return "–"
    if now["low"] <= 0 <= now["high"]:
        if then.get("low") is not None and then["low"] <= 0 <= then["high"]:
            return "no gap then or now: both intervals contain 0"
        return "yes: the interval now contains 0"
    smaller = abs(now["estimate"]) < abs(then["estimate"])
    return (
        f"no: {'smaller' if smaller else 'larger'} by {abs(abs(then['estimate']) - abs(now['estimate'])):.3f}, "
        f"interval excludes 0"
    )


def render_superseded(
    old: Mapping[str, Any] | None, claims: tuple[JudgedClaim, ...], variants: tuple[VariantEntry, ...] = ()
) -> Lines:
    """The build this board replaced (``supersedes``): each claim's gap to the paper then and now, or, where it
    judged no claim against a paper value, the configs it showed and those that replace them."""
    if not old:
        return []
    now = {c.id: c for c in claims}
    rows = []
    for then in old.get("claims") or []:
        for role, g in (then.get("gap_to_paper") or {}).items():
            current = now.get(then["id"])
            g_now = ((current.gap_to_paper if current else None) or {}).get(role)
            if g_now is None and current is not None and g is not None:  # a rule that records no gap of its own
                g_now = gap(values_of((current.per_seed or {}).get(role)), float(g["paper"]))
            rows.append(f"| `{then['id']}` | {role} | {gap_text(g)} | {gap_text(g_now)} | {closed_text(g, g_now)} |")
    built = f"Built {old.get('generated_at')} at commit `{(old.get('git_commit') or 'unknown')[:12]}`, {old['why']}."
    lines = ["", "## The build this one replaces", ""]
    if rows:
        return lines + [
            f"{built} Gap to the paper = mean − paper value, 95% interval over seeds.",
            "",
            "| claim | role | then: mean (gap [95% CI]) | now: mean (gap [95% CI]) | gap closed |",
            "|---|---|---|---|---|",
            *rows,
        ]
    hashes_now = {v.name: v.config_hash for v in variants}
    then = old.get("config_hashes") or {}
    lines += [f"{built} It judged no claim against a paper value, so there is no gap to compare; its configs:", ""]
    lines += ["| variant | config then | config now |", "|---|---|---|"]
    for name in sorted(set(then) | set(hashes_now)):
        lines.append(f"| `{name}` | {code_or_dash(then.get(name))} | {code_or_dash(hashes_now.get(name))} |")
    return lines


def code_or_dash(text: str | None) -> str:
    """``text`` as inline code, or "–" when there is none."""
    return f"`{text}`" if text else "–"


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
    if rep.get("chaotic"):
        lines.append(
            f"- **Chaotic task**: {rep['chaotic']}. Per-seed values do not travel between platforms; "
            f"compare a re-run by its distribution over seeds (the verdicts below rest on the seeds' "
            f"spread), not digit by digit."
        )
    return lines


# ------------------------------------------------------------------------------------------------ sections


def header(board: Board) -> Lines:
    p = board.provenance
    return [
        f"# normbench leaderboard: `{board.task}` (preset `{board.preset}`)",
        "",
        "Generated from the run records by `normbench leaderboard`; do not edit by hand.",
        f"Values are mean ± sample std over seeds. Built {board.generated_at} at commit "
        f"`{(p.get('git_commit') or 'unknown')[:12]}`{' (dirty)' if p.get('dirty') else ''}, "
        f"torch {p['torch']}, lightning {p['lightning']}, {p['device']}, {p['threads']} threads; "
        f"training wall time summed over runs {p['wall_time_s']:.0f} s.",
        "",
    ]


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


def paper_tables(board: Board) -> Lines:
    if not board.tables:
        return []
    lines = ["", "## Paper tables", ""]
    for table in board.tables:
        lines += render_table(table)
    return lines


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


def figures(board: Board) -> Lines:
    if not board.figures:
        return []
    return ["", "## Figures", ""] + [f"![{Path(p).stem}]({Path(p).name})" for p in board.figures]


def citation(board: Board) -> Lines:
    if not board.citation:
        return []
    return ["", "## How to cite", "", "```bibtex", board.citation["bibtex"], "```"]


def render(board: Board) -> str:
    """``leaderboard.md`` of ``board``: every section in order, each from the board alone."""
    lines = [
        *header(board),
        *render_uncommitted(board.uncommitted_code),
        *render_incomplete(board.planned_runs, board.finished_runs),
        *render_progress(board.in_progress),
        *render_protocol(board.protocol),
        *render_matrix(board.matrix),
        *render_width(board.width),
        *render_choice(
            board.choice, complete=not board.planned_runs or (board.finished_runs or 0) >= board.planned_runs
        ),
        *rates_table(board),
        *variants_table(board),
        *chance_note(board),
        *flagged_seeds(board),
        *render_collapse(board.collapse, board.variants),
        *failed_runs(board),
        *without_flagged_table(board),
        *per_seed_table(board),
        *metric_definitions(board),
        *paper_tables(board),
        *render_reference(board.reference_runs),
        *claims_table(board),
        *side_by_side(board),
        *against_chance_table(board),
        *render_superseded(board.supersedes, board.claims, board.variants),
        *provenance_table(board),
        *render_reproducibility(board.reproducibility),
        *figures(board),
        *findings(board),
        *citation(board),
    ]
    return "\n".join(lines) + "\n"
