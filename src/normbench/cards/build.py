"""A report card from its boards: per task, the new norm beside LayerNorm and RMSNorm, judged with the board's rules.

Each task's board (``results/cards/<slug>/<task>/``, built from the run archive by the card's bake) holds the three
variants' per-seed values. For every headline metric of the task's protocol (:class:`~normbench.cards.protocol.
CardProtocol`) and each baseline, two claims of our own are judged by :func:`normbench.judge.claims.judge`, the
function every board uses: **equivalence** (a two-sided TOST: the 90% interval of the difference of seed means inside
± the task's margin, registered in ``margins.yaml`` before any card ran) and **ordering** (the new norm better, by
the 95% Welch interval). Beside them the card reads from the board: steps to the loss thresholds, the seeds that
diverged or collapsed, the query angle, the new norm's unselectable fractions against their random-key null, its
figures and the runs' time and devices. Each verdict as a paper's table reads it: :mod:`normbench.cards.verdicts`;
the summary rows: :mod:`normbench.cards.summary`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from normbench import __version__
from normbench.archive import Board, VariantEntry, load_board
from normbench.archive.board_keys import board_folder
from normbench.archive.documents.sections import RunInProgress
from normbench.archive.record import Provenance
from normbench.archive.store import Archive
from normbench.boards.norm_board import platform_drift
from normbench.cards.document import (
    CardCost,
    CardJson,
    CardOptions,
    CardSection,
    QueueItem,
    SectionHead,
    TaskCost,
    TuningSection,
)
from normbench.cards.models import extra_parameters, learned_values, section_models
from normbench.cards.probe import NormFacts
from normbench.cards.protocol import CardProtocol, OptionValue, board_of, card_variant, slug
from normbench.cards.summary import summary_table
from normbench.cards.verdicts import BASELINES, comparisons
from normbench.io import dumps_json
from normbench.judge.claims import judge
from normbench.judge.entries import ClaimEntry, judged_entry
from normbench.judge.rows import MetricRow, RowProvenance, VariantRow
from normbench.judge.tuned import TunedView, at_rate, rates_of
from normbench.nn.norms import get_component, source_version
from normbench.site.card_pages import AT_TUNED
from normbench.training.run.records import provenance, utc_now

CARD_VERSION = 1
OWN = "normbench"
WHY = "a report card's question: whether a new norm can replace LayerNorm or RMSNorm on this task"


def card_claims(protocol: CardProtocol, variant: str) -> list[ClaimEntry]:
    """The card's claims on one task: per headline metric and baseline, an equivalence and an ordering."""
    out: list[ClaimEntry] = []
    for metric in protocol.metrics:
        for key in BASELINES:
            roles = {"new": variant, key: getattr(protocol, key)}
            head: ClaimEntry = {"owner": OWN, "source": "normbench report card", "why": WHY, "metric": metric,
                                "variants": roles}  # fmt: skip
            matches: ClaimEntry = {
                **head,
                "id": f"{protocol.claim_prefix}.{metric}.matches_{key}",
                "statement": f"The new norm's {metric} is within {protocol.margin:g} of {key}'s (two-sided TOST)",
                "rule": {
                    "kind": "equivalence",
                    "reference": key,
                    "margin": protocol.margin,
                    "margin_why": f"the task's card margin ({protocol.task}: bench.card.margin)",
                },
            }
            better = "new" if protocol.better == "lower" else key  # the role whose value is lower
            beats: ClaimEntry = {
                **head,
                "id": f"{protocol.claim_prefix}.{metric}.beats_{key}",
                "statement": f"The new norm's {metric} is {protocol.better} than {key}'s",
                "rule": {"kind": "ordering", "lower": better},
            }
            out += [matches, beats]
    return out


