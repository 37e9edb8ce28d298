"""A board's unselectable fractions against their random-key null, in Markdown (one row per cell)."""

from __future__ import annotations

from normbench.archive.board import Board
from normbench.archive.claim import JudgedClaim
from normbench.render.claims_view import provisional_text
from normbench.render.markdown import Lines, cell

WHERE = {"reproduced": "above chance", "not reproduced": "**below chance**", "inconclusive": "at chance"}


def num(x: float | None) -> str:
    return "–" if x is None else f"{x:.4f}"


def shortfall(claim: JudgedClaim, board: Board) -> float | None:
    """The null's target standard error where its draws stopped short of it (the work budget ran out), else None."""
    (name,) = (claim.variants or {"": ""}).values()
    variant = board.by_name.get(name)
    chance = variant.metrics[claim.metric].chance if variant and claim.metric in variant.metrics else None
    return chance["target_sem"] if chance and chance.get("target_met") is False else None


def null_cell(claim: JudgedClaim, short_of: float | None = None) -> str:
    """``mean ± SE (draws)``, and where the draws stopped short of a tenth of the seed spread (``short_of``)."""
    m = claim.measured
    text = f"{num(m.get('null'))} ± {num(m.get('null_sem'))} ({m.get('null_draws')} draws)"
    if short_of is not None:
        text += f"; SE above a tenth of the seed spread ({short_of:.1e}): the work budget ran out"
    return text


def row(claim: JudgedClaim, short_of: float | None = None) -> str:
    """One cell against its null: where it lies first (the verdict), then the numbers."""
    m, d = claim.measured, claim.difference or {}
    (name,) = (claim.variants or {"": ""}).values()
    seeds = len([v for v in (claim.per_seed or {}).get("trained") or [] if v is not None])
    interval = (
        "–"
        if d.get("estimate") is None
        else f"{d['estimate']:+.4f}" + ("" if d.get("low") is None else f" [{d['low']:+.4f}, {d['high']:+.4f}]")
    )
    where = WHERE.get(claim.verdict, claim.verdict) + provisional_text(claim)
    cells = (f"`{name}`", f"`{claim.metric}`", where, f"{num(m.get('trained'))} ({seeds} seeds)",
             null_cell(claim, short_of), interval)  # fmt: skip
    return "| " + " | ".join(cell(x) for x in cells) + " |"


def chance_rows(claims: list[JudgedClaim], short_of: list[float | None] | None = None) -> Lines:
    """The table of ``normbench.chance.*`` claims, one row per (variant, column); ``short_of``: each null's target
    standard error where its draws fell short of it."""
    return [
        f"{sum(c.verdict == 'not reproduced' for c in claims)} of {len(claims)} cells lie below chance and "
        f"{sum(c.verdict == 'reproduced' for c in claims)} above it.",
        "",
        "| variant | column | where | trained (mean) | null ± SE | trained − null [95% CI] |",
        "|---|---|---|---|---|---|",
        *(row(c, s) for c, s in zip(claims, short_of or [None] * len(claims), strict=True)),
    ]


def against_chance_table(board: Board) -> Lines:
    """The section: what the null is, then one row per (variant, column), the ``normbench.chance.*`` claims."""
    claims = board.against_chance or ()
    if not claims:
        return []
    return [
        "",
        "## Against chance",
        "",
        "Every unselectable fraction beside its null: random keys of the same count and dimension, drawn with the "
        "trained keys' own mean and covariance (by affine invariance, the i.i.d. Gaussian value in the dimensions "
        "the keys span), drawn until the null's standard error is below a tenth of the seed standard deviation. "
        "Each row is the claim `normbench.chance.<variant>.<column>`: the trained keys are unselectable more "
        "often than random keys (reproduced: above chance; not reproduced: below chance, the trained keys are "
        "*more* selectable than random keys; inconclusive: the Welch 95% interval holds the null).",
        "",
        *chance_rows(list(claims), [shortfall(c, board) for c in claims]),
    ]
