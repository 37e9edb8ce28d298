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
Each variant's row: :mod:`normbench.boards.variants`; the protocol and tables beside the paper's:
:mod:`normbench.boards.paper`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from normbench import __version__
from normbench.archive import FINISHED, Board, load_record, parse_board
from normbench.archive.documents.sections import Reproducibility
from normbench.archive.record import RecordDocument
from normbench.boards.paper import ProtocolSpec, build_protocol, build_tables
from normbench.boards.variants import distinct, group_by_variant, n_layers_of, variant_entry
from normbench.io import Config, strict_json
from normbench.judge.chance.board import with_chance
from normbench.judge.choice import build_choice
from normbench.judge.claims import board_claims
from normbench.judge.collapse import check_spec as check_collapse
from normbench.judge.collapse import with_baselines
from normbench.judge.reference_runs import build_reference
from normbench.judge.rows import VariantRow
from normbench.tasks.series import expand_metric_layers
from normbench.training.reproducibility import chaotic, distribution_table, tolerance_table
from normbench.training.run.records import provenance, utc_now
from normbench.training.run.verify import check_record


def reproducibility(variants: Sequence[VariantRow], bench: dict[str, Any]) -> Reproducibility:
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


def build(
    task: str,
    preset: str | None,
    records: Sequence[RecordDocument],
    bench: dict[str, Any],
    variant_order: list[str] | None = None,
    failed: Sequence[RecordDocument] | None = None,
    config: Config | None = None,
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
    prov = {
        **provenance(),
        "normbench": __version__,
        "wall_time_s": round(sum(v["provenance"]["wall_time_s"] for v in variants), 1),
    }
    doc = {
        "task": task,
        "preset": preset,
        "generated_at": utc_now(),
        "provenance": prov,
        "protocol": build_protocol(
            bench.get("protocol") or ProtocolSpec(),
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


REDO = "the sweep's own `normbench sweep` (or `bench`) command redoes that run"


def load_records(paths: list[Path], config_hashes: list[str | None] | None = None) -> list[RecordDocument]:
    """The records at ``paths`` that exist, each with its own location as ``record_path``.

    A finished record must be its run's (:func:`normbench.training.run.verify.check_record`: the config hash
    recomputed from its config is its own and, where ``config_hashes`` gives it, the planned one; a
    ``done`` run's final checkpoint is readable). A malformed or mismatched record, or a broken final
    checkpoint, is one ``ValueError`` naming the file and the fix: no leaderboard cell from it.
    """
    hashes = list(config_hashes) if config_hashes is not None else [None] * len(paths)
    out: list[RecordDocument] = []
    for path, wanted in zip(paths, hashes, strict=False):
        if not Path(path).exists():
            continue
        try:
            record = load_record(path).document()
            if record["status"] in FINISHED:
                check_record(record, path, wanted)
        except ValueError as exc:
            raise ValueError(f"{exc}; {REDO}") from None
        out.append({**record, "record_path": str(path)})
    return out