def card_cost(tasks: list[CardSection]) -> CardCost:
    """The training time of the new norm's runs (the baselines' are the published runs'): per task, and summed with
    the devices they ran on (``None`` where nothing finished); and the whole card's time estimated from it: per task,
    the mean time of the runs held times the runs a whole card trains (``estimated_tasks``: the tasks it covers)."""
    per_task = {t.get("label", t["task"]): cost for t in tasks if (cost := t.get("cost"))}
    walls = [c["wall_time_s"] for c in per_task.values() if c.get("wall_time_s") is not None]
    devices = sorted({d for c in per_task.values() for d in c.get("devices") or ()})
    timed = {task: c for task, c in per_task.items() if c.get("mean_run_s") is not None}
    estimate = sum(cast(float, c["mean_run_s"]) * c["whole_card_runs"] for c in timed.values())  # each timed: a mean
    return {
        "tasks": per_task,
        "wall_time_s": round(sum(walls), 1) if walls else None,
        "devices": devices,
        "estimated_whole_card_s": round(estimate, 1) if timed else None,
        "estimated_tasks": list(timed),
    }


def failures(variant: VariantEntry | VariantRow | None) -> dict[str, str]:
    """Each failed seed of a variant (a board's entry, or its JSON) and why, every reason it has: diverged (at its
    step), failed (the run's error) or flagged (collapsed, at chance, ...), joined by "; "."""
    if variant is None:
        return {}
    v = variant.to_json() if isinstance(variant, VariantEntry) else variant
    diverged = v.get("diverged_at_step") or {}
    why: dict[str, list[str]] = {}
    for seed, step in diverged.items():
        why.setdefault(seed, []).append(f"diverged at step {step}" if step is not None else "diverged")
    for seed, error in (v.get("failed") or {}).items():
        why.setdefault(seed, []).append(f"failed: {error}")
    for seed, flag in (v.get("flagged") or {}).items():
        if flag not in why.get(seed, []) and not (flag.startswith("diverged") and seed in diverged):
            why.setdefault(seed, []).append(flag)
    return {seed: "; ".join(reasons) for seed, reasons in sorted(why.items(), key=lambda kv: int(kv[0]))}


def failed_counts(entries: Mapping[str, VariantEntry | VariantRow | None]) -> dict[str, list[int]]:
    """Role -> [failed seeds, seeds] of each variant that has a failed seed (its seeds: finished or failed)."""
    out = {}
    for role, entry in entries.items():
        failed = failures(entry)
        if failed and entry is not None:
            seeds = entry.seeds if isinstance(entry, VariantEntry) else entry.get("seeds") or ()
            out[role] = [len(failed), len({str(x) for x in seeds} | set(failed))]
    return out


def metric_row(board: Board, name: str, metric: str) -> MetricRow | None:
    """A variant's aggregate of ``metric`` on ``board`` as JSON (``None``: no such variant or metric)."""
    variant = board.by_name.get(name)
    if variant is None or metric not in variant.metrics:
        return None
    return cast(MetricRow, variant.metrics[metric].to_json())  # a Metric's JSON: MetricRow's keys


def row_provenance(variant: VariantEntry | None) -> RowProvenance | None:
    """Where a board's variant was trained (``None``: no such variant, or no provenance), as the board pipeline wrote
    it (:class:`normbench.archive.VariantEntry` keeps it a JSON object, read from ``leaderboard.json``)."""
    return None if variant is None else cast("RowProvenance | None", variant.provenance)


def runs_in_progress(board: Board) -> list[RunInProgress]:
    """A board's runs in progress (none: ``[]``), as :func:`normbench.boards.progress.in_progress` wrote them
    (:class:`normbench.archive.Board` keeps them JSON objects, read from ``leaderboard.json``)."""
    return cast("list[RunInProgress]", board.in_progress or [])


