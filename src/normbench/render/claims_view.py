"""The claims of a board in Markdown: a summary table (claim, whose, verdict, the key numbers, chance where it
applies), then each claim's details in a collapsible block, and the findings in words.

The summary fits a documentation column; the details (source, variants compared, the paper's values, every
seed, the interval, the rule) open under it. ``<details markdown="1">`` renders on GitHub and, with the
``md_in_html`` extension, on the documentation site.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from normbench.archive import Board, JudgedClaim
from normbench.judge.chance.board import chance_text
from normbench.judge.verdicts.describe import describe, describe_difference, describe_seeds, source_text
from normbench.render.markdown import Lines, cell

SHARED = "shared"  # the rate every variant shares, on a board judged at shared and tuned learning rates

VERDICT_WORDS = {
    "reproduced": "holds here",
    "direction only": "holds in direction only: the ordering is significant over seeds, the paper's values or its "
    "protocol are not met",
    "borderline": "sits on its margin: the interval ends within the metric's cross-platform tolerance of the margin, "
    "so another platform could decide it either way",
    "inconclusive": "cannot be decided here: the interval over seeds leaves it open",
    "not reproduced": "does not hold here: the seeds show the opposite significantly",
    "not run": "was not measured by this sweep",
}
CHANCE_WORDS = {
    "at": "does not hold here: the trained fraction is at chance, the 95% interval of trained − null holds the "
    "matched random-key null",
    "below": "does not hold here: the trained fraction lies below chance, the trained keys are more selectable than "
    "random keys of the same count and dimension",
}


def metric_names_of(claim: JudgedClaim) -> str:
    """The metric a claim reads, or each role's when they differ."""
    per_role = claim.metrics or {}
    if len(set(per_role.values())) > 1:
        return ", ".join(f"{role}: `{m}`" for role, m in per_role.items())
    return f"`{claim.metric}`" if claim.metric else ""


def verdict_label(claim: JudgedClaim) -> str:
    """The verdict as every table reads it: ``not reproduced: at chance`` where a claim that unselectable keys exist
    lies at or below its random-key null, and ``(provisional: 2 of 10 seeds)`` where it was judged on fewer finished
    seeds than its protocol declares."""
    text = claim.verdict
    position = claim.against_null.get("position") if claim.against_null else None
    if claim.verdict == "not reproduced" and position in ("at", "below"):
        text += f": {position} chance"
    return text + provisional_text(claim)


def provisional_text(claim: JudgedClaim) -> str:
    """`` (provisional: 2 of 10 seeds)`` for a verdict judged before all its declared seeds finished, else ``""``."""
    p = claim.provisional
    return f" (provisional: {p['finished']} of {p['declared']} seeds)" if p else ""


def censored_line(claim: JudgedClaim) -> str:
    """How a steps-to-threshold claim counted its seeds that never reached the threshold (``""`` where none)."""
    c = claim.censored
    if not c:
        return ""
    seeds = ", ".join(f"seed {s['seed']} (censored at step {s['at_step']:g})" for s in c["seeds"])
    with_them = c.get("with_censored")
    shown = describe_difference({"difference": with_them}) if with_them else ""
    both = f"; with them counted at their last steps (lower bounds), shown only: {shown}" if with_them else ""
    return f"{c['role']}: {seeds} never reached it within the run; judged on {c['judged_on']}{both}"


def verdict_cell(claim: JudgedClaim) -> str:
    """``**verdict**``, with the equivalence margin, a protocol not met, or the sanity-check label beside it."""
    text = f"**{verdict_label(claim)}**"
    if claim.margin is not None:
        text += f" (margin {claim.margin:g})"
    if claim.protocol and not claim.protocol["met"]:
        text += f"; not the claim's protocol ({claim.protocol['name']})"
    if claim.evidence:
        text += f"; {claim.evidence}: an identity, not evidence"
    if claim.borderline:
        text += f" (was {claim.borderline['was']}, {claim.borderline['distance']:.2g} from its margin)"
    if claim.margin_declared:
        text += f"; margin declared {claim.margin_declared}: exploratory"
    if claim.censored:
        text += (
            f"; {len(claim.censored['seeds'])} censored seed(s) of {claim.censored['role']} left out of the interval"
        )
    if claim.power and claim.power.get("detectable") is not None:
        text += f"; {detectable_text(claim.power)}"
    return text


