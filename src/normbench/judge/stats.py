"""Statistics over seeds (aggregates, intervals of a mean and of a difference of means) and over logged series.

Seeds are independent runs, so a variant's metric is a sample x_1..x_n. Its mean has the
t-interval x̄ ± t_{0.975, n-1} s / √n. Two variants (samples a, b) are compared with Welch's
t-test: the difference ā − b̄ has standard error √(s_a²/n_a + s_b²/n_b) and Welch–Satterthwaite
degrees of freedom; the ordering is *significant* when the 95% interval of the difference
excludes 0. Fewer than two seeds on a side give no interval (never significant). Only finite
values enter: a diverged seed's NaN or inf (``null`` in a record) is no sample point.

"As good as" is not "no significant difference": an equivalence claim declares a margin m and is
shown by two one-sided tests (TOST, Schuirmann 1987): at level alpha both H0: delta <= -m and
H0: delta >= m are rejected, i.e. the (1 - 2 alpha) = 90% interval of delta lies inside (-m, m).
"No worse than" (non-inferiority) is the one test on the worse side: the 90% interval's bound on
that side lies beyond -m. The same holds for one mean against a target value (one-sample TOST).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import cast

from scipy import stats as scipy_stats

from normbench.archive.documents.verdicts import EquivalenceDoc, GapDoc, IntervalDoc
from normbench.judge.rows import MetricRow

LEVEL = 0.95
EQUIVALENCE_LEVEL = 0.90  # TOST at alpha = 0.05: the 1 - 2 alpha interval


@dataclass(frozen=True)
class Interval:
    """An estimate with its 95% interval (``low``/``high`` are ``None`` without one)."""

    estimate: float
    low: float | None
    high: float | None
    n: tuple[int, ...]
    p_value: float | None = None
    of: tuple[str, ...] = ()  # for a difference: (first, second), the estimate is first − second
    df: float | None = None  # degrees of freedom of its t quantile (Welch-Satterthwaite for a difference)

    def contains(self, value: float) -> bool:
        return self.low is not None and self.high is not None and self.low <= value <= self.high

    def excludes_zero(self) -> bool:
        return self.low is not None and self.high is not None and (self.low > 0 or self.high < 0)

    def as_dict(self) -> IntervalDoc:
        # asdict gives the fields above, in their order: the keys of IntervalDoc
        return cast(IntervalDoc, {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()})


def finite(value: float | None) -> float | None:
    """``float(value)`` if it is a finite number, else ``None`` (NaN, ±inf and ``None`` have no value)."""
    return None if value is None or not math.isfinite(value) else float(value)


def values_of(per_seed: Sequence[float | None] | None) -> list[float]:
    """The finite values of ``per_seed`` (``None``, NaN and ±inf left out)."""
    return [v for v in map(finite, per_seed or []) if v is not None]


def mean_interval(sample: Sequence[float | None], level: float = LEVEL) -> Interval | None:
    """t-interval x̄ ± t_{(1+level)/2, n-1} s/√n of the mean of the finite values of ``sample``
    (``None`` when it has none)."""
    values = values_of(sample)
    if not values:
        return None
    mean = statistics.fmean(values)
    if len(values) < 2:
        return Interval(mean, None, None, (len(values),))
    half = scipy_stats.t.ppf(0.5 + level / 2, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return Interval(mean, mean - half, mean + half, (len(values),), df=float(len(values) - 1))


def difference_interval(
    a: Sequence[float | None], b: Sequence[float | None], names: tuple[str, str] = ("a", "b"), level: float = LEVEL
) -> Interval | None:
    """Welch interval (at ``level``) of mean(a) − mean(b) over the finite values of each side and its
    two-sided p-value (``None`` if a side has none); ``names`` label the two samples in that order."""
    values_a, values_b = values_of(a), values_of(b)
    if not values_a or not values_b:
        return None
    diff = statistics.fmean(values_a) - statistics.fmean(values_b)
    n = (len(values_a), len(values_b))
    if min(n) < 2:
        return Interval(diff, None, None, n, of=names)
    va, vb = statistics.variance(values_a) / n[0], statistics.variance(values_b) / n[1]
    se = math.sqrt(va + vb)
    if se == 0.0:  # both samples constant: the difference is exact
        return Interval(diff, diff, diff, n, 0.0 if diff else 1.0, of=names)
    df = (va + vb) ** 2 / (va**2 / (n[0] - 1) + vb**2 / (n[1] - 1))
    half = scipy_stats.t.ppf(0.5 + level / 2, df) * se
    p = 2 * scipy_stats.t.sf(abs(diff) / se, df)
    return Interval(diff, diff - half, diff + half, n, float(p), of=names, df=float(df))


def null_difference(
    sample: Sequence[float | None],
    null_mean: float,
    null_sem: float | None,
    null_draws: int,
    names: tuple[str, str] = ("trained", "null"),
    level: float = LEVEL,
) -> Interval | None:
    """Welch interval (at ``level``) of mean(sample) − a null's mean estimated from ``null_draws`` random draws with
    standard error ``null_sem``: SE = sqrt(s²/n + sem²), Welch-Satterthwaite df with n − 1 and draws − 1 (the
    normal limit where the seeds agree exactly and the null's draws are not known); its two-sided p-value. ``None``
    without a finite value; no interval with one value."""
    values = values_of(sample)
    if not values:
        return None
    diff = statistics.fmean(values) - null_mean
    n = (len(values), int(null_draws))
    if len(values) < 2:
        return Interval(diff, None, None, n, of=names)
    va, vb = statistics.variance(values) / n[0], float(null_sem or 0.0) ** 2
    se = math.sqrt(va + vb)
    if se == 0.0:
        return Interval(diff, diff, diff, n, 0.0 if diff else 1.0, of=names)
    denominator = va**2 / (n[0] - 1) + (vb**2 / (n[1] - 1) if n[1] > 1 else 0.0)
    if denominator == 0.0:  # all of the SE is the null's, whose draws are not known: its normal limit
        half = scipy_stats.norm.ppf(0.5 + level / 2) * se
        return Interval(diff, diff - half, diff + half, n, float(2 * scipy_stats.norm.sf(abs(diff) / se)), of=names)
    df = (va + vb) ** 2 / denominator
    half = scipy_stats.t.ppf(0.5 + level / 2, df) * se
    p = 2 * scipy_stats.t.sf(abs(diff) / se, df)
    return Interval(diff, diff - half, diff + half, n, float(p), of=names, df=float(df))


@dataclass(frozen=True)
class Equivalence:
    """A TOST on an estimate delta (a difference of means, or a mean minus a target) with margin m.

    ``interval``: the 90% interval of delta; ``shown``: it lies inside the margin on every side
    tested (``sides``: ``both`` for equivalence, ``lower`` for delta > -m, ``upper`` for delta < m);
    ``refuted``: it lies wholly beyond the margin on a side tested (delta significantly worse than
    the margin allows); neither: inconclusive. ``p_value``: the larger one-sided p-value.
    """

    interval: Interval
    margin: float
    sides: str
    shown: bool
    refuted: bool
    p_value: float | None

    def as_dict(self) -> EquivalenceDoc:
        return {
            "interval": self.interval.as_dict(),
            "margin": self.margin,
            "sides": self.sides,
            "shown": self.shown,
            "refuted": self.refuted,
            "p_value": self.p_value,
        }


SIDES = ("both", "lower", "upper")


def tost(interval: Interval | None, margin: float, sides: str = "both") -> Equivalence | None:
    """Decide equivalence within ``margin`` from the 90% ``interval`` of delta (see the module docstring).

    One-sided p-values: p_lower = P(T >= (delta + m) / se), p_upper = P(T <= (delta - m) / se),
    recovered from the interval (se = half-width / t_{0.95, df}). No interval (a side with fewer than
    two seeds): nothing is shown or refuted.
    """
    if sides not in SIDES:
        raise ValueError(f"rule.sides: {sides!r} is not allowed; choose one of {', '.join(SIDES)}")
    if not margin > 0:
        raise ValueError(f"rule.margin: must be a positive number, got {margin!r}")
    if interval is None:
        return None
    if interval.low is None or interval.high is None:
        return Equivalence(interval, margin, sides, False, False, None)
    lower_ok, upper_ok = interval.low > -margin, interval.high < margin
    shown = {"both": lower_ok and upper_ok, "lower": lower_ok, "upper": upper_ok}[sides]
    refuted = (sides in ("both", "lower") and interval.high < -margin) or (
        sides in ("both", "upper") and interval.low > margin
    )
    return Equivalence(interval, margin, sides, bool(shown), bool(refuted), one_sided_p(interval, margin, sides))


def one_sided_p(interval: Interval, margin: float, sides: str) -> float | None:
    """The TOST p-value: the larger of the one-sided p-values of the sides tested (``None`` without an interval)."""
    if interval.low is None or interval.high is None:
        return None
    half = (interval.high - interval.low) / 2
    if half == 0:  # constant samples: delta is exact
        inside = (interval.estimate > -margin or sides == "upper") and (interval.estimate < margin or sides == "lower")
        return 0.0 if inside else 1.0
    df = interval_df(interval)
    if df is None:
        return None
    se = half / scipy_stats.t.ppf(0.5 + EQUIVALENCE_LEVEL / 2, df)
    p_lower = float(scipy_stats.t.sf((interval.estimate + margin) / se, df))
    p_upper = float(scipy_stats.t.cdf((interval.estimate - margin) / se, df))
    return {"both": max(p_lower, p_upper), "lower": p_lower, "upper": p_upper}[sides]


def interval_df(interval: Interval) -> float | None:
    """Degrees of freedom behind an interval (n - 1 for a mean, Welch's for a difference)."""
    return interval.df


def difference_equivalence(
    candidate: Sequence[float | None],
    reference: Sequence[float | None],
    margin: float,
    sides: str = "both",
    names: tuple[str, str] = ("candidate", "reference"),
) -> Equivalence | None:
    """TOST of mean(candidate) − mean(reference) within ``margin`` (Welch 90% interval)."""
    return tost(difference_interval(candidate, reference, names, EQUIVALENCE_LEVEL), margin, sides)


def target_equivalence(sample: Sequence[float | None], target: float, margin: float) -> Equivalence | None:
    """One-sample TOST: is mean(sample) within ``margin`` of ``target``? (90% t-interval of mean − target)."""
    interval = mean_interval(sample, EQUIVALENCE_LEVEL)
    if interval is None:
        return None
    shifted = Interval(
        interval.estimate - target,
        None if interval.low is None else interval.low - target,
        None if interval.high is None else interval.high - target,
        interval.n,
        df=interval.df,
    )
    return tost(shifted, margin, "both")


def aggregate(
    values: Sequence[float | None], bounds: Sequence[float | None], counted: list[bool] | None = None
) -> MetricRow:
    """Mean x̄ = (1/n) Σ x_i ± sample std over the seeds that count (``counted``, default all: a
    diverged or failed seed does not). ``per_seed`` keeps one entry per seed, ``None`` where a seed
    has no finite value or does not count; ``n`` is the number of values the mean is over, ``seeds``
    the number of seeds. A counted seed without a value leaves no mean (a lower bound is kept
    where runs ended without reaching a threshold). Never raises on NaN, ±inf or ``None``."""
    counted = [True] * len(values) if counted is None else list(counted)
    per_seed = [finite(v) if keep else None for v, keep in zip(values, counted, strict=False)]
    bounds = [finite(b) if keep else None for b, keep in zip(bounds, counted, strict=False)]
    sample = [v for v, keep in zip(per_seed, counted, strict=False) if keep]
    out: MetricRow = {"per_seed": per_seed, "n": sum(v is not None for v in sample)}
    if len(sample) < len(values):
        out["seeds"] = len(values)
    present = [v for v in sample if v is not None]
    if sample and len(present) == len(sample):
        out["mean"] = statistics.fmean(present)
        out["std"] = statistics.stdev(present) if len(present) > 1 else 0.0
    else:
        out["mean"] = out["std"] = None
        pairs = [(v, b) for v, b, keep in zip(per_seed, bounds, counted, strict=False) if keep]
        reached = [v if v is not None else b for v, b in pairs]
        filled = [x for x in reached if x is not None]
        if pairs and len(filled) == len(pairs) and any(b is not None for _, b in pairs):
            out["lower_bound"] = statistics.fmean(filled)
            out["per_seed_lower_bound"] = [v if v is not None else b for v, b in zip(per_seed, bounds, strict=False)]
    return out


def gap(sample: Sequence[float | None], target: float) -> GapDoc | None:
    """mean − target with the 95% t-interval of the mean shifted by the target (``None`` without values)."""
    interval = mean_interval(sample)
    if interval is None:
        return None
    shift = lambda x: None if x is None else float(x) - target
    return {
        "estimate": shift(interval.estimate),
        "low": shift(interval.low),
        "high": shift(interval.high),
        "n": interval.n[0],
        "paper": target,
    }