def task_card(
    norm: str, protocol: CardProtocol, results_dir: str | Path, options: dict[str, OptionValue] | None = None
) -> CardSection:
    """One task's section of the card at the protocol's placement, read from its board (``status: not run`` without
    one). ``label``: the task, with the placement where it is not the declared one (``majority (post)``); ``options``:
    the norm's (``--options``)."""
    name, _ = card_variant(norm, protocol, options)
    board_name = board_of(protocol.task, norm, protocol.placement if protocol.moved else "", options)
    variants = {"new": name, "layernorm": protocol.layernorm, "rmsnorm": protocol.rmsnorm}
    label = f"{protocol.task} ({protocol.placement})" if protocol.moved else protocol.task
    base: SectionHead = {"task": protocol.task, "placement": protocol.placement, "label": label,
                         "preset": protocol.preset, "seeds": list(protocol.seeds), "variants": variants,
                         "board": board_name, "margin": protocol.margin, "better": protocol.better,
                         "claim_prefix": protocol.claim_prefix}  # fmt: skip
    try:
        board = load_board(board_folder(results_dir, board_name))
    except FileNotFoundError:
        return {**base, "status": "not run", "why": "no run of the card has finished on this task"}
    by_name = {v.name: cast(VariantRow, v.to_json()) for v in board.variants}  # the board's rows, as judged
    claims = [judge(c, by_name, None, len(protocol.seeds)) for c in card_claims(protocol, name)]
    new = board.by_name.get(name)
    planned, finished = board.planned_runs, board.finished_runs
    layers = [m for m in (new.metrics if new else {}) if protocol.unselectable and _is_layer(m, protocol.unselectable)]
    tuning = tuning_section(norm, protocol, results_dir, options)
    chance = [
        judged_entry(c.to_json()) for c in board.against_chance or () if (c.variants or {}).get("trained") == name
    ]
    return {
        **base,
        "status": "complete" if planned is not None and finished == planned else "incomplete",
        "runs": {"planned": planned, "finished": finished, "in_progress": runs_in_progress(board)},
        "norms": (models := section_models(norm, protocol, variants, results_dir, options)),
        "extra_parameters": extra_parameters(models),
        "learned": learned_values(board, name, Archive(results_dir)),
        "headline": {m: {role: metric_row(board, v, m) for role, v in variants.items()} for m in protocol.metrics},
        "platform_drift": {
            m: drift for m in protocol.metrics if (drift := platform_drift(protocol.task, m, Path(results_dir)))
        },
        "claims": claims,
        "comparisons": comparisons(claims),
        "thresholds": {m: {role: metric_row(board, v, m) for role, v in variants.items()} for m in protocol.thresholds},
        "angle_metric": protocol.angle,
        "angle": (
            {role: metric_row(board, v, protocol.angle) for role, v in variants.items()} if protocol.angle else None
        ),
        "unselectable": {m: metric_row(board, name, m) for m in layers},
        "against_chance": chance,
        "new_seeds": list(new.seeds) if new else [],
        "failed_seeds": failures(new),
        "failed_by_role": failed_counts({role: board.by_name.get(v) for role, v in variants.items()}),
        "diverged_at_step": dict(new.diverged_at_step or {}) if new else {},
        "figures": [f"{board_name}/{Path(f).name}" for f in board.figures or ()],
        "tuning": tuning,
        "cost": _cost(
            [row_provenance(new), *((tuning.pop("provenance", None) if tuning else None) or [])],
            whole_card_runs=sum(protocol.new_norm_runs().values()),
        ),
        "built_at": board.generated_at,
    }