def detectable_text(power: Mapping[str, Any]) -> str:
    """``detectable at 80% power: 0.012`` (a difference of the metric), or, where the power names what it is of (a
    stability claim's failure rate), ``a failure rate of 0.42 is found with 80% power``. ``power``: a judged claim's
    (:class:`normbench.judge.entries.Power`, as :class:`normbench.archive.JudgedClaim` keeps it, a JSON object)."""
    if power.get("of"):
        return f"a {power['of']} of {power['detectable']:.3g} is found with {power.get('level', 0.8):.0%} power"
    return f"detectable at 80% power: {power['detectable']:.3g}"


def power_text(claim: JudgedClaim) -> str:
    """How an undecided verdict leans and what its seeds could have detected (empty where nothing is known)."""
    power = claim.power or {}
    parts = []
    if power.get("leaning") and claim.verdict in ("inconclusive", "borderline"):
        parts.append(f"the point estimate leans {power['leaning']}")
    if power.get("detectable") is not None and claim.verdict in ("inconclusive", "borderline", "direction only"):
        parts.append(
            detectable_text(power)
            if power.get("of")
            else f"these seeds detect a difference of {power['detectable']:.3g} with 80% power"
        )
    return "; ".join(parts)


def describe_gaps(claim: JudgedClaim) -> str:
    """``; gap to paper: role +0.052 [0.04, 0.064]`` (mean − paper, 95% interval) for a ``values`` claim."""
    parts = []
    for role, g in (claim.gap_to_paper or {}).items():
        if not g:
            continue
        interval = "" if g["low"] is None else f" [{g['low']:+.3g}, {g['high']:+.3g}]"
        parts.append(f"{role} {g['estimate']:+.3g}{interval}")
    return f"; gap to paper (mean − paper, 95% CI): {', '.join(parts)}" if parts else ""


def whose(claim: JudgedClaim) -> str:
    """``The paper's claim`` or ``Our claim``, by the claim's owner."""
    return "The paper's claim" if claim.whose == "paper" else "Our claim"


def finding(claim: JudgedClaim) -> str:
    """One sentence per claim, generated from its verdict: whose claim, what was found, the interval."""
    statement = (claim.statement or "").rstrip(".")
    if claim.explanation:  # a claim over many cells says what it found itself
        return f"{whose(claim)} “{statement}”: **{claim.verdict}**; {claim.explanation}."
    position = claim.against_null.get("position") if claim.against_null else None
    words = VERDICT_WORDS.get(claim.verdict, claim.verdict)
    if claim.verdict == "not reproduced" and position in ("at", "below"):
        words = CHANCE_WORDS[position]
    text = f"{whose(claim)} “{statement}” {words}"
    if claim.provisional:
        text += (
            f" (provisional: judged on {claim.provisional['finished']} of the {claim.provisional['declared']} seeds "
            "its protocol declares)"
        )
    if claim.difference:
        text += f" ({describe_difference(claim.to_json())}{describe_gaps(claim)})"
    if claim.margin is not None:
        text += f", equivalence margin {claim.margin:g}"
    if claim.protocol and not claim.protocol["met"]:
        text += f"; judged on another protocol than the claim's ({', '.join(claim.protocol['differences'])})"
    if claim.evidence:
        text += f" ({claim.evidence}: an identity the code guarantees, not evidence)"
    if claim.borderline:
        text += (
            f"; it fell on the {claim.borderline['was']} side by {claim.borderline['distance']:.2g}, within the "
            f"metric's tolerance {claim.borderline['tolerance']:.2g}"
        )
    if claim.margin_declared:
        text += f"; its margin was declared {claim.margin_declared} were trained, so the verdict is exploratory"
    if claim.censored:
        text += f"; {censored_line(claim)}"
    if power := power_text(claim):
        text += f"; {power}"
    return text + "."


