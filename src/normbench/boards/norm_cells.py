"""A cell of the norm leaderboard: a norm's per-seed values at one rate, and its standing against the best complete
cell b (the best mean among the cells with all n declared seeds and no seed without a value):

* ``best`` (``best so far`` while other cells are in progress; ``the only complete cell`` alone);
* ``tied`` when the TOST of mean − mean_b lies within ± the margin (90% Welch interval inside it);
* ``worse`` when the 95% Welch interval of the difference excludes 0 on the worse side; ``undecided`` otherwise;
* ``in progress k of n`` while fewer than the declared seeds have finished (no standing: a cell is never judged on
  fewer seeds than declared).

The smallest difference n seeds resolve: the 95% half-width t_{0.975, 2n-2} s_p sqrt(2/n) of a difference between two
cells, s_p the pooled seed spread of the complete cells.
"""

from __future__ import annotations

import math
import statistics
from typing import TYPE_CHECKING, TypedDict, cast

from scipy import stats as scipy_stats

from normbench.archive import VariantEntry
from normbench.judge.stats import difference_equivalence, difference_interval, mean_interval, values_of

if TYPE_CHECKING:  # Python 3.11's; the annotations are never evaluated (``from __future__ import annotations``)
    from typing import NotRequired


class VsBest(TypedDict):
    """A cell against the best complete cell of its column: ``difference`` (mean − mean_b) with its 95% Welch
    interval (``low``, ``high``) and ``p_value``; ``equivalent``: the TOST puts it within ± the margin."""

    difference: float | None
    low: float | None
    high: float | None
    p_value: float | None
    equivalent: bool


class NormCell(TypedDict):
    """A norm's cell at one rate (``results/norms.json``: ``tasks[].norms[].tuned`` and ``.shared``).

    ``seeds``: the finished seeds, ``per_seed``: each one's value of the task's metric (``None``: none), ``finished``
    of ``declared``, ``failed``: the seeds diverged, collapsed or failed; ``mean`` with its 95% interval ``low``,
    ``high``; ``config_hash``: its runs'. Where it was read from: ``board``, ``rate`` (the learning rate) and
    ``variant`` (the board's row); ``at_edge``: the tuned rate sits at the grid's edge; ``waiting``: why its rate is
    not final yet; ``no_rate``: no rate was chosen. ``standing`` against the best complete cell, ``vs_best``: the
    difference to it (:func:`standings`).
    """

    seeds: list[int]
    per_seed: list[float | None]
    finished: int
    declared: int
    failed: list[str]
    mean: NotRequired[float | None]
    low: NotRequired[float | None]
    high: NotRequired[float | None]
    config_hash: NotRequired[str | None]
    waiting: NotRequired[str]
    no_rate: NotRequired[bool]
    board: NotRequired[str | None]
    rate: NotRequired[str | None]
    variant: NotRequired[str | None]
    at_edge: NotRequired[bool]
    vs_best: NotRequired[VsBest | None]
    standing: NotRequired[str]


def seed_cell(entry: VariantEntry | None, metric: str, declared: int) -> NormCell:
    """A variant's cell at one rate: per-seed values of ``metric``, mean, 95% interval, finished and failed seeds."""
    if entry is None or metric not in entry.metrics:
        return {"finished": 0, "declared": declared, "failed": [], "per_seed": [], "seeds": []}
    m = entry.metrics[metric]
    failed = sorted({*(entry.collapsed or []), *map(str, entry.diverged_at_step or {}), *map(str, entry.failed or {})})
    interval = mean_interval(list(m.per_seed))
    return {
        "seeds": list(entry.seeds),
        "per_seed": list(m.per_seed),
        "finished": len(entry.seeds),
        "declared": declared,
        "failed": failed,
        "mean": None if interval is None else interval.estimate,
        "low": None if interval is None else interval.low,
        "high": None if interval is None else interval.high,
        "config_hash": entry.config_hash,
    }


def complete(cell: NormCell) -> bool:
    """All declared seeds finished, each with a value (a diverged seed has none: its cell cannot be the best)."""
    enough = cell["finished"] >= cell["declared"] > 0 and len(values_of(cell["per_seed"])) == cell["declared"]
    return enough and not cell.get("waiting") and not cell.get("no_rate")


def standings(cells: list[NormCell], better: str, margin: float) -> None:
    """Set each cell's ``standing`` (and ``vs_best``: the difference's intervals) against the best complete cell."""
    sign = 1.0 if better == "higher" else -1.0
    ready = [c for c in cells if complete(c)]
    # a complete cell has a mean: each of its declared seeds has a finite value
    best = max(ready, key=lambda c: sign * cast(float, c["mean"])) if ready else None
    for cell in cells:
        if cell.get("no_rate"):
            cell["standing"] = "failed: no rate chosen"
            continue
        if cell.get("waiting"):  # the rate it was judged at is not today's final choice: no standing yet
            cell["standing"] = f"in progress: {cell['waiting']}"
            continue
        if cell["finished"] < cell["declared"]:
            cell["standing"] = f"in progress {cell['finished']} of {cell['declared']}"
            continue
        without = cell["declared"] - len(values_of(cell["per_seed"]))
        if without:  # a seed that diverged or failed has no value: the norm failed there (AlgoPerf: a miss)
            cell["standing"] = f"failed: {without} of {cell['declared']} seeds"
            continue
        if best is None or cell is best:
            pending = sum(1 for c in cells if c["finished"] < c["declared"])
            alone = len(ready) == 1
            cell["standing"] = (
                "undecided"
                if cell is not best
                else "the only complete cell"
                if alone
                else f"best so far ({pending} in progress)"
                if pending
                else "best"
            )
            continue
        diff = difference_interval(cell["per_seed"], best["per_seed"], ("norm", "best"))
        tost = difference_equivalence(cell["per_seed"], best["per_seed"], margin, names=("norm", "best"))
        cell["vs_best"] = {
            "difference": None if diff is None else diff.estimate,
            "low": None if diff is None else diff.low,
            "high": None if diff is None else diff.high,
            "p_value": None if diff is None else diff.p_value,
            "equivalent": bool(tost and tost.shown),
        }
        worse_side = diff is not None and diff.excludes_zero() and sign * diff.estimate < 0
        if tost is not None and tost.shown:
            cell["standing"] = "tied"
        elif worse_side:
            cell["standing"] = "worse"
        else:
            cell["standing"] = "undecided"


def resolution(cells: list[NormCell], n: int) -> float | None:
    """The smallest difference n seeds resolve: t_{0.975, 2n-2} s_p sqrt(2/n), s_p pooled over the complete cells."""
    spreads = [statistics.variance(values_of(c["per_seed"])) for c in cells if complete(c) and n > 1]
    if not spreads:
        return None
    pooled = math.sqrt(statistics.fmean(spreads))
    return float(scipy_stats.t.ppf(0.975, 2 * n - 2) * pooled * math.sqrt(2 / n))
