"""Leaderboards: aggregate run records over seeds, judge the claims, write JSON + Markdown.

``results/<task>/leaderboard.json`` follows the contract in the design notes;
``leaderboard.md`` is rendered from it and never edited by hand. Metric columns are declared in
the task YAML (``bench.metrics``), each read from one logged series of every run:

* ``at_step: N`` - the last logged value at a step <= N (missing if the run ended before N);
  ``at_step: last`` - the final value.
* ``first_below: x`` - the first step at which the series is <= x ("not reached" otherwise).
* ``smooth: w`` (optional) - read the trailing moving average over ``w`` logged points.

A metric named with ``{layer}`` (e.g. ``unselectable_after_L{layer}``) stands for one metric per
layer of the network, its series expanded the same way (:mod:`normbench.tasks.series`).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from normbench import __version__
from normbench.io import atomic_write_json, atomic_write_text
from normbench.reporting.chance import chance_text, with_chance
from normbench.reporting.choice import build_choice, render_choice
from normbench.reporting.claims import describe, describe_difference, describe_seeds, judge, load_claims, source_text
from normbench.reporting.collapse import check_spec as check_collapse
from normbench.reporting.collapse import collapse_text, is_collapsed, with_baselines
from normbench.reporting.matrix import UNSELECTABLE, panels
from normbench.reporting.progress import render_progress
from normbench.reporting.run_cache import no_checkpoint_note
from normbench.reporting.stats import aggregate
from normbench.reporting.width import render_width
from normbench.tasks import norm_roles
from normbench.tasks.series import expand_metric_layers, series_value
from normbench.training.config import config_value
from normbench.training.records import FINISHED, provenance, read_record, utc_now
from normbench.training.reproducibility import chaotic, tolerance, tolerance_table
from normbench.training.verify import check_record


def diverged_text(seed: str | int, step: int | None) -> str:
    """``diverged at step k (seed s)``: k is the record's ``diverged_at_step``."""
    return f"diverged at step {step} (seed {seed})" if step is not None else f"diverged (seed {seed})"


def flag_seeds(
    entry: dict[str, Any],
    records: list[dict[str, Any]],
    chance: dict[str, Any] | None,
    collapse: dict[str, Any] | None = None,
) -> None:
    """Mark seeds that failed to train: diverged (in no mean or verdict: their values are not
    finite), at chance (``bench.chance``: a leaderboard ``metric`` whose final value is ``at_most`` a
    level, e.g. dev accuracy <= 0.55 on balanced binary labels) or collapsed (``bench.collapse``: a loss
    >= its baseline - ``within``, e.g. validation loss at the unigram entropy of the training stream,
    :mod:`normbench.reporting.collapse`; each record carries its ``collapse_baseline``). Seeds at chance or
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
            if seed not in flags and is_collapsed(value, base, collapse["within"]):
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
    records: list[dict[str, Any]],
    metrics: dict[str, dict[str, Any]],
    chance: dict[str, Any] | None = None,
    failed: list[dict[str, Any]] | None = None,
    collapse: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One variant's row: its finished ``records`` (``done`` or ``diverged``) aggregated over seeds.

    Only ``done`` seeds enter the statistics (mean, std, intervals, verdicts): a diverged seed has
    no finite value to give (``per_seed`` holds ``None`` for it) and is named with its step in
    ``diverged_at_step``; the seeds of ``failed`` records are named in ``failed`` (seed -> error).
    """
    records = sorted(records, key=lambda r: r["seed"])
    statuses = {r["status"] for r in records}
    entry: dict[str, Any] = {
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
        pairs = [series_value(r["series"].get(spec["series"], []), spec) for r in records]
        agg = aggregate([p[0] for p in pairs], [p[1] for p in pairs], counted)
        if agg["mean"] is None:
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
        "wall_time_s": round(sum(r.get("wall_time_s", 0.0) for r in records), 1),
        "log_dirs": [r.get("log_dir") for r in records],
        "platforms": unique_platforms(prov),
    }
    return entry