def key_numbers(claim: JudgedClaim) -> str:
    """The numbers a reader needs first: the explanation of a many-cell claim, else the means and the
    difference with its interval."""
    if claim.explanation:
        return claim.explanation.split("; ")[0]
    measured = describe(claim.measured)
    diff = describe_difference(claim.to_json()) if claim.difference else ""
    return "; ".join(x for x in (measured, diff) if x) or "–"


def chance_cell(claim: JudgedClaim, board: Board) -> str:
    """Each role's chance level where its metric is an unselectable fraction with one (``–`` elsewhere)."""
    by_name = {v.name: v for v in board.variants}
    parts = []
    for role, name in (claim.variants or {}).items():
        metric = (claim.metrics or {}).get(role, claim.metric or "")
        variant = by_name.get(name)
        chance = variant.metrics[metric].chance if variant and metric in variant.metrics else None
        if chance:
            parts.append(f"{role}{chance_text(chance)}")
    if claim.paper_chance:
        pc = claim.paper_chance
        nulls = "–".join(f"{r['mean']:.3f}" for r in pc["null"])
        keys = "–".join(str(n) for n in pc["n"])
        parts.append(
            f"paper's {pc['role']} {pc['paper']:.3f} is {pc['position']} chance ({nulls} at {keys} keys, d = {pc['d']})"
        )
    return "; ".join(parts) or "–"


def short_verdict(claim: JudgedClaim) -> str:
    """The verdict as the summary shows it: its margin, and whether it is exploratory or a sanity check."""
    text = f"**{verdict_label(claim)}**" + (f" (margin {claim.margin:g})" if claim.margin is not None else "")
    if claim.margin_declared:
        text += ", exploratory"
    if claim.protocol and not claim.protocol["met"]:
        text += ", not the claim's protocol"
    if claim.evidence:
        text += f", {claim.evidence}"
    return text


def anchor(claim: JudgedClaim, rate: str = "") -> str:
    """The HTML id of a claim's details block (``rate``: where a board judges each claim at two learning rates)."""
    return "claim-" + (f"{rate}-" if rate else "") + "".join(c if c.isalnum() else "-" for c in claim.id.lower())


def rates_text(claim: JudgedClaim) -> str:
    """``pre_norm = 0.003, post_norm = 0.001``: the learning rate each role was judged at (empty without rates)."""
    return ", ".join(f"{role} = {rate}" for role, rate in (claim.rates or {}).items())


def holds_text(holds_for: dict[str, bool]) -> str:
    """``any_fraction ✓, mean_fraction ✗``: where a grid claim holds."""
    return ", ".join(f"`{name}` {'✓' if ok else '✗'}" for name, ok in holds_for.items())


def measured_field(claim: JudgedClaim, seeds: str) -> tuple[str, str]:
    """The details' measured line: every seed's value, or a stability claim's failed runs per role."""
    if claim.failures:
        counts = {
            role: (sum(c["failed"] for c in cells.values()), sum(c["runs"] for c in cells.values()))
            for role, cells in claim.failures.items()
        }
        return "measured (failed runs)", ", ".join(f"{role}: {f} of {n}" for role, (f, n) in counts.items())
    return "measured (per seed)", f"{describe(claim.measured)} ({seeds})"


def null_line(claim: JudgedClaim) -> str:
    """``without_scaling − null = -0.13 [-0.15, -0.1], p = 1e-05 (null 0.3407 ± 0.0024, 131 draws): below chance``."""
    n = claim.against_null
    null = n.get("null") if n else None
    if not n or not null:
        role, metric = (n.get("role"), n.get("metric")) if n else (None, None)
        return f"{role}: no random-key null beside `{metric}`, so at most inconclusive"
    sem = "–" if null.get("sem") is None else f"{null['sem']:.2g}"
    return (
        f"{describe_difference({'difference': n['difference']})} (null {null['mean']:.4g} ± {sem}, {null.get('sets')} "
        f"draws): {n['position']} chance"
    )


