"""The nulls beside a board's columns, and how a board prints one.

:func:`with_chance` puts the null (:func:`normbench.judge.chance.columns.chance_for_metric`) beside every
unselectable fraction of a board, drawn over enough sets that its standard error is below a tenth of the seed
standard deviation it is compared with (``SE_SHARE``): sem falls as 1 / sqrt(sets), within a work budget
(``WORK_BUDGET``); the board says where the budget ran out first. :func:`chance_text` is the null beside a measured
fraction as a board prints it.
"""

from __future__ import annotations

import functools
import json
import math
import typing
from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np

from normbench.archive._json import JsonDict
from normbench.judge.chance.columns import ColumnNull, chance_for_metric
from normbench.judge.rows import MetricRow, NullBlock, variant_rows
from normbench.judge.stats import values_of

SE_SHARE = 0.1  # a null's standard error is held below this share of the seed standard deviation it is compared to
WORK_BUDGET = 16_000_000  # keys drawn x their dimension for one null (d = 8, n = 256: 7,800 sets, about 100 s)


def sets_for(pilot: ColumnNull, target_sem: float | None) -> tuple[int, bool]:
    """(sets to draw, whether they meet ``target_sem``) for a null whose ``pilot`` draw gave ``sem`` over ``sets``:
    sem falls as 1 / sqrt(sets), so sets = pilot sets x (pilot sem / target)^2, capped by ``WORK_BUDGET``."""
    sets, sem = int(pilot["sets"]), pilot.get("sem")
    if not target_sem or target_sem <= 0 or sem is None or sem <= target_sem:
        return sets, sem is not None and bool(target_sem) and sem <= cast(float, target_sem)  # bool(target_sem): set
    needed = math.ceil(sets * (sem / target_sem) ** 2)
    n = pilot["n"]
    keys_per_set = n if isinstance(n, int) else int(n["keys"])
    dims = pilot["d"] if isinstance(pilot["d"], int) else sum(pilot["d"])
    cap = max(sets, WORK_BUDGET // max(1, keys_per_set * dims * int(pilot.get("layers") or 1)))
    return min(needed, cap), needed <= cap


def redraw(metric: str, config: JsonDict, *, sets: int) -> ColumnNull:
    """:func:`chance_for_metric` over ``sets`` sets, for a column that has a chance value (its pilot was drawn)."""
    value = chance_for_metric(metric, config, sets=sets)
    assert value is not None  # the same column and config as the pilot, which had one
    return value


def draw_to_target(
    value: ColumnNull, target: float | None, draw: typing.Callable[..., ColumnNull], rounds: int = 3
) -> ColumnNull:
    """``value`` (a pilot null) drawn again, over as many sets as :func:`sets_for` asks, until its own standard error
    is at most ``target``, the work budget is spent or ``rounds`` draws are made: the sets needed are predicted from
    a standard error that is itself an estimate, so one draw can fall just short. Whether the target is met is read
    off the returned value's standard error, never off the prediction."""
    for _ in range(rounds):
        sets, _ = sets_for(value, target)
        if sets <= value["sets"]:
            break
        value = draw(sets=sets)
    return value


def seed_sd(agg: MetricRow) -> float | None:
    """The standard deviation over seeds of a leaderboard metric (``None`` with fewer than 2 finite values)."""
    values = values_of(agg.get("per_seed"))
    return float(np.std(values, ddof=1)) if len(values) > 1 else None


def with_chance(variants: Sequence[Mapping[str, object]], configs: dict[str, JsonDict]) -> None:
    """Put the chance value (:func:`chance_for_metric`) beside every unselectable fraction of each leaderboard
    variant, in place: ``metrics[<column>]["chance"] = {mean, sem, sets, target_sem, target_met, sanity_check,
    basis}``, drawn until its standard error is below ``SE_SHARE`` of the seed standard deviation of every column that
    shares that null (same dimension, key-set sizes and key distribution: one draw for all of them; where every such
    column's seeds agree exactly, below ``SE_SHARE`` of the null's own value) or the work budget is spent.
    ``configs``: a resolved run config per variant name (a variant without one gets none)."""
    pilots: dict[str, list[tuple[MetricRow, ColumnNull, str, JsonDict]]] = {}
    for variant in variant_rows(variants):
        config = configs.get(variant["name"])
        if config is None:
            continue
        for metric, agg in (variant.get("metrics") or {}).items():
            value = chance_for_metric(metric, config)
            if value is not None and isinstance(agg, dict):
                key = json.dumps([value["d"], value["n"], value["keys"], value["layers"], value["skip_ends"]])
                pilots.setdefault(key, []).append((agg, value, metric, config))
    for cells in pilots.values():
        _, value, metric, config = cells[0]
        spreads = [seed_sd(agg) for agg, *_ in cells]
        positive = [sd for sd in spreads if sd]
        # seeds that agree exactly (often all 0) give no spread: the null is then held to a tenth of its own value
        scale = min(positive) if positive else (value["mean"] if 0.0 in spreads else None)
        target = SE_SHARE * scale if scale and not value["sanity_check"] else None
        value = draw_to_target(value, target, functools.partial(redraw, metric, config))
        met = target is not None and value["sem"] is not None and value["sem"] <= target
        for agg, pilot, *_ in cells:
            agg["chance"] = {
                "mean": value["mean"],
                "sem": value["sem"],
                "sets": value["sets"],
                "target_sem": target,
                "target_met": met if target else None,
                "sanity_check": pilot["sanity_check"],
                "basis": pilot["basis"],
            }


def chance_text(chance: Mapping[str, object] | None, scale: float = 1.0, digits: int = 3) -> str:
    """`` (chance 0.963)`` beside a measured fraction, `` (0 by construction)`` for keys on a sphere (a sanity
    check). ``chance``: a metric's :class:`NullBlock` (as :class:`normbench.archive.Metric` keeps it, a JSON
    object)."""
    null = cast("NullBlock | None", chance)
    if not null:
        return ""
    if null.get("sanity_check"):
        return " (0 by construction)"
    return f" (chance {null['mean'] * scale:.{digits}f})"
