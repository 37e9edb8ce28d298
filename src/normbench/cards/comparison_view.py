"""A card's verdicts in Markdown: one row per metric and baseline (the verdict, new − baseline with its 95% Welch
interval, the TOST's 90% interval against ± the margin), then each test behind them in a collapsible block."""

from __future__ import annotations

from collections.abc import Sequence

from normbench.archive import JudgedClaim
from normbench.cards.verdicts import comparisons, interval_text, verdict_text
from normbench.judge.entries import JudgedEntry
from normbench.judge.verdicts.describe import describe, describe_difference, describe_seeds
from normbench.render.claims_view import anchor, detectable_text
from normbench.render.markdown import Lines, cell

TEST_WORDS = {
    "equivalence": {"reproduced": "within the margin", "not reproduced": "beyond the margin",
                    "inconclusive": "undecided", "borderline": "on the margin", "not run": "not run"},
    "ordering": {"reproduced": "the new norm better", "not reproduced": "the new norm worse",
                 "inconclusive": "undecided", "not run": "not run"},
}  # fmt: skip


def comparison_lines(claims: Sequence[JudgedEntry], rate: str = "") -> Lines:
    """The verdicts against LayerNorm and RMSNorm (:func:`normbench.cards.verdicts.compare`), one row per metric and
    baseline with its intervals, then each test behind them in a collapsible block (``rate``: ``tuned`` where the
    section's claims are judged at the tuned rates, so their anchors differ)."""
    lines = [
        "| metric | vs | verdict | new − baseline [95% CI] | TOST: 90% interval vs ± margin |",
        "|---|---|---|---|---|",
    ]
    for metric, per in comparisons(claims).items():
        for key, c in per.items():
            equivalence = c.get("equivalence")
            test = (equivalence.get("interval") if equivalence else None) or {}
            tost = "–" if test.get("low") is None else f"[{test['low']:+.3g}, {test['high']:+.3g}] vs ±{c['margin']:g}"
            head = verdict_text({**c, "difference": None})
            lines.append(
                f"| `{metric}` | {key} | **{cell(head)}** | {interval_text(c.get('difference')) or '–'} | {tost} |"
            )
    for claim in claims:
        lines += test_details(JudgedClaim.from_json(claim), rate)
    return lines


def test_details(claim: JudgedClaim, rate: str = "") -> Lines:
    """One test behind a card's verdict, in a collapsible block: what it tests, every seed, the interval, its result
    in words (within or beyond the margin; the new norm better, worse, or undecided) and its rule."""
    kind = "equivalence" if claim.margin is not None else "ordering"
    result = TEST_WORDS[kind].get(claim.verdict, claim.verdict)
    if claim.provisional:
        result += f" (provisional: {claim.provisional['finished']} of {claim.provisional['declared']} seeds)"
    power = claim.power or {}
    if power.get("detectable") is not None and claim.verdict in ("inconclusive", "borderline"):
        result += f"; {detectable_text(power)}"
    doc = claim.to_json()
    fields = [
        ("tests", claim.statement or "–"),
        ("compares", " vs ".join(f"{r} = `{v}`" for r, v in (claim.variants or {}).items()) or "–"),
        *([("learning rates", ", ".join(f"{r} = {x}" for r, x in claim.rates.items()))] if claim.rates else []),
        ("measured (per seed)", f"{describe(claim.measured)} ({describe_seeds(claim.per_seed or {})})"),
        ("difference [95% CI]", describe_difference(doc)),
        ("result", result),
        ("rule", claim.rule),
    ]
    label = "equivalence test" if kind == "equivalence" else "ordering test"
    return [
        "",
        f'<details markdown="1" id="{anchor(claim, rate)}">',
        f"<summary>{label} <code>{claim.id}</code>"
        + (f" at the {rate} rate" if rate else "")
        + f": {result}</summary>",
        "",
        *(f"- **{name}**: {text}" for name, text in fields),
        "",
        "</details>",
    ]
