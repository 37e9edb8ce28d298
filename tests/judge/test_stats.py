"""Statistics over seeds never raise on values that are not finite: NaN, ±inf and None are no sample point."""

from __future__ import annotations

import math

import pytest

from normbench.judge.stats import aggregate, difference_interval, mean_interval, values_of

NAN, INF = float("nan"), float("inf")


def test_aggregate_leaves_out_seeds_that_do_not_count_and_says_how_many_count() -> None:
    agg = aggregate([1.0, NAN, 3.0], [None] * 3, [True, False, True])  # seed 1 diverged
    assert agg["per_seed"] == [1.0, None, 3.0] and agg["n"] == 2 and agg["seeds"] == 3
    assert agg["mean"] == 2.0 and agg["std"] == pytest.approx(math.sqrt(2))
    # a diverged seed's finite value does not count either
    assert aggregate([1.0, 9.0, 3.0], [None] * 3, [True, False, True])["mean"] == 2.0
    nothing = aggregate([NAN, INF], [None, None], [False, False])
    assert nothing["mean"] is None and nothing["std"] is None and nothing["n"] == 0
    assert nothing["per_seed"] == [None, None] and "lower_bound" not in nothing


def test_aggregate_of_a_counted_seed_without_a_finite_value_has_no_mean() -> None:
    for bad in (NAN, INF, -INF, None):
        agg = aggregate([1.0, bad, 3.0], [None] * 3)
        assert agg["mean"] is None and agg["n"] == 2 and agg["per_seed"] == [1.0, None, 3.0]
    assert aggregate([], [])["mean"] is None
    # lower bounds over the counted seeds only
    partial = aggregate([100.0, None, None], [None, 500.0, NAN], [True, True, False])
    assert partial["lower_bound"] == 300.0 and partial["per_seed_lower_bound"] == [100.0, 500.0, None]


def test_intervals_use_the_finite_values_only() -> None:
    assert values_of([1.0, None, NAN, INF, 2]) == [1.0, 2.0]
    assert mean_interval([NAN, None]) is None
    one = mean_interval([2.0, NAN])
    assert one.estimate == 2.0 and one.low is None and one.n == (1,)
    assert mean_interval([1.0, 2.0, 3.0, INF]) == mean_interval([1.0, 2.0, 3.0])
    assert difference_interval([NAN, INF], [1.0, 2.0]) is None
    diff = difference_interval([1.0, 2.0, 3.0, NAN], [5.0, 6.0, 7.0, None], ("a", "b"))
    assert diff == difference_interval([1.0, 2.0, 3.0], [5.0, 6.0, 7.0], ("a", "b"))
    assert diff.estimate == -4.0 and diff.excludes_zero() and diff.n == (3, 3)


def test_a_null_difference_whose_seeds_agree_and_whose_draws_are_unknown_takes_the_normal_limit() -> None:
    """All of the SE is the null's and its draws are not known (one draw): no Welch df, the normal interval."""
    from normbench.judge.stats import null_difference

    diff = null_difference([0.0, 0.0, 0.0], 0.1, 0.01, 1)
    assert diff is not None and diff.df is None
    assert diff.estimate == pytest.approx(-0.1)
    assert diff.low == pytest.approx(-0.1 - 1.959964 * 0.01) and diff.high == pytest.approx(-0.1 + 1.959964 * 0.01)
    assert diff.p_value is not None and diff.p_value < 1e-10
    welch = null_difference([0.0, 0.01, 0.02], 0.1, 0.01, 50)
    assert welch is not None and welch.df is not None and welch.df > 2
