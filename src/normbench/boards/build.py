"""Build a leaderboard: run records aggregated over seeds, claims judged, into a :class:`~normbench.archive.Board`.

Metric columns are declared in the task YAML (``bench.metrics``), each read from one logged series of
every run:

* ``at_step: N`` - the last logged value at a step <= N (missing if the run ended before N);
  ``at_step: last`` - the final value.
* ``first_below: x`` - the first step at which the series is <= x ("not reached" otherwise).
* ``smooth: w`` (optional) - read the trailing moving average over ``w`` logged points.

A metric named with ``{layer}`` (e.g. ``unselectable_after_L{layer}``) stands for one metric per
layer of the network, its series expanded the same way (:mod:`normbench.tasks.series`). The records
and the views under construction are JSON objects (the analyses enrich them); what leaves is a Board.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from normbench import __version__
from normbench.archive import FINISHED, Board, load_record, parse_board, wall_time_share_s
from normbench.boards.published import (
    NOT_MEASURED,
    is_stand_in,
    published_notes,
    published_seeds,
    value_of,
)
from normbench.io import strict_json
from normbench.judge.chance import with_chance
from normbench.judge.choice import build_choice, sort_key
from normbench.judge.claims import board_claims
from normbench.judge.collapse import check_spec as check_collapse
from normbench.judge.collapse import collapse_text, is_collapsed, with_baselines
from normbench.judge.reference_runs import build_reference
from normbench.judge.stats import aggregate
from normbench.tasks import norm_roles
from normbench.tasks.series import FROM_CHECKPOINT, expand_metric_layers, series_value
from normbench.training.config import config_value
from normbench.training.reproducibility import chaotic, distribution_table, tolerance_table
from normbench.training.run.records import provenance, utc_now
from normbench.training.run.verify import check_record


def no_checkpoint_note(series: str, records: list[dict[str, Any]]) -> str | None:
    """Why the checkpoint analysis behind ``series`` has no value: finished runs whose records name no final
    checkpoint (no ``checkpoint`` field); ``None`` when that is not why (e.g. another kind of series)."""
    if not series.startswith(FROM_CHECKPOINT):
        return None
    seeds = [str(r.get("seed")) for r in records if r.get("status") == "done" and not r.get("checkpoint")]
    if not seeds:
        return None
    return (
        f"not measured: the run record of seed {', '.join(seeds)} names no final checkpoint (no `checkpoint` "
        f"field: trained without checkpointing, or the record was edited)"
    )


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
    :mod:`normbench.judge.collapse`; each record carries its ``collapse_baseline``). Seeds at chance or
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
            if seed not in flags and base is not None and is_collapsed(value, base, collapse["within"]):
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
        pairs = [value_of(r, metric) or series_value(r["series"].get(spec["series"], []), spec) for r in records]
        agg = aggregate([p[0] for p in pairs], [p[1] for p in pairs], counted)
        lacking = sorted(
            {r["published"]["board"] for r in records if is_stand_in(r) and metric not in r["published"]["values"]}
        )
        if agg["mean"] is None and (lacking or all(is_stand_in(r) for r in records)):
            notes = [NOT_MEASURED.format(board=b) for b in lacking] + published_notes(records, metric)
            if notes:
                agg["note"] = "; ".join(dict.fromkeys(notes))
        elif agg["mean"] is None:
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
        "wall_time_s": round(sum(wall_time_share_s(r) for r in records), 1),  # a stack of seeds counted once
        "log_dirs": [r.get("log_dir") for r in records],
        "platforms": unique_platforms(prov),
    }
    if published := published_seeds(records):
        entry["published_seeds"] = published
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
        "by_distribution": distribution_table(),
    }


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
) -> Board:
    """The leaderboard of the finished ``records`` (one per variant and seed); the ``failed`` records are
    named (``failed_runs``, and in their variant's status), never averaged. ``config``: the sweep's resolved
    config, for a board with no finished record yet (its runs in progress)."""
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
    judged = board_claims(bench, variants, config)
    tables = build_tables(bench.get("tables") or {}, by_name, config)
    prov = provenance()
    prov["normbench"] = __version__
    prov["wall_time_s"] = round(sum(v["provenance"]["wall_time_s"] for v in variants), 1)
    doc = {
        "task": task,
        "preset": preset,
        "generated_at": utc_now(),
        "provenance": prov,
        "protocol": build_protocol(
            bench.get("protocol") or {},
            {name: group[0]["config"] for name, group in by_variant.items()} or {"": config},
            variants,
            preset=preset,
            judges_claims=bool(bench.get("claims")),
        ),
        "metrics": metrics,
        "columns": list(bench.get("columns") or metrics),
        "variants": variants,
        "tables": tables,
        **judged.fields(bench),
        "reproducibility": reproducibility(variants, bench),
        **({"collapse": {**collapse, "unavailable": unavailable}} if collapse else {}),
        **(
            {"choice": build_choice(bench["choice"], variants, metrics, bench.get("seeds"), variant_order)}
            if bench.get("choice")
            else {}
        ),
        **(
            {"reference_runs": build_reference(bench["reference_runs"], by_name)} if bench.get("reference_runs") else {}
        ),
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
    return parse_board(strict_json(doc))


def n_layers_of(config: dict[str, Any]) -> int:
    """The network's number of layers in a run's resolved config (1 when it names none)."""
    return int(config_value(config, "model.init_args.arch.n_layers") or 1)


def build_protocol(
    spec: dict[str, Any],
    configs: Mapping[str, dict[str, Any]],
    variants: list[dict[str, Any]],
    preset: str | None = None,
    judges_claims: bool = True,
) -> dict[str, Any]:
    """The sweep's protocol beside the paper's (``bench.protocol``), read from the runs' configs.

    ``settings``: rows ``{setting, config: <dotted key> | value: <text>, paper: <text>}``; a config row reads every
    variant's config (``configs``: variant name -> resolved config) and names each value where they differ. The
    number of seeds is read from the variants. ``notes``: sentences printed under the table. ``see_also``: preset ->
    more sentences, printed only on that preset's board and only where it judges claims (``judges_claims``; a report
    card's board of the same preset judges none): where the same claims are judged with more seeds or at each
    variant's tuned rate. Keyed by preset, they are not inherited by the presets that extend it.
    """
    ordered = [configs[v["name"]] for v in variants if v["name"] in configs] or list(configs.values())
    rows = []
    for row in spec.get("settings") or []:
        ours = setting_value(row["config"], ordered) if "config" in row else row.get("value")
        rows.append({"setting": row["setting"], "this_sweep": ours, "paper": row.get("paper")})
    if spec.get("paper_seeds") is not None:
        seeds = sorted({len(v["seeds"]) for v in variants})
        rows.append(
            {"setting": "seeds per variant", "this_sweep": "/".join(map(str, seeds)), "paper": spec["paper_seeds"]}
        )
    see_also = (spec.get("see_also") or {}).get(preset) if judges_claims else None
    notes = list(spec.get("notes") or []) + list(see_also or [])
    return {"settings": rows, "notes": notes}


def setting_value(key: str, configs: list[dict[str, Any]]) -> Any:
    """One protocol setting over the board's runs: its value (as the config holds it) where every variant shares it,
    else the distinct values in ascending order as text (``0.0006 / 0.001 (differs by variant)``; ``not set`` for a
    variant whose config lacks it), never the first run's value alone."""
    values: list[Any] = []
    for config in configs:
        value = config_value(config, key)
        if value not in values:
            values.append(value)
    if len(values) <= 1:
        return values[0] if values else None
    ordered = sorted(values, key=lambda v: sort_key(str(v)))
    return " / ".join("not set" if v is None else str(v) for v in ordered) + " (differs by variant)"


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
                    **({"paper_null": row["paper_null"]} if row.get("paper_null") else {}),
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


REDO = "the sweep's own `normbench sweep` (or `bench`) command redoes that run"


def load_records(paths: list[Path], config_hashes: list[str | None] | None = None) -> list[dict[str, Any]]:
    """The records at ``paths`` that exist, each with its own location as ``record_path``.

    A finished record must be its run's (:func:`normbench.training.run.verify.check_record`: the config hash
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
            record = load_record(path).to_json()
            if record["status"] in FINISHED:
                check_record(record, path, wanted)
        except ValueError as exc:
            raise ValueError(f"{exc}; {REDO}") from None
        out.append({**record, "record_path": str(path)})
    return out
