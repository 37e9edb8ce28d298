"""The nulls beside a board's columns: drawn until their standard error is a tenth of the seed spread."""

from __future__ import annotations

import math

import pytest

import normbench.judge.chance.board as board
from normbench.judge.chance.board import draw_to_target, sets_for, with_chance
from normbench.judge.chance.null import DEFAULT_SETS, chance_fraction


def test_draws_grow_until_the_null_is_a_tenth_of_the_seed_spread() -> None:
    pilot = chance_fraction(8, 64, sets=50)
    sets, met = sets_for(pilot, target_sem=pilot["sem"] / 2)
    assert met and sets == math.ceil(50 * 4)
    assert chance_fraction(8, 64, sets=sets)["sem"] < pilot["sem"] / 2 * 1.25  # sem falls as 1 / sqrt(sets)
    sets, met = sets_for(pilot, target_sem=pilot["sem"] / 1000)  # a million-fold: past the work budget
    assert not met and sets * 64 * 8 <= board.WORK_BUDGET
    assert sets_for(pilot, target_sem=None) == (50, False)


def test_a_null_is_drawn_again_when_its_first_draw_falls_short_of_the_target() -> None:
    """The sets needed are predicted from the pilot's estimated standard error; a draw that still misses the target
    is drawn again, and whether the target is met is the final draw's own standard error, not the prediction."""
    pilot = chance_fraction(8, 64, sets=50)
    target = pilot["sem"] / 2
    draws: list[int] = []

    def draw(*, sets: int) -> dict:
        draws.append(sets)
        sem = target * 1.1 if len(draws) == 1 else target * 0.9  # the first draw misses by 10%
        return {**pilot, "sets": sets, "sem": sem}

    final = draw_to_target(pilot, target, draw)
    assert len(draws) == 2 and draws[1] > draws[0] and final["sem"] <= target
    assert draw_to_target(pilot, None, draw) is pilot  # no target: the pilot stands
    assert draw_to_target(pilot, pilot["sem"] * 2, draw) is pilot  # met already: nothing drawn


def test_with_chance_shares_one_null_across_columns_and_meets_the_smallest_spread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(board, "WORK_BUDGET", 1_600_000)  # a tenth of the budget: the target is still out of reach
    _, runs = plan_runs_lm()
    config = runs[0].config
    agg = {"per_seed": [0.30, 0.31, 0.32]}  # seed sd 0.01: the null's SE must fall below 0.001
    tight = {"per_seed": [0.300, 0.3005, 0.301]}  # sd 0.0005: below the budget at n = 64, d = 7
    variants = [{"name": "pre/project", "metrics": {"unselectable_after_L1": dict(agg),
                                                    "unselectable_after_L2": dict(tight)}}]  # fmt: skip
    with_chance(variants, {"pre/project": config})
    l1, l2 = (variants[0]["metrics"][f"unselectable_after_L{i}"]["chance"] for i in (1, 2))
    assert l1["mean"] == l2["mean"] and l1["sets"] == l2["sets"] > DEFAULT_SETS
    assert l1["target_sem"] == pytest.approx(0.1 * 0.0005) and l1["sem"] <= 0.001
    assert l1["basis"] != l2["basis"]  # each column says which layer's keys it is


def plan_runs_lm():
    from normbench.sweep.plan import plan_runs

    return plan_runs(
        "lm", "quick", seeds=[0], variants=["pre/project"], overrides=["data.init_args.analysis_length=64"]
    )
