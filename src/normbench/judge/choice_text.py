"""The choice document in words: the Markdown of the tuning budget, the rule and the grid with every value's
mean ± std and flagged seeds, and per base variant the sentence saying which value is chosen (or leads so far) and
why, what the rule excluded, where the value lies on the grid's edge and what a choice short of its budget waits for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from normbench.judge.choice import RULES, ChoiceDoc, ChoiceGroup, choice_doc, coordinates, edges, flagged, sort_key
from normbench.judge.rows import MetricRow


def _mean_std(m: MetricRow) -> str:
    """``mean ± std``; the mean alone where one seed has a value (its std is not a spread)."""
    if m.get("mean") is None:
        return "–"
    one_seed = m.get("n") is not None and m["n"] < 2
    return f"{m['mean']:.3f} ± {m['std']:.3f}" if m.get("std") is not None and not one_seed else f"{m['mean']:.3f}"


def seed_span(seeds: list[str]) -> str:
    """``100-102`` for consecutive seeds, else ``100, 105``."""
    numbers = sorted(int(s) for s in seeds)
    if len(numbers) > 2 and numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"{numbers[0]}-{numbers[-1]}"
    return ", ".join(map(str, numbers))


def waiting_text(group: ChoiceGroup, choice: ChoiceDoc) -> str:
    """``waiting for tuning seed 102 (at every value; the budget: seeds 100-102, at least 3 per value)``: what a group
    short of the tuning budget waits for (``""``: nothing)."""
    missing = group.get("missing") or []
    if not missing:
        return ""
    lacking = sorted({s for m in missing for s in m["lacking"]}, key=int)
    values = [m["value"] for m in missing]
    grid = {r["value"] for r in group["rows"]} | set(values)
    where = "every value" if set(values) >= grid else ", ".join(values)
    what = (
        f"tuning seed{'s' if len(lacking) > 1 else ''} {', '.join(lacking)}"
        if lacking
        else f"{choice.get('min_seeds', 1)} tuning seeds per value"
    )
    declared = choice.get("seeds")
    said = f"seeds {seed_span(declared)}, " if declared else ""
    return f"waiting for {what} (at {where}; the budget: {said}at least {choice.get('min_seeds', 1)} per value)"


def render_choice(choice: Mapping[str, object] | None, complete: bool = True) -> list[str]:
    """Markdown of the choice document (a board's ``choice``): the tuning budget and rule, the grid with every value's
    mean ± std, every value the rule excludes and why, and the value chosen (with the grid not ``complete``, or a
    group short of its tuning seeds: the value leading so far, since the choice is made once on the whole budget)."""
    choice = choice_doc(choice)
    if not choice:
        return []
    axis, metric, best = choice["axis"], choice["metric"], "lowest" if choice["goal"] == "min" else "highest"
    report = choice["report"]
    rule = choice.get("rule", "stable")
    groups = choice["groups"]
    final = complete and all(g.get("final", True) for g in groups)
    shown = f"; {', '.join(f'`{r}`' for r in report)} beside it" if report else ""
    if rule == "robust":
        intro = (
            f"The grid of `{axis}` per base variant, mean ± std over seeds. Chosen: the value with the {best} mean "
            f"`{metric}` among those the rule keeps{shown}. Rule `robust`, the same for every variant: {RULES[rule]}. "
            "Flagged: seeds that diverged, failed, collapsed or stayed at chance (kept in the means); *excluded*: a "
            "value the rule rules out, each listed below with why."
        )
    else:
        intro = (
            f"The grid of `{axis}` per base variant, mean ± std over seeds. Chosen: the value with the {best} mean "
            f"`{metric}`{shown}. Flagged: seeds that diverged or failed (their value cannot be chosen: it is unstable "
            "there, whatever the other seeds' mean) and seeds collapsed or at chance (kept in the means)."
        )
    lines = [f"## Choice of `{axis}`", "", intro, ""]
    if choice.get("seeds") or choice.get("min_seeds", 1) > 1:
        values = sorted({r["value"] for g in groups for r in g["rows"]}, key=sort_key)
        grid = f"{len(values)} values of `{axis}` ({values[0]} to {values[-1]})" if values else f"the `{axis}` grid"
        # the declared seeds, read where there are some
        seeds = f"tuning seeds {seed_span(cast('list[str]', choice['seeds']))}, " if choice.get("seeds") else ""
        lines += [
            f"Tuning budget (declared once by the task, the same for every variant): {grid}, {seeds}at least "
            f"{choice.get('min_seeds', 1)} per value, the {best} mean `{metric}`, rule `{rule}`.",
            "",
        ]
    if not complete:
        lines += [
            "**The grid is not finished: nothing is chosen yet.** *Leading* marks the best value among the runs "
            "finished so far; the choice is made once, on the whole grid, and boards judged at the chosen "
            "values wait for it.",
            "",
        ]
    elif not final:
        lines += [
            "**The tuning budget is not spent yet: nothing is chosen.** A value is chosen once every grid value has "
            "runs of every declared tuning seed; *leading* marks the best value the rule keeps among the runs so far, "
            "and boards judged at the chosen values wait for it (those published before stand until then).",
            "",
        ]
    mark = "chosen" if final else "leading"
    lines += [
        f"| variant | {axis} | seeds | {metric} | " + "".join(f"{r} | " for r in report) + f"flagged | {mark} |",
        "|---|---|---|---|" + "---|" * len(report) + "---|---|",
    ]
    for group in groups:
        done = complete and group.get("final", True)
        out = {e["value"] for e in group.get("excluded") or []} if rule == "robust" else set()
        for r in group["rows"]:
            chosen = (
                f"**{'chosen' if done else 'leading'}**"
                if r["value"] == group["chosen"]
                else ("excluded" if r["value"] in out else "")
            )
            lines.append(
                f"| `{group['base']}` | {r['value']} | {len(r['seeds'])} | {_mean_std(r['metric'])} | "
                + "".join(f"{_mean_std(r['report'][x])} | " for x in report)
                + f"{flagged(r)} | {chosen} |"
            )
    lines.append("")
    for group in groups:
        lines.append(_group_line(choice, group, complete and group.get("final", True)))
    return [*lines, ""]


def _group_line(choice: ChoiceDoc, group: ChoiceGroup, done: bool) -> str:
    """The bullet of one base: its chosen (or leading) value and why, what the rule excluded, what it waits for."""
    axis, metric, best = choice["axis"], choice["metric"], "lowest" if choice["goal"] == "min" else "highest"
    rule = choice.get("rule", "stable")
    unstable = group.get("unstable") or []
    excluded = group.get("excluded") or []
    listed = ""
    if rule == "robust" and excluded:
        listed = " Excluded: " + "; ".join(f"{e['value']} ({e['why']})" for e in excluded) + "."
    waiting = waiting_text(group, choice)
    waits = f" Not final: {waiting}." if waiting else ""
    if group["chosen"] is None:
        if (
            rule == "robust"
            and excluded
            and all(
                r["value"] in {e["value"] for e in excluded}
                for r in group["rows"]
                if r["metric"].get("mean") is not None
            )
        ):
            why = "the rule excludes every value trained"
        elif unstable and all(r["value"] in unstable for r in group["rows"] if r["metric"].get("mean") is not None):
            why = f"a seed diverged or failed at every value trained: {', '.join(unstable)}"
        else:
            why = ("only one value has" if group.get("measured") == 1 else "no value has") + (
                f" a mean `{metric}`; the grid is not trained yet"
            )
        return f"- `{group['base']}`: no `{axis}` chosen ({why}).{listed}{waits}"
    row = next(r for r in group["rows"] if r["value"] == group["chosen"])
    edge = _edge_text(group, done, rule == "robust") if group.get("at_edge") else ""
    sign = 1.0 if choice["goal"] == "min" else -1.0
    # a row's mean, read where it has one (the chosen row has)
    better = lambda r: (
        r["metric"].get("mean") is not None
        and sign * cast(float, r["metric"]["mean"]) < sign * cast(float, row["metric"]["mean"])
    )  # noqa: E731
    if rule == "robust":
        excluded_why = {e["value"]: e["why"] for e in excluded}
        passed = [r for r in group["rows"] if r["value"] in excluded_why and better(r)]
        ruled_out = "".join(
            f" {r['value']} had a {'lower' if sign > 0 else 'higher'} mean ({_mean_std(r['metric'])}) but is "
            f"excluded ({excluded_why[r['value']]})."
            for r in passed
        )
        kept = "of the values the rule keeps"
    else:
        passed = [r for r in group["rows"] if r["value"] in unstable and better(r)]
        ruled_out = "".join(
            f" {r['value']} had a {'lower' if sign > 0 else 'higher'} mean over its other seeds "
            f"({_mean_std(r['metric'])}) but is unstable there ({flagged(r, collapsed=False)})."
            for r in passed
        )
        kept = "of the values where no seed diverged or failed"
    return (
        f"- `{group['base']}`: `{axis}` = {group['chosen']}{'' if done else ' leads so far'} "
        f"({best} mean `{metric}` {kept}, {_mean_std(row['metric'])}; variant `{group['chosen_variant']}`)."
        f"{edge}{ruled_out}{listed}{waits}"
    )


BOUND = (
    " Read it as a bound, not an optimum: the best value may lie beyond the grid, so the verdicts judged at it may "
    "understate the variant; widening the grid past it settles the choice."
)


def _edge_text(group: ChoiceGroup, complete: bool, bound: bool = False) -> str:
    """A sentence saying where the chosen value lies on the grid's edge (:func:`edges`); ``bound`` (a tuning budget's
    grid): and how to read it."""
    read = BOUND if bound else ""
    at = edges(cast(str, group["chosen"]), group["rows"])  # the group has chosen a value
    width = len((coordinates(group["rows"]) or [(0.0,)])[0])
    if width == 1:
        end = at[0][1] if at else "largest"
        return (
            f" It is the grid's {end} value: a value beyond the grid may be better.{read}"
            if complete
            else f" It is the {end} value trained so far."
        )
    ends = {end: [k for k, e in at if e == end] for end in ("smallest", "largest")}
    where = "; ".join(
        f"the {end} in every key" if len(keys) == width else f"its value {k + 1} of {width} is the {end}"
        for end, keys in ends.items()
        for k in (keys[:1] if len(keys) == width else keys)
    )
    return f" It lies on the grid's edge ({where}{' of the grid' if complete else ' trained so far'})" + (
        f": a value beyond the grid may be better.{read}" if complete else "."
    )