def tuning_section(
    norm: str, protocol: CardProtocol, results_dir: str | Path, options: dict[str, OptionValue] | None = None
) -> TuningSection | None:
    """The card's claims at each variant's tuned learning rate (the tuned board's view: per variant the shared and the
    chosen rate), and the failed seeds of each variant at each rate of the grid; ``None`` where the task tunes
    nothing. A board not built yet is ``status: not run``."""
    if not (protocol.grid and protocol.tuned):
        return None
    name, _ = card_variant(norm, protocol, options)
    roles = {"new": name, "layernorm": protocol.layernorm, "rmsnorm": protocol.rmsnorm}
    grid_key, tuned_key = board_of(protocol.task, norm, "lr", options), board_of(protocol.task, norm, "tuned", options)
    out: TuningSection = {"grid_board": grid_key, "tuned_board": tuned_key, "grid": None, "tuned": None}
    spent: list[RowProvenance] = []  # the provenance of the new norm's runs here (its time goes on the card's cost)
    try:
        grid = load_board(board_folder(results_dir, grid_key))
    except FileNotFoundError:
        grid = None
    if grid is not None:
        failed_at: dict[str, dict[str, list[str]]] = {}
        for v in grid.variants:
            base, _, rate = v.name.partition(",lr=")
            role = next((r for r, n in roles.items() if n == base), None)
            if role is not None and rate:
                failed_at.setdefault(role, {})[rate] = list(failures(v))
                spent += [p] if role == "new" and (p := row_provenance(v)) else []
        new_runs = sum(len(v.seeds) for v in grid.variants if v.name.partition(",lr=")[0] == name)
        out["grid"] = {"planned": grid.planned_runs, "finished": grid.finished_runs, "failed_seeds": failed_at,
                       "seeds": sorted({s for v in grid.variants for s in v.seeds}),
                       "new": {"finished": new_runs, "planned": protocol.new_norm_runs()["grid"]}}  # fmt: skip
    try:
        tuned = load_board(board_folder(results_dir, tuned_key))
    except FileNotFoundError:
        return {**out, "provenance": spent}
    view = cast(TunedView, tuned.tuned or {})  # the board's resolved bench.tuned (judge.tuned.resolve)
    entries = at_rate(view, [cast(VariantRow, v.to_json()) for v in tuned.variants], "tuned") if view else []
    by_name = {e["name"]: e for e in entries}
    claims = [judge(c, by_name, None, len(protocol.seeds)) for c in card_claims(protocol, name)]
    for c, spec in zip(claims, card_claims(protocol, name), strict=True):
        c["rates"] = rates_of(view, spec["variants"], "tuned") if view else {}
    rows = {row["base"]: row for row in view.get("bases") or []}
    out["tuned"] = {
        "planned": tuned.planned_runs,
        "finished": tuned.finished_runs,
        "shared": view.get("shared"),
        "chosen_on": {"metric": view.get("metric"), "goal": view.get("goal")},
        "rates": {
            role: {"chosen": rows[n].get("chosen"), "at_edge": rows[n].get("at_edge")}
            for role, n in roles.items()
            if n in rows
        },
        "headline": {
            m: {role: metric_row_of(by_name.get(n), m) for role, n in roles.items()} for m in protocol.metrics
        },
        "claims": claims,
        "comparisons": comparisons(claims),
        "failed_by_role": failed_counts({role: by_name.get(n) for role, n in roles.items()}),
    }
    tuned_point = rows.get(name, {}).get("tuned")
    shared_point = rows.get(name, {}).get("shared")  # the headline runs themselves: counted there
    spent += [p for v in tuned.variants if v.name == tuned_point != shared_point and (p := row_provenance(v))]
    return {**out, "provenance": spent}


def metric_row_of(entry: VariantRow | None, metric: str) -> MetricRow | None:
    """A variant entry's aggregate of ``metric`` (JSON), ``None`` without one."""
    return None if entry is None else (entry.get("metrics") or {}).get(metric)


def _is_layer(metric: str, template: str) -> bool:
    head, _, tail = template.partition("{layer}")
    return metric.startswith(head) and metric.endswith(tail) and metric[len(head) : len(metric) - len(tail)].isdigit()


