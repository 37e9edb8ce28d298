"""The build a board replaces, in Markdown: each claim's gap to the paper then and now (mean − paper value, its 95%
interval over seeds), or, without such a claim, the configs it showed and those that replace them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from normbench.archive import JudgedClaim, VariantEntry
from normbench.judge.stats import gap, values_of
from normbench.render.markdown import Lines


def gap_text(g: Mapping[str, Any] | None) -> str:
    if not g:
        return "–"
    mean = g["paper"] + g["estimate"]
    interval = "" if g.get("low") is None else f" [{g['low']:+.3f}, {g['high']:+.3f}]"
    return f"{mean:.3f} ({g['estimate']:+.3f}{interval})"


def closed_text(then: Mapping[str, Any] | None, now: Mapping[str, Any] | None) -> str:
    """``yes`` when today's interval of the gap contains 0 and the earlier one did not; else how it moved."""
    if not then or not now or now.get("low") is None:
        return "–"
    if now["low"] <= 0 <= now["high"]:
        if then.get("low") is not None and then["low"] <= 0 <= then["high"]:
            return "no gap then or now: both intervals contain 0"
        return "yes: the interval now contains 0"
    smaller = abs(now["estimate"]) < abs(then["estimate"])
    return (
        f"no: {'smaller' if smaller else 'larger'} by {abs(abs(then['estimate']) - abs(now['estimate'])):.3f}, "
        f"interval excludes 0"
    )


def render_superseded(
    old: Mapping[str, Any] | None, claims: tuple[JudgedClaim, ...], variants: tuple[VariantEntry, ...] = ()
) -> Lines:
    """The build this board replaced (``supersedes``): each claim's gap to the paper then and now, or, where it
    judged no claim against a paper value, the configs it showed and those that replace them."""
    if not old:
        return []
    now = {c.id: c for c in claims}
    rows = []
    for then in old.get("claims") or []:
        for role, g in (then.get("gap_to_paper") or {}).items():
            current = now.get(then["id"])
            g_now = ((current.gap_to_paper if current else None) or {}).get(role)
            if g_now is None and current is not None and g is not None:  # a rule that records no gap of its own
                g_now = gap(values_of((current.per_seed or {}).get(role)), float(g["paper"]))
            rows.append(f"| `{then['id']}` | {role} | {gap_text(g)} | {gap_text(g_now)} | {closed_text(g, g_now)} |")
    built = f"Built {old.get('generated_at')} at commit `{(old.get('git_commit') or 'unknown')[:12]}`, {old['why']}."
    lines = ["", "## The build this one replaces", ""]
    if rows:
        return lines + [
            f"{built} Gap to the paper = mean − paper value, 95% interval over seeds.",
            "",
            "| claim | role | then: mean (gap [95% CI]) | now: mean (gap [95% CI]) | gap closed |",
            "|---|---|---|---|---|",
            *rows,
        ]
    hashes_now = {v.name: v.config_hash for v in variants}
    then = old.get("config_hashes") or {}
    lines += [f"{built} It judged no claim against a paper value, so there is no gap to compare; its configs:", ""]
    lines += ["| variant | config then | config now |", "|---|---|---|"]
    for name in sorted(set(then) | set(hashes_now)):
        lines.append(f"| `{name}` | {code_or_dash(then.get(name))} | {code_or_dash(hashes_now.get(name))} |")
    return lines


def code_or_dash(text: str | None) -> str:
    """``text`` as inline code, or "–" when there is none."""
    return f"`{text}`" if text else "–"