def distinct(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``blocks`` without repeats, in first-seen order."""
    return list({json.dumps(b, sort_keys=True): b for b in blocks}.values())  # equal blocks: one key, first place


def unique_platforms(provenances: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The distinct ``platform`` blocks of run provenances, with their torch version (runs recorded before
    provenance named the platform contribute none)."""
    return distinct(
        [{"torch": p.get("torch"), **p["platform"]} for p in provenances if isinstance(p.get("platform"), dict)]
    )


def reproducibility(variants: list[dict[str, Any]], bench: dict[str, Any]) -> dict[str, Any]:
    """What a re-run of this board's runs can be expected to give (see :mod:`normbench.training.reproducibility`)."""
    platforms = distinct([b for v in variants for b in v["provenance"].get("platforms", [])])
    unnamed = sum(len(v["seeds"]) for v in variants if not v["provenance"].get("platforms"))
    return {
        "platforms": platforms,
        "runs_without_platform": unnamed,
        "chaotic": chaotic(bench),
        "tolerances": tolerance_table(),
    }


def render_reproducibility(rep: dict[str, Any] | None) -> list[str]:
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
            f"- {rep['runs_without_platform']} runs were recorded before provenance named the platform "
            f"(their torch and device are in the provenance table)."
        )
    lines.append(
        "- The same platform and torch retrain every run bit for bit; any other platform gives every "
        f"metric within its declared tolerance (accuracies {tolerance('acc').abs:g}, losses "
        f"{tolerance('loss').rel:g} relative, angles {tolerance('angle').abs:g}°; "
        "`normbench.training.reproducibility.TOLERANCES`)."
    )
    if rep.get("chaotic"):
        lines.append(
            f"- **Chaotic task**: {rep['chaotic']}. Per-seed values do not travel between platforms; "
            f"compare a re-run by its distribution over seeds (the verdicts below rest on the seeds' "
            f"spread), not digit by digit."
        )
    return lines


