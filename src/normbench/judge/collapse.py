"""Collapsed runs: seeds that learned nothing a trivial model does not know, flagged on their leaderboard variant.

A language model that predicts every next token by its training frequency alone reaches a loss of about the
unigram entropy of its training stream, H = -sum_v p_v ln p_v (nats). A run whose final validation loss is
not below H by more than a small tolerance has collapsed to that model (e.g. a saturated DyT whose logits are
the same at every position). The task YAML declares the check::

    bench:
      collapse: {metric: final_val_loss, baseline: unigram_entropy, within: 0.01}

and a seed with metric >= baseline - within is flagged ``collapsed``. The baseline is computed when the
leaderboard is built, from each run's own data config (its data module's training stream; the token streams
are cached, the value is computed once per data config and process). A classifier's counterpart is
``bench.chance`` (accuracy <= a chance level). Collapsed and at-chance seeds stay in every mean and verdict;
the variant names them in ``collapsed`` (:func:`collapsed_seeds`), so an analysis that needs a trained model
(the geometry of its keys) can leave them out.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from normbench.archive.documents.views import CollapseSpec
from normbench.archive.facts import data_fact
from normbench.archive.record import RecordDocument
from normbench.judge.rows import variant_row
from normbench.training.run.loading import build_datamodule

COLLAPSED = "collapsed"
AT_CHANCE = "at chance"


@functools.cache
def _unigram_entropy(data: str) -> float | str:
    """The unigram entropy (nats) of the training stream of the data module that ``data`` (JSON) configures (a fact of
    the run archive, :func:`normbench.archive.facts.data_fact`: read from there where the corpus is not on this
    machine), or why it cannot be had (kept too: a missing corpus is reported once, not rebuilt for every run)."""

    def compute() -> float:
        dm = build_datamodule({"data": json.loads(data)}, "fit")
        if not hasattr(dm, "unigram_entropy"):
            raise ValueError(f"{type(dm).__name__} has no token stream to take a unigram entropy of")
        return float(dm.unigram_entropy("train"))

    try:
        return float(data_fact("unigram_entropy", json.loads(data), compute))
    except Exception as exc:  # noqa: BLE001 - e.g. the corpus is not on this machine: reported, never silent
        first = (str(exc).strip().splitlines() or [""])[0]
        return first or type(exc).__name__


def unigram_entropy_of_run(record: RecordDocument) -> float:
    """H = -sum_v p_v ln p_v over the training token stream of the run's data config (nats)."""
    data = (record.get("config") or {}).get("data")
    if not isinstance(data, dict) or not data.get("class_path"):
        raise ValueError("its record has no data config")
    value = _unigram_entropy(json.dumps(data, sort_keys=True))
    if isinstance(value, str):
        raise ValueError(value)
    return value


BASELINES: dict[str, Callable[[RecordDocument], float]] = {"unigram_entropy": unigram_entropy_of_run}
"""The collapse baselines ``bench.collapse.baseline`` may name: run record -> the value a collapsed run sits at."""


def check_spec(spec: Any, metrics: Collection[str]) -> CollapseSpec | None:
    """``bench.collapse`` as ``{metric, baseline, within}`` (``None`` when not declared), or a one-line error."""
    if spec is None:
        return None
    if not isinstance(spec, dict):
        raise ValueError(f"bench.collapse: must be {{metric, baseline, within}}, got {spec!r}")
    if spec.get("metric") not in metrics:
        raise ValueError(
            f"bench.collapse.metric: {spec.get('metric')!r} is not a leaderboard metric; "
            f"choose one of {', '.join(metrics)}"
        )
    if spec.get("baseline") not in BASELINES:
        raise ValueError(
            f"bench.collapse.baseline: {spec.get('baseline')!r} is not a baseline; choose one of {', '.join(BASELINES)}"
        )
    within = spec.get("within", 0.0)
    if isinstance(within, bool) or not isinstance(within, (int, float)) or not (math.isfinite(within) and within >= 0):
        raise ValueError(f"bench.collapse.within: must be a number >= 0, got {within!r}")
    return {"metric": spec["metric"], "baseline": spec["baseline"], "within": float(within)}


def with_baselines(records: Sequence[RecordDocument], spec: CollapseSpec) -> tuple[list[RecordDocument], list[str]]:
    """Each record with ``collapse_baseline`` (the baseline's value for its run, ``None`` where it cannot be
    computed), and why it could not be for those runs (one line each)."""
    compute = BASELINES[spec["baseline"]]
    out: list[RecordDocument] = []
    problems: list[str] = []
    for record in records:
        try:
            value: float | None = compute(record)
        except ValueError as exc:  # shown on the board, never silent
            value = None
            problems.append(f"`{record.get('variant')}` seed {record.get('seed')}: no {spec['baseline']} ({exc})")
        out.append({**record, "collapse_baseline": value})
    return out, problems


def is_collapsed(value: float | None, baseline: float | None, within: float) -> bool:
    """metric >= baseline - within: not below the baseline by more than the tolerance (a loss, lower is better)."""
    return value is not None and baseline is not None and value >= baseline - within


def collapse_text(metric: str, value: float, baseline_name: str, baseline: float, within: float) -> str:
    """``collapsed (final_val_loss 6.4390 >= unigram_entropy 6.4383 - 0.01)``: why a seed is flagged."""
    return f"{COLLAPSED} ({metric} {value:.4f} >= {baseline_name} {baseline:.4f} - {within:g})"


def collapsed_seeds(variant_entry: Mapping[str, object]) -> list[str]:
    """The seeds (as strings) of a leaderboard variant (its row) that collapsed or stayed at chance: its ``collapsed``
    list, or, on a board built before that list existed, the seeds its ``flagged`` reasons call so. Diverged seeds
    are not among them (they have no values at all)."""
    variant_entry = variant_row(variant_entry)
    if "collapsed" in variant_entry:
        return [str(s) for s in variant_entry["collapsed"]]
    return [
        str(seed)
        for seed, why in (variant_entry.get("flagged") or {}).items()
        if str(why).startswith((COLLAPSED, AT_CHANCE))
    ]