def _cost(provenances: list[RowProvenance | None], whole_card_runs: int) -> TaskCost | None:
    """The new norm's training time summed over its variants' provenance (headline, grid, tuned rate), the runs it
    counts (one log directory each) and their mean time (sum / runs), where they ran, and how many runs of the new
    norm a whole card trains on the task (at most: :meth:`CardProtocol.new_norm_runs`)."""
    held = [p for p in provenances if p and p.get("wall_time_s") is not None]
    if not held:
        return None
    wall = sum(p["wall_time_s"] for p in held)
    runs = sum(len(p.get("log_dirs") or ()) for p in held)
    return {
        "wall_time_s": round(wall, 1),
        "runs": runs,
        "mean_run_s": round(wall / runs, 1) if runs else None,
        "whole_card_runs": whole_card_runs,
        "devices": sorted({d for p in held for d in p.get("devices") or ()}),
        "platforms": [
            json.loads(x)
            for x in sorted({json.dumps(q, sort_keys=True) for p in held for q in p.get("platforms") or ()})
        ],  # fmt: skip
    }


@dataclass(frozen=True)
class Card:
    """A report card: the norm's measured facts and its per-task sections (JSON: :meth:`dumps`)."""

    norm: str
    facts: dict[int, NormFacts]
    tasks: list[CardSection]
    wall_time_s: float
    generated_at: str = field(default_factory=utc_now)
    provenance: Provenance = field(default_factory=provenance)
    source: str | None = None  # the version of a plug-in norm's code the card judges (its runs are keyed by it)
    options: dict[str, OptionValue] | None = None  # the norm's constructor keywords in every slot (``--options``)

    @property
    def broken(self) -> str | None:
        """Why the norm is broken (the probe's problem at the first width that has one), else ``None``."""
        return next((f"at d = {d}: {f.problem}" for d, f in self.facts.items() if f.problem), None)

    def to_json(self) -> CardJson:
        options: CardOptions = {"options": dict(self.options)} if self.options else {}
        return {
            "card_version": CARD_VERSION,
            "normbench": __version__,
            "norm": self.norm,
            **options,
            "source": self.source,
            "slug": slug(self.norm, self.options),
            "generated_at": self.generated_at,
            "provenance": self.provenance,
            "broken": self.broken,
            "facts": {str(d): f.to_json() for d, f in self.facts.items()},
            "summary": summary_table(self.tasks),
            "tasks": self.tasks,
            "training_cost": card_cost(self.tasks),
            "wall_time_s": round(self.wall_time_s, 1),
        }

    def dumps(self) -> str:
        return dumps_json(json.loads(json.dumps(self.to_json(), default=str)), indent=2, sort_keys=False) + "\n"

    def summary_lines(self) -> list[str]:
        """One line per task and headline metric, as the summary table says it (what the command prints)."""
        if self.broken:
            return [f"broken: {self.broken}"]
        lines = []
        for row in summary_table(self.tasks):
            at = AT_TUNED if row.get("lr") == "tuned" else ""
            if row["metric"] == "–":  # a task not run, or its tuned claims not judged yet: the row says which
                lines.append(f"{row['task']}{at}: {row['new']}")
                continue
            against = f"vs LayerNorm {row['vs_layernorm']}; vs RMSNorm {row['vs_rmsnorm']}"
            lines.append(f"{row['task']}: {row['metric']}{at}: {against}")
        return lines


def build_card(
    norm: str, facts: dict[int, NormFacts], tasks: list[str], items: list[QueueItem], results_dir: str | Path,
    wall_time_s: float = 0.0, placements: list[str] | tuple[str, ...] = ("pre",),
    options: dict[str, OptionValue] | None = None,
) -> Card:  # fmt: skip
    """The card of ``norm`` (with its ``options``) from its probe ``facts`` and the boards of ``tasks`` at each of
    ``placements`` (a section per task and placement; none when it is broken)."""
    sections = [] if any(f.problem for f in facts.values()) or not items else [
        task_card(norm, CardProtocol.of(task).at(placement), results_dir, options)
        for task in tasks for placement in placements
    ]  # fmt: skip
    measured = next((f.component for f in facts.values()), norm)
    source = source_version(get_component(measured))
    return Card(norm, facts, sections, wall_time_s, source=source, options=dict(options) if options else None)
