"""A board judged at a shared and at tuned learning rates, in Markdown: each variant's rates, then every claim's
verdict at both side by side, then the tuned verdicts' details (:mod:`normbench.judge.tuned`)."""

from __future__ import annotations

from normbench.archive import Board, JudgedClaim
from normbench.render.claims_view import SHARED, anchor, details, key_numbers, short_verdict
from normbench.render.markdown import Lines, cell

TUNED = "tuned"


def rates_table(board: Board) -> Lines:
    """Per base variant: the shared value, the tuned one and what chose it."""
    view = board.tuned
    if not view:
        return []
    axis, best = view["axis"], "highest" if view["goal"] == "max" else "lowest"
    robust = view.get("rule") == "robust"
    lines = [
        "",
        f"## Tuned `{axis}`",
        "",
        f"Each variant is trained at the `{axis}` every variant shares ({view['shared']}) and at its own: the value "
        f"with the {best} mean `{view['metric']}` over the tuning seeds of `results/{view['choice']}/`"
        + (
            " among the values its rule keeps (none where a tuning seed diverged, failed, collapsed or stayed at "
            "chance, nor one next to such a value in the grid)"
            if robust
            else ""
        )
        + ", whose data sets this board's seeds never see.",
        "",
        f"| variant | shared `{axis}` | tuned `{axis}` | tuning seeds | `{view['metric']}` there |",
        "|---|---|---|---|---|",
    ]
    for row in view["bases"]:
        if row["chosen"] is None:
            tuned = (
                f"in progress: not chosen yet ({row['waiting']})"
                if row.get("waiting")
                else "none: every rate of its grid failed a tuning seed, or is next to one that did"
            )
            value = "–"
        else:
            tuned = row["chosen"] + (
                " (the grid's edge: a value beyond it may be better" + ("; a bound, not an optimum)" if robust else ")")
                if row["at_edge"]
                else ""
            )
            value = "–" if row["tuning_value"] is None else f"{row['tuning_value']:.3f}"
        seeds = ", ".join(row["tuning_seeds"]) or "–"
        lines.append(f"| `{row['base']}` | {view['shared']} | {cell(tuned)} | {seeds} | {value} |")
    return [*lines, ""]


def side_by_side(board: Board) -> Lines:
    """Each claim's verdict at the shared rate beside its verdict at the tuned rates, then the tuned details."""
    if not board.tuned or not board.tuned_claims:
        return []
    tuned = {c.id: c for c in board.tuned_claims}
    lines = [
        "",
        f"## Claims at the shared and the tuned `{board.tuned['axis']}`",
        "",
        "The same claims, rules and seeds; only each variant's learning rate differs. A verdict that holds at one rate "
        "and not at the other is a learning-rate effect, not a property of the norm.",
        "",
        f"| claim | whose | at the shared {board.tuned['axis']} | at the tuned {board.tuned['axis']} |",
        "|---|---|---|---|",
    ]
    for claim in board.claims:
        other = tuned.get(claim.id)
        lines.append(
            "| "
            + " | ".join(
                cell(x)
                for x in (
                    f"`{claim.id}`",
                    claim.whose,
                    f"[{short_verdict(claim)}](#{anchor(claim, SHARED)}): {key_numbers(claim)}",
                    _tuned_cell(other),
                )
            )
            + " |"
        )
    for claim in board.tuned_claims:
        lines += details(claim, TUNED)
    return lines


def _tuned_cell(claim: JudgedClaim | None) -> str:
    if claim is None:
        return "–"
    rates = ", ".join(f"{role} {rate}" for role, rate in (claim.rates or {}).items())
    text = f"[{short_verdict(claim)}](#{anchor(claim, TUNED)}): {key_numbers(claim)}"
    return text + (f" (at {rates})" if rates else "")
