"""Two variants of a leaderboard side by side, one row per metric, with the difference of their means b − a, its 95%
Welch interval and p-value (:func:`compare`), and that table for a terminal (:func:`format_comparison`)."""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Iterable, Sequence
from typing import TypedDict

import pandas as pd

from normbench.formatting import significant
from normbench.judge.stats import LEVEL, difference_interval
from normbench.results.tables import ID_COLUMNS, Source, load

#: the columns of :func:`compare` (one row per metric); ``diff`` is mean(b) − mean(a)
COMPARE_COLUMNS = (
    "mean_a",
    "std_a",
    "n_a",
    "mean_b",
    "std_b",
    "n_b",
    "diff",
    "ci_low",
    "ci_high",
    "p_value",
    "significant",
)


class ComparisonRow(TypedDict):
    """One metric's row of :func:`compare` (the columns of ``COMPARE_COLUMNS``): each variant's mean, sample standard
    deviation and seed count, the difference mean(b) − mean(a) with its interval and p-value (NaN where it cannot be
    computed), and whether the interval excludes zero."""

    mean_a: float
    std_a: float
    n_a: int
    mean_b: float
    std_b: float
    n_b: int
    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    significant: bool


def _describe(sample: Sequence[float]) -> tuple[float, float, int]:
    mean = statistics.fmean(sample) if sample else math.nan
    std = statistics.stdev(sample) if len(sample) > 1 else math.nan
    return mean, std, len(sample)


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def compare(
    source: Source | pd.DataFrame,
    a: str,
    b: str,
    name: str | None = None,
    results_dir: str | os.PathLike[str] = "results",
    metrics: str | Iterable[str] | None = None,
) -> pd.DataFrame:
    """Variants ``a`` and ``b`` side by side, one row per metric; the difference is **b − a** (``a`` is
    the reference: a positive ``diff`` means ``b`` is higher).

    ``source``, ``name`` and ``results_dir`` are as for :func:`load` (``source`` may also be a DataFrame
    that :func:`load` returned); ``metrics`` picks metrics (default: all, in the leaderboard's order).

    Returns a DataFrame indexed by ``metric`` with the columns ``mean_a``, ``std_a``, ``n_a``, ``mean_b``,
    ``std_b``, ``n_b`` (mean, sample std and count over the seeds that have a value; flagged seeds count,
    as in the leaderboard's verdicts), ``diff`` = mean_b − mean_a with its 95% Welch interval ``ci_low``,
    ``ci_high`` and two-sided ``p_value`` (from :func:`normbench.judge.stats.difference_interval`),
    and ``significant`` (the interval excludes 0). NaN where not computable: a mean without values, a std
    or an interval with fewer than two values on a side. ``attrs`` holds ``a``, ``b``,
    ``difference`` (``"b - a"``), ``level`` (0.95) and the provenance of :func:`load`.

    Raises ``ValueError`` with a one-line message for a variant or metric the leaderboard lacks."""
    df = source if isinstance(source, pd.DataFrame) else load(source, name, results_dir)
    variants = list(df.attrs.get("variants") or dict.fromkeys(df["variant"]))
    where = df.attrs.get("source", "the leaderboard")
    for arg, variant in (("a", a), ("b", b)):
        if variant not in variants:
            raise ValueError(f"{arg}: no variant {variant!r} in {where}; variants: {', '.join(variants)}")
    known = list(df.attrs.get("metrics") or [c for c in df.columns if c not in ID_COLUMNS])
    chosen = known if metrics is None else [metrics] if isinstance(metrics, str) else list(metrics)
    unknown = [m for m in chosen if m not in known]
    if unknown:
        raise ValueError(f"metrics: no metric {', '.join(map(repr, unknown))} in {where}; metrics: {', '.join(known)}")
    rows: dict[str, ComparisonRow] = {}
    for m in chosen:
        sa = df.loc[df["variant"] == a, m].dropna().astype(float).tolist()
        sb = df.loc[df["variant"] == b, m].dropna().astype(float).tolist()
        (mean_a, std_a, n_a), (mean_b, std_b, n_b) = _describe(sa), _describe(sb)
        iv = difference_interval(sb, sa, (b, a))
        rows[m] = {
            "mean_a": mean_a,
            "std_a": std_a,
            "n_a": n_a,
            "mean_b": mean_b,
            "std_b": std_b,
            "n_b": n_b,
            "diff": _nan(iv.estimate) if iv else math.nan,
            "ci_low": _nan(iv.low) if iv else math.nan,
            "ci_high": _nan(iv.high) if iv else math.nan,
            "p_value": _nan(iv.p_value) if iv else math.nan,
            "significant": bool(iv and iv.excludes_zero()),
        }
    out = pd.DataFrame.from_dict(rows, orient="index", columns=list(COMPARE_COLUMNS))
    out = out.astype({"n_a": "int64", "n_b": "int64", "significant": bool}) if rows else out
    out.index.name = "metric"
    out.attrs.update({k: v for k, v in df.attrs.items() if k not in ("metrics", "variants")})
    out.attrs.update({"a": a, "b": b, "difference": "b - a", "level": LEVEL})
    return out


def _fmt(value: float, digits: int = 4) -> str:
    """A cell of the terminal table: :func:`~normbench.formatting.number` to ``digits`` significant digits, ``-``
    where NaN (not computable)."""
    return significant(None if math.isnan(value) else value, digits, missing="-")


def _side(mean: float, std: float, n: int) -> str:
    return f"{_fmt(mean)} ± {_fmt(std)} ({int(n)})" if not math.isnan(mean) else f"- ({int(n)})"


def format_comparison(df: pd.DataFrame, a: str, b: str) -> str:
    """A plain-text table of a :func:`compare` result for the terminal: a header naming the leaderboard,
    ``a``, ``b`` and the direction of the difference (b - a), then one line per metric with each
    variant's mean ± std (n), the difference, its 95% interval and p-value (``*``: the interval excludes
    0; ``-``: not computable). Metrics neither variant measured are named in one closing line instead.
    Returns the text without a trailing newline."""
    where = " ".join(
        filter(
            None, [str(df.attrs.get("task") or ""), f"(preset {df.attrs['preset']})" if df.attrs.get("preset") else ""]
        )
    )
    level = int(round(100 * float(df.attrs.get("level", LEVEL))))
    head = [
        f"{where + ': ' if where else ''}b - a, where a = {a}, b = {b}",
        f"difference b - a with its {level}% Welch interval over seeds; * = interval excludes 0",
    ]
    if df.attrs.get("source"):
        head.append(f"source: {df.attrs['source']}")
    table = [["metric", "a: mean ± std (n)", "b: mean ± std (n)", "b - a", f"{level}% interval", "p"]]
    unmeasured = [str(m) for m, r in df.iterrows() if not r["n_a"] and not r["n_b"]]
    for metric, r in df.iterrows():
        if str(metric) in unmeasured:
            continue
        interval = f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]" if not math.isnan(r["ci_low"]) else "-"
        p = _fmt(r["p_value"], 3) + ("*" if r["significant"] else "")
        table.append(
            [
                str(metric),
                _side(r["mean_a"], r["std_a"], r["n_a"]),
                _side(r["mean_b"], r["std_b"], r["n_b"]),
                _fmt(r["diff"]),
                interval,
                p,
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=False))
        ).rstrip()
        for row in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    tail = ["", f"not measured by either: {', '.join(unmeasured)}"] if unmeasured else []
    return "\n".join([*head, "", *lines, *tail])
