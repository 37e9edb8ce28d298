"""The ``grid`` rule of a random-grid board: a statistic of the unselectable keys reduced (min, max or mean) over
the grid's cells with d and n in the declared ranges, held to a bound (``at_least`` or ``at_most``); measured on
both statistics, judged on the one the rule names."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from normbench.analysis.random_grid import RandomGrid
from normbench.judge.entries import ClaimEntry, JudgedEntry
from normbench.judge.verdicts.counting import reasons


def judge_grid(claim: ClaimEntry, grid: RandomGrid) -> JudgedEntry:
    """Verdict of a ``grid`` rule on a random-grid result, measured on both statistics."""
    rule = claim["rule"]
    ds, ns = np.asarray(grid["ds"]), np.asarray(grid["ns"])
    rows = (ds >= rule["d"][0]) & (ds <= rule["d"][1])
    cols = (ns >= rule["n"][0]) & (ns <= rule["n"][1])
    reducers: dict[str, Callable[..., Any]] = {"min": np.min, "max": np.max, "mean": np.mean}
    reduce = reducers[rule["reduce"]]
    text0 = f"no cell of the grid has d in {rule['d']} and n in {rule['n']}"
    if not rows.any() or not cols.any():
        return {
            "id": claim["id"],
            "owner": claim["owner"],
            "source": claim["source"],
            "statement": claim["statement"],
            "paper": {},
            "measured": {"any_fraction": None, "mean_fraction": None},
            "holds_for": {"any_fraction": False, "mean_fraction": False},
            "verdict": "not run",
            "rule": text0,
        }
    measured = {
        stat: float(reduce(np.asarray(values)[np.ix_(rows, cols)]))
        for stat, values in grid["stats"][rule["keys"]].items()
    }
    bound = ("at_least", rule["at_least"]) if "at_least" in rule else ("at_most", rule["at_most"])
    holds = {stat: (v >= bound[1]) if bound[0] == "at_least" else (v <= bound[1]) for stat, v in measured.items()}
    text = (
        f"{rule['reduce']} of {rule['stat']} over {rule['keys']} keys, d in [{rule['d'][0]}, {rule['d'][1]}], "
        f"n in [{rule['n'][0]}, {rule['n'][1]}]; reproduced if {'>=' if bound[0] == 'at_least' else '<='} {bound[1]:g}"
    )
    return {
        "id": claim["id"],
        "owner": claim["owner"],
        "source": claim["source"],
        "statement": claim["statement"],
        **reasons(claim),
        "paper": {bound[0]: bound[1]},
        "measured": measured,
        "holds_for": holds,
        "verdict": "reproduced" if holds[rule["stat"]] else "not reproduced",
        "rule": text,
    }
