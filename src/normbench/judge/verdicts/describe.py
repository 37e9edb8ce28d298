"""A judged claim in words: its values per role, its per-seed values, its difference with the interval and its
source, as the boards and the cards print them (a number to 4 significant digits, ``n/a`` for none)."""

from __future__ import annotations

from collections.abc import Mapping

from normbench.formatting import significant
from normbench.judge.entries import judged_entry
from normbench.judge.verdicts.counting import reasons


def fmt_value(x: float | str | None) -> str:
    """A number to 4 significant digits, text as it is, ``n/a`` for none."""
    return str(x) if isinstance(x, str) else significant(x, 4, missing="n/a")


def describe(values: Mapping[str, float | str | None]) -> str:
    """``role: value`` per role, comma-separated (each value as :func:`fmt_value` writes it)."""
    return ", ".join(f"{k}: {fmt_value(v)}" for k, v in values.items())


def describe_seeds(per_seed: dict[str, list[float | None]]) -> str:
    """``role: v1 / v2 / v3`` per role (``–`` for a seed without a value)."""
    return "; ".join(
        f"{role}: " + " / ".join(fmt_value(v) if v is not None else "–" for v in values)
        for role, values in per_seed.items()
    )


def describe_difference(claim: Mapping[str, object]) -> str:
    """``a − b = est [low, high], p`` of a judged claim, or why there is no interval."""
    claim = judged_entry(claim)
    diff = claim.get("difference")
    if not diff:
        return "n/a"
    a, b = (list(diff.get("of") or []) + ["?", "?"])[:2]
    if diff["low"] is None:
        return f"{a} − {b} = {fmt_value(diff['estimate'])} (no interval: seeds {'/'.join(map(str, diff['n']))})"
    p = "" if diff.get("p_value") is None else f", p = {diff['p_value']:.2g}"
    return f"{a} − {b} = {fmt_value(diff['estimate'])} [{fmt_value(diff['low'])}, {fmt_value(diff['high'])}]{p}"


def source_text(claim: Mapping[str, object]) -> str:
    """A judged claim's source, then its ``why`` and ``note`` where given, as the leaderboards print it."""
    claim = judged_entry(claim)
    return claim["source"] + "".join(f" — {key}: {text}" for key, text in reasons(claim).items())