def group_by_variant(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Run records by their ``variant`` name, in first-seen order."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        groups[record["variant"]].append(record)
    return dict(groups)


def build(
    task: str,
    preset: str | None,
    records: list[dict[str, Any]],
    bench: dict[str, Any],
    variant_order: list[str] | None = None,
    failed: list[dict[str, Any]] | None = None,
    config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The leaderboard document for the finished ``records`` (one per variant and seed); the
    ``failed`` records are named (``failed_runs``, and in their variant's status), never averaged.
    ``config``: the sweep's resolved config, for a board with no finished record yet (its runs in progress)."""
    by_variant = group_by_variant(records)
    for name, group in by_variant.items():
        hashes = {r["config_hash"] for r in group}
        if len(hashes) > 1:
            raise ValueError(
                f"variant {name!r}: records with different configs ({', '.join(sorted(hashes))}); "
                "remove stale runs or use a new runs_dir"
            )
        seeds = [r["seed"] for r in group]
        if len(seeds) != len(set(seeds)):
            raise ValueError(f"variant {name!r}: more than one record for a seed")
    order = [v for v in (variant_order or []) if v in by_variant] + sorted(set(by_variant) - set(variant_order or []))
    config = records[0]["config"] if records else (config or {})
    n_layers = n_layers_of(config)
    metrics = expand_metric_layers(bench.get("metrics") or {}, n_layers)
    chance = bench.get("chance")
    if chance and chance.get("metric") not in metrics:
        raise ValueError(
            f"bench.chance.metric: {chance.get('metric')!r} is not a leaderboard metric; "
            f"choose one of {', '.join(metrics)}"
        )
    collapse = check_collapse(bench.get("collapse"), metrics)
    unavailable: list[str] = []
    if collapse:
        with_base, unavailable = with_baselines([r for name in order for r in by_variant[name]], collapse)
        by_variant = group_by_variant(with_base)
    failed_by_variant = group_by_variant(failed or [])
    variants = [
        variant_entry(name, by_variant[name], metrics, chance, failed_by_variant.get(name), collapse) for name in order
    ]
    if bench.get("unselectable_chance"):  # the random-key value beside every unselectable fraction
        with_chance(variants, {name: group[0]["config"] for name, group in by_variant.items()})
    by_name = {v["name"]: v for v in variants}
    claims = [judge(c, by_name, config) for c in load_claims(bench["claims"])] if bench.get("claims") else []
    tables = build_tables(bench.get("tables") or {}, by_name, config)
    prov = provenance()
    prov["normbench"] = __version__
    prov["wall_time_s"] = round(sum(v["provenance"]["wall_time_s"] for v in variants), 1)
    return {
        "task": task,
        "preset": preset,
        "generated_at": utc_now(),
        "provenance": prov,
        "protocol": build_protocol(bench.get("protocol") or {}, config, variants),
        "metrics": metrics,
        "columns": list(bench.get("columns") or metrics),
        "variants": variants,
        "tables": tables,
        "claims": claims,
        "reproducibility": reproducibility(variants, bench),
        **({"collapse": {**collapse, "unavailable": unavailable}} if collapse else {}),
        **({"choice": build_choice(bench["choice"], variants, metrics)} if bench.get("choice") else {}),
        **(
            {
                "failed_runs": [
                    {"variant": r["variant"], "seed": r["seed"], "error": r.get("error")}
                    for r in sorted(failed, key=lambda r: (r["variant"], r["seed"]))
                ]
            }
            if failed
            else {}
        ),
    }


def n_layers_of(config: dict[str, Any]) -> int:
    """The network's number of layers in a run's resolved config (1 when it names none)."""
    return int(config_value(config, "model.init_args.arch.n_layers") or 1)


def build_protocol(spec: dict[str, Any], config: dict[str, Any], variants: list[dict[str, Any]]) -> dict[str, Any]:
    """The sweep's protocol beside the paper's (``bench.protocol``), read from the runs' config.

    ``settings``: rows ``{setting, config: <dotted key> | value: <text>, paper: <text>}``; the
    number of seeds is read from the variants. ``notes``: sentences printed under the table.
    """
    rows = []
    for row in spec.get("settings") or []:
        ours = config_value(config, row["config"]) if "config" in row else row.get("value")
        rows.append({"setting": row["setting"], "this_sweep": ours, "paper": row.get("paper")})
    if spec.get("paper_seeds") is not None:
        seeds = sorted({len(v["seeds"]) for v in variants})
        rows.append(
            {"setting": "seeds per variant", "this_sweep": "/".join(map(str, seeds)), "paper": spec["paper_seeds"]}
        )
    return {"settings": rows, "notes": list(spec.get("notes") or [])}


def render_protocol(protocol: dict[str, Any]) -> list[str]:
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


def fill_note(note: str, config: dict[str, Any], variants: dict[str, dict[str, Any]]) -> str:
    """Replace ``{config:a.b.c}`` by that config value and ``{metric:VARIANT:NAME}`` by its mean."""

    def value(match: re.Match) -> str:
        kind, _, ref = match[1].partition(":")
        if kind == "config":
            node = config_value(config, ref)
            return "?" if node is None else str(node)
        variant, _, metric = ref.rpartition(":")
        mean = (variants.get(variant) or {}).get("metrics", {}).get(metric, {}).get("mean")
        return "?" if mean is None else f"{mean:g}"

    return re.sub(r"\{((?:config|metric):[^{}]+)\}", value, note)


def build_tables(
    tables: dict[str, dict[str, Any]], variants: dict[str, dict[str, Any]], config: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Paper-style tables (``bench.tables``): rows of variants x columns of metrics, next to the paper's.

    A row names a variant and a metric template with ``{column}``; ``paper`` lists the
    paper's row values in the same order (``null`` where it reports none), or one value when the
    table has a ``paper_column`` (a paper number measured apart from the columns); ``scale`` multiplies
    measured means and stds (100 for percentages); ``note`` may cite values (:func:`fill_note`).
    """
    out = []
    for name, spec in tables.items():
        scale = float(spec.get("scale", 1.0))
        rows = []
        for row in spec["rows"]:
            cells = []
            for column in spec["columns"]:
                m = (variants.get(row["variant"]) or {}).get("metrics", {}).get(
                    row["metric"].format(column=column)
                ) or {}
                mean, std = m.get("mean"), m.get("std")
                chance = {"chance": {**m["chance"], "mean": m["chance"]["mean"] * scale}} if m.get("chance") else {}
                cells.append(
                    {
                        "mean": None if mean is None else mean * scale,
                        "std": None if std is None else std * scale,
                        **chance,
                    }
                )
            rows.append(
                {
                    "label": row["label"],
                    "variant": row["variant"],
                    "metric": row["metric"],
                    "measured": cells,
                    "paper": row.get("paper"),
                }
            )
        out.append(
            {
                "name": name,
                "title": spec.get("title", name),
                "columns": list(spec["columns"]),
                "paper_column": spec.get("paper_column"),
                "scale": scale,
                "note": fill_note(spec.get("note", ""), config or {}, variants),
                "rows": rows,
            }
        )
    return out


def measured_cell(m: dict[str, Any]) -> str:
    """A table cell: ``mean ± std`` to one decimal, ``n/a`` when not measured."""
    return "n/a" if m["mean"] is None else f"{m['mean']:.1f} ± {m['std']:.1f}{chance_text(m.get('chance'), 1.0, 1)}"


def paper_cell(value: float | None) -> str:
    """A table cell of the paper's value, ``–`` where it reports none."""
    return "–" if value is None else f"{value:g}"


def render_table(table: dict[str, Any]) -> list[str]:
    """Markdown of one :func:`build_tables` table: measured mean ± std, then the paper's value."""
    lines = [f"### {table['title']}", ""]
    if table["note"]:
        lines += [table["note"], ""]
    if table.get("paper_column"):  # one paper value per row, measured apart from the columns
        lines.append("| model | " + " | ".join(table["columns"]) + f" | {table['paper_column']} |")
        lines.append("|---|" + "---|" * (len(table["columns"]) + 1))
        for row in table["rows"]:
            cells = [measured_cell(m) for m in row["measured"]]
            cells.append(paper_cell(row["paper"]))
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


def render_uncommitted(board: dict[str, Any]) -> list[str]:
    """A warning line when some runs were trained from code that no commit holds (published with ``--force``)."""
    if not board.get("uncommitted_code"):
        return []
    return [
        "**Trained from uncommitted code: some runs of this board name a commit whose tree had changes, so no "
        "commit retrains them exactly; their values are shown but not reproducible from the repository.**",
        "",
    ]


def render_incomplete(board: dict[str, Any]) -> list[str]:
    """A warning line when some planned runs of the sweep have no finished record."""
    planned, finished = board.get("planned_runs"), board.get("finished_runs")
    if planned is None or finished is None or finished >= planned:
        return []
    return [
        f"**Incomplete sweep: {planned - finished} of its {planned} planned runs have no finished record yet. "
        f"Every value and verdict below is computed on the {finished} finished runs only; the same command "
        f"trains the rest.**",
        "",
    ]


def render_matrix(matrix: dict[str, Any] | None) -> list[str]:
    """Markdown of a placement x component matrix (:mod:`normbench.reporting.matrix`): one table per
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
        scale = 100 if key == UNSELECTABLE else 1
        lines += [
            f"**{title}{' (%)' if key == UNSELECTABLE else ''}**",
            "",
            "| placement | " + " | ".join(f"`{c}`" for c in matrix["columns"]) + " |",
            "|---|" + "---|" * len(matrix["columns"]),
        ]
        for row in matrix["rows"]:
            cells = []
            for col in matrix["columns"]:
                c = by_cell.get((row, col))
                m = (c or {}).get("metrics", {}).get(key) or {}
                if c is None:
                    cells.append("–")
                elif m.get("mean") is None:
                    cells.append(c["status"] if c["status"] != "done" else "not measured")
                else:
                    fmt = (lambda v, scale=scale: "–" if v is None else f"{scale * v:.1f}") if scale != 1 else fmt_value
                    seeds = ", ".join(fmt(v) for v in m.get("per_seed") or [])
                    flag = " ⚑" if c.get("flagged") else ""
                    n = sum(v is not None for v in m.get("per_seed") or [])
                    spread = f" ± {fmt(m.get('std') or 0.0)}" if n > 1 else " (one seed)"
                    digits = 1 if scale != 1 else 3
                    cells.append(
                        f"{fmt(m['mean'])}{spread}{flag}{chance_text(m.get('chance'), scale, digits)}<br>({seeds})"
                    )
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


def metric_names_of(claim: dict[str, Any]) -> str:
    """The metric a claim reads, or each role's when they differ."""
    per_role = claim.get("metrics") or {}
    if len(set(per_role.values())) > 1:
        return ", ".join(f"{role}: `{m}`" for role, m in per_role.items())
    return f"`{claim['metric']}`"


def fmt_metric(m: dict[str, Any]) -> str:
    """``mean ± std``, with ``(n = k of s seeds)`` when some seeds (diverged) are not in the mean."""
    n_seeds = len(m.get("per_seed") or [])
    if m.get("mean") is not None:
        mean, std = m["mean"], m["std"]
        digits = 0 if abs(mean) >= 100 else 3
        of = f" (n = {m['n']} of {n_seeds} seeds)" if m.get("n") is not None and m["n"] < n_seeds else ""
        return f"{mean:.{digits}f} ± {std:.{digits}f}{of}{chance_text(m.get('chance'))}"
    if m.get("n"):
        return f"{m['n']}/{n_seeds} seeds only; others {m.get('note', 'missing')}"
    return m.get("note", "missing")


VERDICT_WORDS = {
    "reproduced": "holds here",
    "direction only": "holds in direction only: the ordering is significant over seeds, the paper's values or its "
    "protocol are not met",
    "inconclusive": "cannot be decided here: the interval over seeds leaves it open",
    "not reproduced": "does not hold here: the seeds show the opposite significantly",
    "not run": "was not measured by this sweep",
}


def verdict_cell(claim: dict[str, Any]) -> str:
    """``**verdict**``, with the equivalence margin, a protocol not met, or the sanity-check label beside it."""
    text = f"**{claim['verdict']}**"
    if claim.get("margin") is not None:
        text += f" (margin {claim['margin']:g})"
    if claim.get("protocol") and not claim["protocol"]["met"]:
        text += f"; not the claim's protocol ({claim['protocol']['name']})"
    if claim.get("evidence"):
        text += f"; {claim['evidence']}: an identity, not evidence"
    return text


def describe_gaps(claim: dict[str, Any]) -> str:
    """``; gap to paper: role +0.052 [0.04, 0.064]`` (mean − paper, 95% interval) for a ``values`` claim."""
    gaps = claim.get("gap_to_paper") or {}
    parts = []
    for role, g in gaps.items():
        if not g:
            continue
        interval = "" if g["low"] is None else f" [{g['low']:+.3g}, {g['high']:+.3g}]"
        parts.append(f"{role} {g['estimate']:+.3g}{interval}")
    return f"; gap to paper (mean − paper, 95% CI): {', '.join(parts)}" if parts else ""


def render_superseded(old: dict[str, Any] | None, claims: list[dict[str, Any]]) -> list[str]:
    """The build this board replaced (``supersedes``): each claim's gap to the paper then and now."""
    if not old:
        return []
    now = {c["id"]: c for c in claims}
    lines = [
        "",
        "## The build this one replaces",
        "",
        f"Built {old.get('generated_at')} at commit `{(old.get('git_commit') or 'unknown')[:12]}`, "
        f"{old['why']}. Gap to the paper = mean − paper value, 95% interval over seeds.",
        "",
        "| claim | role | then: mean (gap [95% CI]) | now: mean (gap [95% CI]) | gap closed |",
        "|---|---|---|---|---|",
    ]
    for then in old.get("claims") or []:
        for role, g in (then.get("gap_to_paper") or {}).items():
            g_now = ((now.get(then["id"]) or {}).get("gap_to_paper") or {}).get(role)
            lines.append(f"| `{then['id']}` | {role} | {gap_text(g)} | {gap_text(g_now)} | {closed_text(g, g_now)} |")
    return lines


def gap_text(g: dict[str, Any] | None) -> str:
    if not g:
        return "–"
    mean = g["paper"] + g["estimate"]
    interval = "" if g.get("low") is None else f" [{g['low']:+.3f}, {g['high']:+.3f}]"
    return f"{mean:.3f} ({g['estimate']:+.3f}{interval})"


def closed_text(then: dict[str, Any] | None, now: dict[str, Any] | None) -> str:
    """``yes`` when today's interval of the gap contains 0 and the earlier one did not; else how it moved."""
    if not then or not now or now.get("low") is None:
        return "–"
    covers = now["low"] <= 0 <= now["high"]
    if covers:
        return "yes: the interval now contains 0" + (
            "" if then.get("low") is None or not then["low"] <= 0 <= then["high"] else " (it did before)"
        )
    smaller = abs(now["estimate"]) < abs(then["estimate"])
    return (
        f"no: {'smaller' if smaller else 'larger'} by {abs(abs(then['estimate']) - abs(now['estimate'])):.3f}, "
        f"interval excludes 0"
    )


def whose(claim: dict[str, Any]) -> str:
    """``The paper's claim`` or ``Our claim``, by the claim's owner."""
    return "The paper's claim" if claim.get("owner", "paper") == "paper" else "Our claim"


def finding(claim: dict[str, Any]) -> str:
    """One sentence per claim, generated from its verdict: whose claim, what was found, the interval."""
    if claim.get("explanation"):  # a claim over many cells says what it found itself
        return f"{whose(claim)} “{claim['statement'].rstrip('.')}”: **{claim['verdict']}**; {claim['explanation']}."
    text = f"{whose(claim)} “{claim['statement'].rstrip('.')}” {VERDICT_WORDS.get(claim['verdict'], claim['verdict'])}"
    if claim.get("difference"):
        text += f" ({describe_difference(claim)}{describe_gaps(claim)})"
    if claim.get("margin") is not None:
        text += f", equivalence margin {claim['margin']:g}"
    if claim.get("protocol") and not claim["protocol"]["met"]:
        text += f"; judged on another protocol than the claim's ({', '.join(claim['protocol']['differences'])})"
    if claim.get("evidence"):
        text += f" ({claim['evidence']}: an identity the code guarantees, not evidence)"
    return text + "."


def fmt_value(value: float | None) -> str:
    """One seed's value: 3 decimals, whole numbers from 100 up, ``–`` when missing."""
    if value is None:
        return "–"
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3f}"


def cell(text: str) -> str:
    """Escape a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(board: dict[str, Any], plots: list[str]) -> str:
    """Human-readable view of a leaderboard document."""
    p = board["provenance"]
    lines = [
        f"# normbench leaderboard: `{board['task']}` (preset `{board['preset']}`)",
        "",
        "Generated from the run records by `normbench leaderboard`; do not edit by hand.",
        f"Values are mean ± sample std over seeds. Built {board['generated_at']} at commit "
        f"`{(p.get('git_commit') or 'unknown')[:12]}`{' (dirty)' if p.get('dirty') else ''}, "
        f"torch {p['torch']}, lightning {p['lightning']}, {p['device']}, {p['threads']} threads; "
        f"training wall time summed over runs {p['wall_time_s']:.0f} s.",
        "",
        *render_uncommitted(board),
        *render_incomplete(board),
        *render_progress(board.get("in_progress")),
        *render_protocol(board.get("protocol") or {}),
        *render_matrix(board.get("matrix")),
        *render_width(board.get("width")),
        *render_choice(board.get("choice")),
        "## Variants",
        "",
    ]
    metric_names = board.get("columns") or list(board["metrics"])
    lines.append("| variant | norms | seeds | status | " + " | ".join(metric_names) + " |")
    lines.append("|---|---|---|---|" + "---|" * len(metric_names))
    for v in board["variants"]:
        norms = ", ".join(
            f"{k}: {s.get('component')}{'+affine' if s.get('affine') and s.get('component') != 'none' else ''}"
            for k, s in v["norms"].items()
        ) + (", QK-norm" if v.get("qk_norm") else "")
        cells = [fmt_metric(v["metrics"][m]) for m in metric_names]
        lines.append(f"| `{v['name']}` | {norms} | {seeds_cell(v)} | {status_cell(v)} | " + " | ".join(cells) + " |")
    if any("chance" in m for v in board["variants"] for m in v["metrics"].values()):
        lines += [
            "",
            "Unselectable fractions: (chance x) is the same statistic for Gaussian random keys N(0, I_d) with the "
            "same width d and number of keys per set (`normbench.reporting.chance`); (0 by construction) marks keys a "
            "scaling norm puts on a sphere, where every key is selectable: a sanity check of the geometry, "
            "not evidence.",
        ]
    flagged = [(v["name"], seed, why) for v in board["variants"] for seed, why in (v.get("flagged") or {}).items()]
    without = [
        v for v in board["variants"] if v.get("flagged") and any("without_flagged" in m for m in v["metrics"].values())
    ]
    if flagged:
        lead = (
            "Flagged seeds (a seed at chance or collapsed is kept in every mean and verdict above, the means "
            "without the flagged seeds follow; a diverged seed is in no mean or verdict):"
            if without
            else "Flagged seeds (a diverged seed is in no mean or verdict):"
        )
        lines += ["", lead, ""]
        for name, seed, why in flagged:
            lines.append(f"- `{name}` seed {seed}: {why}")
    lines += render_collapse(board.get("collapse"), board["variants"])
    failed = [(v["name"], seed, why) for v in board["variants"] for seed, why in (v.get("failed") or {}).items()]
    failed += [
        (r["variant"], str(r["seed"]), r.get("error") or "failed")
        for r in board.get("failed_runs") or []
        if not any(v["name"] == r["variant"] for v in board["variants"])
    ]
    if failed:
        lines += ["", "Failed runs (in no mean or verdict; the same command retries them):", ""]
        lines += [f"- `{name}` seed {seed}: failed ({cell(why)})" for name, seed, why in failed]
    if without:
        lines += [
            "",
            "| variant | " + " | ".join(f"{m} without flagged" for m in metric_names) + " |",
            "|---|" + "---|" * len(metric_names),
        ]
        for v in without:
            cells = [
                fmt_metric(v["metrics"][m].get("without_flagged") or {"note": "no seed left"}) for m in metric_names
            ]
            lines.append(f"| `{v['name']}` | " + " | ".join(cells) + " |")
    lines += [
        "",
        "### Per seed",
        "",
        "| variant | seed | status | " + " | ".join(metric_names) + " |",
        "|---|---|---|" + "---|" * len(metric_names),
    ]
    for v in board["variants"]:
        for i, seed in enumerate(v["seeds"]):
            mark = " (flagged)" if str(seed) in (v.get("flagged") or {}) else ""
            cells = [fmt_value((v["metrics"][m]["per_seed"] or [None] * (i + 1))[i]) for m in metric_names]
            lines.append(f"| `{v['name']}` | {seed}{mark} | {cell(seed_status(v, seed))} | " + " | ".join(cells) + " |")
        for seed in v.get("failed") or {}:
            lines.append(
                f"| `{v['name']}` | {seed} | failed (seed {seed}) | " + " | ".join("–" for _ in metric_names) + " |"
            )
    others = [m for m in board["metrics"] if m not in metric_names]
    hidden = [m for m in others if measured_anywhere(board, m)]
    if hidden:
        lines += [
            "",
            f"Also measured (in `leaderboard.json` and the tables below): {', '.join(f'`{m}`' for m in hidden)}.",
        ]
    if unmeasured := [m for m in others if m not in hidden]:
        lines += ["", f"Not measured by this sweep (no run has a value): {', '.join(f'`{m}`' for m in unmeasured)}."]
    lines += ["", "Metric definitions (series of every run, then aggregated over seeds):", ""]
    for name, spec in board["metrics"].items():
        how = (
            f"first step with `{spec['series']}` ≤ {spec['first_below']}"
            if "first_below" in spec
            else f"`{spec['series']}` at step {spec.get('at_step', 'last')}"
        )
        lines.append(f"- `{name}`: {how}")
    if board.get("tables"):
        lines += ["", "## Paper tables", ""]
        for table in board["tables"]:
            lines += render_table(table)
    if board["claims"]:
        lines += [
            "",
            "## Claims",
            "",
            "Whose: `paper` claims carry the paper's numbers; `normbench` claims are our own targets (why in the "
            "statement's source). Measured: mean, then every seed; difference: 95% Welch interval over seeds.",
            "",
            "| claim | whose | source | compares | paper | measured (per seed) "
            "| difference [95% CI] | verdict | rule |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for c in board["claims"]:
            roles = " vs ".join(f"{r} = `{v}`" for r, v in c["variants"].items())
            source = source_text(c)
            lines.append(
                "| "
                + " | ".join(
                    cell(x)
                    for x in (
                        f"`{c['id']}`: {c['statement']}",
                        c.get("owner", "paper"),
                        source,
                        roles,
                        describe(c["paper"]) or "–",
                        f"{describe(c['measured'])} "
                        f"({'; '.join(filter(None, (metric_names_of(c), describe_seeds(c.get('per_seed') or {}))))})",
                        describe_difference(c) + describe_gaps(c),
                        verdict_cell(c),
                        c["rule"],
                    )
                )
                + " |"
            )
    lines += render_superseded(board.get("supersedes"), board["claims"])
    lines += [
        "",
        "## Provenance per variant",
        "",
        "| variant | config hash | seeds | commits | dates | wall time (s) |",
        "|---|---|---|---|---|---|",
    ]
    for v in board["variants"]:
        pv = v["provenance"]
        commits = ", ".join(c[:12] for c in pv["git_commits"]) + (" (dirty)" if pv["dirty"] else "")
        lines.append(
            f"| `{v['name']}` | `{v['config_hash']}` | {', '.join(map(str, v['seeds']))} | {commits} | "
            f"{pv['dates'][0]} – {pv['dates'][1]} | {pv['wall_time_s']:.0f} |"
        )
    lines += render_reproducibility(board.get("reproducibility"))
    if plots:
        lines += ["", "## Figures", ""] + [f"![{Path(p).stem}]({Path(p).name})" for p in plots]
    if board["claims"]:
        lines += ["", "## Findings", ""] + [f"- {finding(c)}" for c in board["claims"]]
    if board.get("citation"):
        lines += ["", "## How to cite", "", "```bibtex", board["citation"]["bibtex"], "```"]
    return "\n".join(lines) + "\n"


def measured_anywhere(board: dict[str, Any], metric: str) -> bool:
    """Whether any seed of any variant of ``board`` has a value of ``metric``."""
    return any(
        x is not None for v in board["variants"] for x in ((v["metrics"].get(metric) or {}).get("per_seed") or [])
    )


def board_version(board: dict[str, Any]) -> str:
    """The normbench version that built a leaderboard (older boards: read from their citation), else this one's."""
    if version := (board.get("provenance") or {}).get("normbench"):
        return str(version)
    found = re.search(r"normbench (\S+) leaderboard", (board.get("citation") or {}).get("bibtex", ""))
    return found[1] if found else __version__


def bibtex(board: dict[str, Any], path: str, contained_in: str | None = None) -> str:
    """A BibTeX entry for the leaderboard at ``path`` (``results/<task>/[<name>/]leaderboard.json``): what it is,
    the commit its runs were built at and, once known, ``contained_in``, the commit that contains the file."""
    short = path.removeprefix("results/").removesuffix("/leaderboard.json")
    key = re.sub(r"[^A-Za-z0-9]+", "_", f"normbench_{short}") + (f"_{contained_in[:7]}" if contained_in else "")
    built = board["provenance"].get("git_commit") or "unknown"
    note = (
        f"{path} at commit {contained_in} (runs built at commit {built})"
        if contained_in
        else f"{path}, built at commit {built}; `normbench cite {path}` names the commit that contains it"
    )
    version = board_version(board)
    return "\n".join(
        [
            f"@misc{{{key},",
            f"  title = {{normbench {version} leaderboard: {board['task']}, preset {board['preset']}}},",
            "  author = {{The normbench authors}},",
            f"  year = {{{board['generated_at'][:4]}}},",
            f"  version = {{{version}}},",
            f"  note = {{{note}}},",
            "}",
        ]
    )


def write(board: dict[str, Any], out_dir: str | Path, plots: list[str]) -> tuple[Path, Path]:
    """Write ``leaderboard.json`` and ``leaderboard.md`` atomically into ``out_dir``."""
    out_dir = Path(out_dir)
    board["citation"] = {"bibtex": bibtex(board, (out_dir / "leaderboard.json").as_posix())}
    json_path = atomic_write_json(out_dir / "leaderboard.json", board)
    md_path = atomic_write_text(out_dir / "leaderboard.md", render_markdown(board, plots))
    return json_path, md_path


def status_cell(variant: dict[str, Any]) -> str:
    """``done``, or e.g. ``diverged at step 37 (seed 1); failed (seed 2); 2 done`` when some seeds
    diverged or failed, with ``; collapsed (seeds 0, 2)`` when some collapsed or stayed at chance."""
    diverged = variant.get("diverged_at_step") or {}
    failed = variant.get("failed") or {}
    collapsed = variant.get("collapsed") or []
    mark = f"; collapsed (seed{'s' if len(collapsed) > 1 else ''} {', '.join(collapsed)})" if collapsed else ""
    if not diverged and not failed:
        return variant["status"] + mark
    parts = [diverged_text(seed, step) for seed, step in diverged.items()]
    parts += [f"failed (seed {seed})" for seed in failed]
    done = sum(s == "done" for s in variant.get("run_status", {}).values())
    return "; ".join(parts + ([f"{done} done"] if done else [])) + mark


def render_collapse(collapse: dict[str, Any] | None, variants: list[dict[str, Any]]) -> list[str]:
    """How collapse was judged (``bench.collapse``): the rule, the baseline values, the runs without one."""
    if not collapse:
        return []
    values = sorted(
        {round(v, 4) for e in variants for v in (e.get("collapse_baseline") or {}).values() if v is not None}
    )
    shown = ", ".join(f"{v:.4f}" for v in values) or "none computed"
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


def seeds_cell(variant: dict[str, Any]) -> str:
    """The number of seeds with a finished run, ``+ k failed`` when some failed."""
    failed = len(variant.get("failed") or {})
    return f"{len(variant['seeds'])}" + (f" + {failed} failed" if failed else "")


def seed_status(variant: dict[str, Any], seed: int | str) -> str:
    """One seed's status in the per-seed table: ``done``, ``diverged at step k (seed s)`` or why it is flagged."""
    key = str(seed)
    if key in (variant.get("diverged_at_step") or {}):
        return diverged_text(key, variant["diverged_at_step"][key])
    status = (variant.get("run_status") or {}).get(key, variant.get("status", "done"))
    flag = (variant.get("flagged") or {}).get(key)
    return f"{status}, {flag}" if flag else status


REDO = "the sweep's own `normbench sweep` (or `bench`) command redoes that run"


def load_records(paths: list[Path], config_hashes: list[str | None] | None = None) -> list[dict[str, Any]]:
    """The records at ``paths`` that exist, each with its own location as ``record_path``.

    A finished record must be its run's (:func:`normbench.training.verify.check_record`: the config hash
    recomputed from its config is its own and, where ``config_hashes`` gives it, the planned one; a
    ``done`` run's final checkpoint is readable). A malformed or mismatched record, or a broken final
    checkpoint, is one ``ValueError`` naming the file and the fix: no leaderboard cell from it.
    """
    hashes = list(config_hashes) if config_hashes is not None else [None] * len(paths)
    out = []
    for path, wanted in zip(paths, hashes, strict=False):
        if not Path(path).exists():
            continue
        try:
            record = read_record(path)
            if record["status"] in FINISHED:
                check_record(record, path, wanted)
        except ValueError as exc:
            raise ValueError(f"{exc}; {REDO}") from None
        out.append({**record, "record_path": str(path)})
    return out
