"""A card's summary: one row per task and headline metric (and again at the tuned learning rates, where judged), the
three variants' values as ``mean ± std (n)`` and each verdict against a baseline, with the failed seeds said beside
them; where a task's learning-rate grid stands, said once for the row and the tuning section alike."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from normbench.cards.verdicts import BASELINES, Comparison, comparisons, verdict_text

if TYPE_CHECKING:
    from normbench.cards.document import CardSection, TuningSection
    from normbench.judge.entries import JudgedEntry
    from normbench.judge.rows import MetricRow


def fmt(m: MetricRow | None) -> str:
    """``mean ± std (n)``, both to the decimal place of the std's second significant digit (at most 10 places; a std
    of 100 or more to whole units); one seed: the mean to four significant digits, no spread; a value that is not
    finite as it is; the note where there is no mean, ``–`` without a value."""
    if not m:
        return "–"
    mean, std, n = m.get("mean"), m.get("std"), m.get("n")
    if mean is None:
        return m.get("note") or "–"
    if std is None or (n or 0) < 2:
        return f"{mean:.4g} (n = {n})"
    if not (math.isfinite(std) and math.isfinite(mean)) or abs(mean) >= 1e15:
        return f"{mean:.4g} ± {abs(std):.4g} (n = {n})"
    places = min(10, max(0, 1 - math.floor(math.log10(abs(std))))) if std else 4
    return f"{round(mean, places) or 0.0:.{places}f} ± {abs(std):.{places}f} (n = {n})"  # no "-0.000"


def summary_table(tasks: list[CardSection]) -> list[dict[str, str]]:
    """The card's summary, one row per task and headline metric (then each again at the tuned learning rates, where
    judged): the three values (``mean ± std (n)``) and, against each baseline, the comparison (:func:`verdict_text`);
    a task not run is one row saying so."""
    rows = []
    for t in tasks:
        label = t.get("label", t["task"])
        if t["status"] == "not run":
            rows.append({"task": label, "metric": "–", "new": "not run"})
            continue
        if t.get("new_seeds") == [] and not t.get("failed_seeds"):  # the baselines' runs only, so far
            rows.append(
                {"task": label, "metric": "–", "new": f"not run yet: 0 of the new norm's {len(t['seeds'])} runs"}
            )
            continue
        rows += summary_rows_at(label, "shared", t["headline"], t["claims"], t.get("failed_by_role"))
        tuning = t.get("tuning")
        if tuning and (tuned := tuning.get("tuned")):
            rows += summary_rows_at(
                label,
                "tuned",
                tuned["headline"],
                tuned["claims"],
                why=no_rate(tuning),
                by_role=tuned.get("failed_by_role"),
            )
        elif tuning:
            rows.append({"task": label, "metric": "–", "lr": "tuned", "new": waiting(tuning)})
    return rows


def grid_progress(tuning: TuningSection) -> tuple[str, str]:
    """Where a task's learning-rate grid stands, as ``(state, phrase)``: ``empty`` (no finished run), ``partial``
    (some of its runs; ``unknown`` where the planned count is not known) or ``finished``. The card's summary row and
    its tuning section both say it with this phrase, so the two never disagree."""
    grid, where = tuning.get("grid"), f"`results/{tuning['grid_board']}/`"
    if grid is None:
        return "empty", f"its learning-rate grid {where} has no finished run"
    if grid["planned"] is None:
        return "unknown", f"its learning-rate grid {where} has {grid['finished']} finished runs"
    if (grid["finished"] or 0) >= grid["planned"]:  # a board's finished runs are written with its planned ones
        return "finished", f"its learning-rate grid {where} is finished ({grid['finished']} runs)"
    new = grid.get("new")
    own = f" (the new norm's: {new['finished']} of {new['planned']})" if new and new.get("planned") else ""
    return "partial", f"its learning-rate grid {where} has {grid['finished']} of {grid['planned']} runs{own}"


def no_rate(tuning: TuningSection) -> str | None:
    """Why the new norm has no tuned rate although its grid is judged (``None`` where it has one): every seed failed
    at every rate of its grid, or none of its rates was chosen."""
    tuned = tuning.get("tuned")
    rates = (tuned.get("rates") or {}).get("new") if tuned else None
    if not tuned or (rates and rates.get("chosen") is not None):
        return None
    grid = tuning.get("grid")
    failed = ((grid.get("failed_seeds") or {}).get("new") if grid else None) or {}
    seeds = {str(s) for s in (grid.get("seeds") if grid else None) or []}
    if failed and seeds and all(set(f) >= seeds for f in failed.values()):
        return f"every seed failed at all {len(failed)} rates of its grid"
    state, phrase = grid_progress(tuning)
    if state != "finished":  # each norm is chosen on its own grid: the new norm's is not whole yet
        return f"in progress: its rate is chosen once its grid is whole ({phrase})"
    return "no rate was chosen on its grid"


def waiting(tuning: TuningSection) -> str:
    """What a task's claims at the tuned rates wait for: its learning-rate grid, or the judging seeds at the rates
    chosen on it."""
    state, phrase = grid_progress(tuning)
    if state == "finished":
        return f"not judged yet: {phrase}; the judging seeds at the chosen rates are not trained"
    return f"not judged yet: {phrase}"


def summary_rows_at(
    task: str,
    rate: str,
    headline: dict[str, dict[str, MetricRow | None]],
    claims: Sequence[JudgedEntry],
    by_role: dict[str, list[int]] | None = None,
    why: str | None = None,
) -> list[dict[str, str]]:
    """One task's summary rows at one learning rate (``rate``: ``shared`` or ``tuned``; ``task``: the section's
    label). Against each baseline the comparison as a paper's table reads it (:func:`normbench.cards.verdicts.compare`,
    :func:`verdict_text`: better, equivalent, worse or undecided, with the interval of new − baseline). ``by_role``:
    role -> [failed, seeds] where a variant (a baseline too) has failed seeds
    (:func:`normbench.cards.build.failed_counts`), said beside its value; the new norm's are said beside every verdict
    too: where they left no seed to judge it reads "worse (k of n seeds failed)", one judged on the seeds left "(k of
    n seeds failed)" after it; one left without a verdict for ``why`` reads "worse (<why>)" where every seed failed at
    every rate, else "undecided (<why>)"."""
    compared = comparisons(claims)
    failed = (by_role or {}).get("new") or (0, 0)

    def said(c: Comparison) -> str:
        if c["verdict"] == "not run" and failed[0]:
            return f"worse ({failed[0]} of {failed[1]} seeds failed: none left to judge)"
        if c["verdict"] == "not run" and why:
            return f"{'worse' if why.startswith('every seed failed') else 'undecided'} ({why})"
        return verdict_text(c) + (f" ({failed[0]} of {failed[1]} seeds failed)" if failed[0] else "")

    return [
        {
            "task": task,
            "metric": metric,
            "lr": rate,
            **{role: value_text(row.get(role), (by_role or {}).get(role)) for role in ("new", *BASELINES)},
            **{f"vs_{key}": said(compared[metric][key]) for key in BASELINES},
        }
        for metric, row in headline.items()
    ]


def value_text(row: MetricRow | None, failed: list[int] | None) -> str:
    """A variant's value (:func:`fmt`) and, where it has failed seeds (``[failed, seeds]``), "; k of n seeds failed";
    a value that is only a note (no seed finished) says why already."""
    text = fmt(row)
    if not failed or (row and row.get("mean") is None and row.get("note")):
        return text
    return f"{text}; {failed[0]} of {failed[1]} seeds failed"