def details(claim: JudgedClaim, rate: str = "") -> Lines:
    """One claim's details as a collapsible block: every field the summary leaves out (``rate``: the learning rate
    it was judged at, on a board that judges each claim at two)."""
    doc = claim.to_json()
    seeds = "; ".join(filter(None, (metric_names_of(claim), describe_seeds(claim.per_seed or {}))))
    fields = [
        ("statement", claim.statement or "–"),
        ("whose", f"{claim.whose}: {source_text(doc)}"),
        ("compares", " vs ".join(f"{r} = `{v}`" for r, v in (claim.variants or {}).items()) or "–"),
        *([("learning rates", rates_text(claim))] if claim.rates else []),
        ("paper", describe(claim.paper) or "–"),
        measured_field(claim, seeds),
        ("difference [95% CI]", (describe_difference(doc) + describe_gaps(claim)) or "–"),
        *([("chance at the paper's key counts", claim.paper_chance["text"])] if claim.paper_chance else []),
        *([("against its random-key null", null_line(claim))] if claim.against_null else []),
        *([("censored", censored_line(claim))] if claim.censored else []),
        *([("holds for", holds_text(claim.holds_for))] if isinstance(claim.holds_for, dict) else []),
        ("verdict", verdict_cell(claim)),
        ("in words", finding(claim)),
        ("rule", claim.rule),
    ]
    return [
        "",
        f'<details markdown="1" id="{anchor(claim, rate)}">',
        f"<summary><code>{claim.id}</code>"
        + (f" at the {rate} rate" if rate else "")
        + f": {verdict_label(claim)}</summary>",
        "",
        *(f"- **{name}**: {text}" for name, text in fields),
        "",
        "</details>",
    ]


def summary_rows(claims: list[JudgedClaim], board: Board | None = None, rate: str | None = None) -> Lines:
    """The summary table of ``claims`` (with a chance column where a ``board`` gives their variants), then each
    claim's details: what every claims section shows, a board's or a report's. ``rate`` names the learning rate the
    claims were judged at where a page shows them at two (their anchors then differ)."""
    chance = board is not None
    if rate is None:
        rate = SHARED if board is not None and board.tuned else ""
    lines = [
        "| claim | whose | verdict | key numbers |" + (" chance |" if chance else ""),
        "|---|---|---|---|" + ("---|" if chance else ""),
    ]
    for claim in claims:
        cells = [
            f"[`{claim.id}`](#{anchor(claim, rate)}): {claim.statement}",
            claim.whose,
            short_verdict(claim),
            key_numbers(claim),
            *([chance_cell(claim, board)] if board is not None else []),
        ]
        lines.append("| " + " | ".join(cell(x) for x in cells) + " |")
    for claim in claims:
        lines += details(claim, rate)
    return lines


INTRO = (
    "Whose: `paper` claims carry the paper's numbers; `normbench` claims are our own targets (why in the "
    "claim's details). Key numbers: the means, then the difference with its 95% Welch interval over seeds; "
    "the details under the table give every seed, the paper's values and the rule."
)


def claims_table(board: Board) -> Lines:
    """The summary table of a board's claims, then each claim's details."""
    if not board.claims:
        return []
    lines = ["", "## Claims", "", INTRO, ""]
    if board.tuned:
        lines += [
            f"Every claim is judged here at the value all variants share, `{board.tuned['axis']}` = "
            f"{board.tuned['shared']}, and again at each variant's tuned value (the next section).",
            "",
        ]
    return lines + summary_rows(list(board.claims), board)


def findings(board: Board) -> Lines:
    if not board.claims:
        return []
    return ["", "## Findings", ""] + [f"- {finding(c)}" for c in board.claims]
