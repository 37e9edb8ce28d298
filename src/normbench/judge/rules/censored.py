"""Seeds that never reached a threshold within their run (a steps-to-threshold metric): each is censored at its
run's last step, a lower bound. A verdict is judged on the seeds that reached it (a subset that can only understate
the censored role's steps); the interval with the censored seeds at their last steps is shown beside it, never
judged (read by the ``ratio`` and ``ordering`` rules)."""

from __future__ import annotations

from normbench.judge.entries import Censored, CensoredSeed
from normbench.judge.stats import Interval, finite
from normbench.judge.verdicts.describe import describe_difference


def censored_seeds(
    role: str, per_seed: dict[str, list[float | None]], bounds: dict[str, list[float | None]],
    seeds: dict[str, list[int]] | None = None,
) -> list[CensoredSeed]:  # fmt: skip
    """The seeds of ``role`` that never reached the threshold within the run: ``[{seed, at_step}]``, ``at_step`` the
    run's last step (where the seed is censored); a seed is named by its position where no seed ids line up."""
    values, lower = per_seed.get(role) or [], bounds.get(role) or []
    ids = (seeds or {}).get(role) or []
    ids = ids if len(ids) == len(values) else list(range(len(values)))
    return [
        {"seed": s, "at_step": b}
        for v, b, s in zip(values, lower, ids, strict=False)
        if finite(v) is None and finite(b) is not None
    ]


def censored_entry(role: str, censored: list[CensoredSeed], reached: int, with_censored: Interval | None) -> Censored:
    """The judged claim's ``censored`` field: the role, its censored seeds, the seeds the verdict is judged on and the
    interval with the censored seeds at their last steps (shown only)."""
    return {
        "role": role,
        "seeds": censored,
        "judged_on": f"the {reached} seeds of {role} that reached it",
        "with_censored": with_censored.as_dict() if with_censored else None,
    }


def censored_text(role: str, censored: list[CensoredSeed], reached: int, with_censored: Interval | None) -> str:
    """How a steps-to-threshold claim counted the seeds that never reached it: which seed, censored at which step, the
    interval of the seeds that reached it (the verdict's) and the one with the censored seeds at their last steps
    (lower bounds), shown only."""
    named = ", ".join(f"seed {c['seed']}" for c in censored)
    steps = sorted({f"{c['at_step']:g}" for c in censored})
    both = "" if with_censored is None else f": {describe_difference({'difference': with_censored.as_dict()})}"
    return (
        f" ({role}: {named} never reached it within the run, counted as censored at step {' / '.join(steps)}; the "
        f"interval and the verdict are of the {reached} seed{'s' if reached != 1 else ''} that reached it, a subset "
        f"that can only understate {role}'s steps; with the censored seeds counted at their last steps (lower "
        f"bounds){both}, shown, not judged)"
    )
