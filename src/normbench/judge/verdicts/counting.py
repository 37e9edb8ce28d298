"""Which seeds a verdict counts, the notes a judged claim carries about them, and the fields every judged claim
opens with (shared by every rule)."""

from __future__ import annotations

from typing import TypeVar, cast

from normbench.judge.collapse import collapsed_seeds
from normbench.judge.entries import ClaimEntry, JudgedEntry, Reasons
from normbench.judge.rows import VariantRow

T = TypeVar("T")


def finished_seeds(variant: VariantRow, geometric: bool = False) -> tuple[list[bool], str]:
    """Which of a leaderboard variant's seeds a verdict counts (those that did not diverge; for a ``geometric``
    claim, on unselectable keys, neither those that collapsed: a collapsed model's keys say nothing about a
    norm), and a note naming the others, e.g. ``2 of 3 seeds; seed 1 diverged at step 40`` (``""`` when all count)."""
    seeds = list(variant.get("seeds") or [])
    diverged = variant.get("diverged_at_step") or {}
    failed = variant.get("failed") or {}
    collapsed = [s for s in collapsed_seeds(variant) if s not in diverged] if geometric else []
    keep = [str(seed) not in diverged and str(seed) not in collapsed for seed in seeds]
    if not diverged and not failed and not collapsed:
        return keep, ""
    why = [
        f"seed {seed} diverged" + (f" at step {step}" if step is not None else "") for seed, step in diverged.items()
    ]
    why += [f"seed {seed} collapsed (a collapsed model feeds no geometry claim)" for seed in collapsed]
    why += [f"seed {seed} failed" for seed in failed]
    return keep, f"{sum(keep)} of {len(seeds) + len(failed)} seeds; {', '.join(why)}"


def counted(values: list[T], keep: list[bool]) -> list[T]:
    """The entries of ``values`` (one per seed) whose seed counts; ``values`` as they are when they
    do not line up with the seeds (a leaderboard that names none)."""
    return [v for v, k in zip(values, keep, strict=False) if k] if len(values) == len(keep) else list(values)


def counted_note(notes: list[str]) -> str:
    """`` (counted: NAME: 2 of 3 seeds; seed 1 diverged at step 40)`` for the variants with seeds left out."""
    return f" (counted: {'; '.join(notes)})" if notes else ""


def reasons(claim: Reasons) -> Reasons:
    """The claim's ``why`` (the reasoning behind it) and ``note`` (what is known about its measurement), where given
    (a claims file entry or a judged claim)."""
    # the comprehension keeps the claim's own why and note, each a string: a Reasons
    return cast(Reasons, {key: claim[key] for key in ("why", "note") if claim.get(key)})


def entry_head(claim: ClaimEntry) -> JudgedEntry:
    """The fields every judged claim repeats from its claims file entry: id, owner, source, statement, metric,
    paper."""
    return {
        "id": claim["id"],
        "owner": claim["owner"],
        "source": claim["source"],
        "statement": claim.get("statement", ""),
        "metric": claim["metric"],
        "paper": claim.get("paper") or {},
    }
