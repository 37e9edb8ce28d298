"""``card.md``: a report card in Markdown, every section from the card's JSON alone.

Order: the summary across tasks, the norm's measured facts and speed, one section per task (its headline metrics,
the verdicts against LayerNorm and RMSNorm with their details, thresholds, failed seeds, the query angle, the
unselectable keys against chance, its figure), then the protocol, the cost and how to cite it. The verdicts' tables:
:mod:`normbench.cards.comparison_view`; each section's protocol: :mod:`normbench.cards.protocol_view`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from normbench.archive import JudgedClaim
from normbench.archive.replicate import cpu_family
from normbench.cards.build import Card
from normbench.cards.comparison_view import comparison_lines
from normbench.cards.document import CardSection, TunedStatus
from normbench.cards.models import LearnedValue
from normbench.cards.probe import NormFacts
from normbench.cards.protocol import options_text
from normbench.cards.protocol_view import baseline_notes, protocol_lines
from normbench.cards.summary import fmt, grid_progress, no_rate, summary_table
from normbench.cards.verdicts import BASELINES
from normbench.formatting import significant
from normbench.render.chance_view import chance_rows
from normbench.render.markdown import Lines, cell
from normbench.site.card_pages import summary_metric

CHANCE_INTRO = (
    "Each unselectable fraction of the new norm beside random keys of the same count and dimension (the matched "
    "null; its standard error from the number of draws): below chance means the trained keys are *more* "
    "selectable than random keys. The board [`results/{board}/`](../../{board}/leaderboard.md) says where a "
    "null's draws stopped short of a tenth of the seed spread."
)

ROLES = ("new", *BASELINES)

VERDICTS_KEY = (
    "Against each baseline, as a paper's table reads it, with new − baseline (the difference of seed means) and its "
    "95% Welch interval: *equivalent*: a two-sided TOST puts the difference within the task's margin (its 90% "
    "interval inside ± the margin); else *better* or *worse*: the 95% interval lies on that side of 0; else "
    "*undecided*: the seeds leave it open (*on the margin*: the equivalence test's interval ends within the metric's "
    "cross-platform tolerance of it). *provisional: … so far, k of n seeds*: judged before all the seeds the card's "
    "protocol declares finished, not a final verdict. (k of n seeds failed): seeds of the new norm diverged, "
    "collapsed or failed: a verdict beside it is judged on the seeds left, and *worse* where none is left; beside a "
    "value (a baseline's too), that variant's failed seeds: a seed at chance or collapsed is in its mean, a diverged "
    "one is not. Each task's section gives the tests behind each verdict."
)
SECTION_KEY = (
    "Each verdict read as in the summary (equivalent, better, worse or undecided), with new − baseline and its 95% "
    "Welch interval and the equivalence test's 90% interval against the margin; the two tests behind each verdict "
    "follow, every seed in them."
)


def summary(card: Card) -> Lines:
    lines = ["## Summary", ""]
    if card.broken:
        return [*lines, f"**Broken**: `{card.norm}` {card.broken}. It was not trained.", ""]
    lines += [
        "| task | metric | new norm | LayerNorm | RMSNorm | vs LayerNorm | vs RMSNorm |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in summary_table(card.tasks):
        metric = summary_metric(row)
        cells = [cell(row.get(k, "")) for k in ("new", *BASELINES, *(f"vs_{b}" for b in BASELINES))]
        lines.append(f"| {row['task']} | {metric} | " + " | ".join(cells) + " |")
    lines += [
        "",
        VERDICTS_KEY,
        *(["", *baseline_notes(card)] if baseline_notes(card) else []),
        "",
    ]
    return lines


def facts(card: Card) -> Lines:
    lines = [
        "## The norm's facts, measured",
        "",
        "On 512 inputs a (z + m 1) of every mean and scale, in float64, without the affine map, in evaluation mode "
        "(the norm as built, with its default options, not a task's recipe): *projects* = every "
        "output orthogonal to the ones vector; *scales* = every output of one Euclidean norm; output norm = mean "
        "||N(x)|| / sqrt(d). Speed: forward + backward against `F.layer_norm` on the same input, in training mode, "
        "in one process, in alternating rounds: the median of the rounds' ratios and their range.",
        "",
        *_probed(card),
        "| d | problem | projects (declared) | scales (declared) | output norm / sqrt(d) | time vs F.layer_norm |",
        "|---|---|---|---|---|---|",
    ]
    for d, f in card.facts.items():
        declared = f.declared or {}
        ratio = speed_text(f)
        norm = "–" if f.output_norm is None else f"{f.output_norm:.4g}"
        lines.append(
            f"| {d} | {cell(f.problem or 'none')} | {_yes(f.projects)} ({_yes(declared.get('projects'))}) | "
            f"{_yes(f.scales)} ({_yes(declared.get('scales'))}) | {norm} | {ratio} |"
        )
    return [*lines, ""]


def speed_text(f: NormFacts) -> str:
    """``1.19x (1.10-1.25 over 7 rounds)``: the median ratio and the rounds' range; "–" where not timed."""
    if f.speed_ratio is None:
        return "–"
    if not f.round_ratios:
        return f"{f.speed_ratio:.2f}x"
    return (
        f"{f.speed_ratio:.2f}x ({min(f.round_ratios):.2f}–{max(f.round_ratios):.2f} over {len(f.round_ratios)} rounds)"
    )


def _probed(card: Card) -> Lines:
    """A line naming the component measured where it is not the card's norm (a named card: ``qknorm`` -> ``scale``)."""
    measured = {f.component for f in card.facts.values()}
    if measured == {card.norm} or not measured:
        return []
    return [f"Measured: `{', '.join(sorted(measured))}`, the norm of the variant that stands for `{card.norm}`.", ""]


def _yes(value: bool | None) -> str:
    return "–" if value is None else "yes" if value else "no"


def task_section(t: CardSection) -> Lines:
    lines = [f"## {t.get('label', t['task'])}", ""]
    if t["status"] == "not run":
        return [*lines, f"Not run: {t['why']}.", ""]
    runs = t["runs"]
    names = ", ".join(f"{role} `{v}`" for role, v in t["variants"].items())
    lines += [
        f"Board [`results/{t['board']}/`](../../{t['board']}/leaderboard.md), preset `{t['preset']}`, seeds "
        f"{', '.join(map(str, t['seeds']))}: {names}. "
        + (
            f"{runs['finished']} of {runs['planned']} runs finished; the rest are trained by the same command."
            if t["status"] != "complete"
            else f"All {runs['planned']} runs finished."
        ),
        "",
        *protocol_lines(t),
        "| metric | " + " | ".join(ROLES) + " |",
        "|---|---|---|---|",
    ]
    angle_metric, angle_row = t.get("angle_metric"), t.get("angle")  # a section has an angle where it names its metric
    angle = {angle_metric: angle_row} if angle_row and angle_metric else {}
    for metric, row in {**t["headline"], **t["thresholds"], **angle}.items():
        lines.append(f"| `{metric}` | " + " | ".join(cell(fmt(row.get(r))) for r in ROLES) + " |")
    lines += ["", *learned_lines(t.get("learned") or [])]
    failed = t["failed_seeds"]
    lines += ["**Failed seeds of the new norm**: " + ("; ".join(f"seed {s}: {w}" for s, w in failed.items()) or
                                                           "none") + ".", ""]  # fmt: skip
    lines += ["### Against LayerNorm and RMSNorm", "", SECTION_KEY, ""]
    lines += comparison_lines(t["claims"])
    lines += tuning_lines(t)
    if t["against_chance"]:
        lines += ["", "### Unselectable keys against chance", "", CHANCE_INTRO.format(board=t["board"]), ""]
        lines += chance_rows([JudgedClaim.from_json(c) for c in t["against_chance"]])
    if t["figures"]:
        lines += ["", *(f"![{f.rpartition('/')[2]}](../../{f})" for f in t["figures"][:1])]
    return [*lines, ""]


def learned_lines(learned: list[LearnedValue]) -> Lines:
    """What the new norm learned: each of its own trained parameters per slot, its final value over the seeds."""
    if not learned:
        return ["**What the new norm learned**: no parameter of its own is recorded (it has none that trains, or its "
                "runs predate their logging).", ""]  # fmt: skip
    lines = ["**What the new norm learned** (its own trained parameters, final value: mean ± sd over seeds; a "
             "parameter of more than one element as its mean):", "",
             "| slot | parameter | final value | seeds |", "|---|---|---|---|"]  # fmt: skip
    for v in learned:
        spread = f" ± {significant(v['std'])}" if v["std"] is not None else ""
        seeds = ", ".join(map(str, v["seeds"]))
        lines.append(f"| `{v['slot']}` | `{v['parameter']}` | {significant(v['mean'])}{spread} | {seeds} |")
    return [*lines, ""]


def cost(card: Card) -> Lines:
    """Where the card's time went: the new norm's runs per task (the baselines' runs were published before) and the
    command's own wall time here."""
    spent = card.to_json()["training_cost"]
    lines = ["## Cost", ""]
    if card.broken:
        return [*lines, f"Nothing was trained; the command took {card.wall_time_s:.0f} s here.", ""]
    if spent["wall_time_s"] is None:
        return [*lines, f"No run of the new norm has finished; the command took {card.wall_time_s:.0f} s here.", ""]
    lines += [
        "| task | the new norm's runs (of a whole card's) | training time, summed over runs | per run (mean) "
        "| devices |",
        "|---|---|---|---|---|",
    ]
    for task, c in spent["tasks"].items():
        per_run = f"{c['mean_run_s']:.0f} s" if c.get("mean_run_s") is not None else "–"
        lines.append(
            f"| {task} | {c.get('runs', '–')} (of {c.get('whole_card_runs', '–')}) | {c['wall_time_s']:.0f} s | "
            f"{per_run} | {', '.join(c.get('devices') or []) or '–'} |"
        )
    runs = sum(c.get("runs") or 0 for c in spent["tasks"].values())
    whole = sum(c.get("whole_card_runs") or 0 for c in spent["tasks"].values())
    lines += [
        f"| all | {runs} (of {whole}) | {spent['wall_time_s']:.0f} s | | {', '.join(spent['devices']) or '–'} |",
        "",
        "The sum counts every run's own time; runs that train side by side (a bake trains one per CPU core, several "
        "per GPU) take less elapsed time. The LayerNorm and RMSNorm runs are the published ones: a card trains only "
        "its norm's runs. A whole card's count is at most: at a tuned rate that is the shared one, no run is added.",
    ]
    if (estimate := spent.get("estimated_whole_card_s")) is not None:
        lines.append(
            f"At these means per run, the whole card's runs of {', '.join(spent['estimated_tasks'])} take about "
            f"{duration(estimate)}, summed over runs."
        )
    return [*lines, ""]


def duration(seconds: float) -> str:
    """A time for people: minutes under an hour and a half, else hours to one decimal."""
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} hours"


def tuning_lines(t: CardSection) -> Lines:
    """A task's claims at each variant's tuned learning rate, and the failed seeds over the grid (none where the task
    tunes nothing)."""
    tuning = t.get("tuning")
    if not tuning:
        return []
    lines = ["", "### At each variant's tuned learning rate", ""]
    grid, tuned = tuning.get("grid"), tuning.get("tuned")
    if tuned is None:
        state, phrase = grid_progress(tuning)
        then = {
            "empty": "The same command trains it, then the judging seeds at each variant's chosen rate.",
            "finished": "Each variant's rate is chosen on it; its judging seeds at that rate are not trained yet (the "
            "same command trains them).",
        }.get(state, "Each variant's rate is chosen once it is finished, then its judging seeds train there.")
        lines.append(f"Not judged yet: {phrase}. {then}")
    else:
        lines += [
            f"Each variant's rate was chosen on the grid `results/{tuning['grid_board']}/` (tuning seeds "
            f"{', '.join(map(str, grid['seeds'] if grid else []))}{chosen_on(tuned)}); the judging seeds, other seeds, "
            "ran at it on "
            f"`results/{tuning['tuned_board']}/`"
            + (f" ({tuned['finished']} of {tuned['planned']} runs)." if tuned["planned"] is not None else "."),
            "",
            "| role | shared lr | tuned lr | at the grid's edge |",
            "|---|---|---|---|",
            *(
                f"| {role} | {tuned['shared']} | {r.get('chosen') or 'not chosen'} | {_yes(r.get('at_edge'))} |"
                for role, r in tuned["rates"].items()
            ),
            "",
            *(
                [f"The new norm has no tuned rate: {why}, so no claim is judged at one.", ""]
                if (why := no_rate(tuning))
                else []
            ),
            *comparison_lines(tuned["claims"], rate="tuned"),
        ]
    failed = (grid.get("failed_seeds") if grid else None) or {}
    rates = sorted({rate for per in failed.values() for rate in per}, key=float)
    if rates:
        lines += [
            "",
            "Seeds that diverged, collapsed or stayed at chance, per learning rate of the grid (stability; none: every "
            "seed trained, –: not run yet):",
            "",
            "| lr | " + " | ".join(ROLES) + " |",
            "|---|---|---|---|",
            *(
                f"| {rate} | " + " | ".join(_failed(failed.get(role, {}).get(rate)) for role in ROLES) + " |"
                for rate in rates
            ),  # fmt: skip
        ]
    return lines


def chosen_on(tuned: TunedStatus) -> str:
    """``, by the highest `test_acc@5000``: what the grid's choice maximised or minimised ("" where not known)."""
    on = tuned.get("chosen_on") or {}
    if not on.get("metric"):
        return ""
    return f", by the {'highest' if on.get('goal') == 'max' else 'lowest'} `{on['metric']}`"


def _failed(seeds: list[str] | None) -> str:
    return "–" if seeds is None else ", ".join(seeds) or "none"


def citation(card: Card) -> Lines:
    commit = card.provenance.get("git_commit") or "unknown"
    key = f"normbench_card_{re.sub(r'[.=-]', '_', card.to_json()['slug'])}"
    named = f"{card.norm} ({options_text(card.options)})" if card.options else card.norm
    return [
        "## How to cite",
        "",
        "```bibtex",
        f"@misc{{{key},",
        f"  title = {{normbench report card: {named}}},",
        "  author = {{The normbench authors}},",
        f"  year = {{{card.generated_at[:4]}}},",
        f"  note = {{results/cards/{card.to_json()['slug']}/card.json, built at commit {commit}}},",
        "}",
        "```",
        "",
    ]


def device_text(prov: Mapping[str, Any]) -> str:
    """``cpu (Intel Xeon, AVX512)``: where the card was built, which its timings are of."""
    plat = prov.get("platform") or {}
    if prov.get("device") == "cpu" and plat.get("cpu"):
        return f"cpu ({cpu_family(plat['cpu'])}, {plat.get('cpu_capability') or 'unknown'})"
    return str(prov.get("device"))


def render_card(card: Card) -> str:
    """``card.md`` of ``card``."""
    prov = card.provenance
    lines = [
        f"# normbench report card: `{card.norm}`",
        "",
        "Generated by `normbench card`; do not edit by hand. "
        f"Built {card.generated_at} at commit `{(prov.get('git_commit') or 'unknown')[:12]}`"
        f"{' (dirty)' if prov.get('dirty') else ''}, {device_text(prov)}, {prov.get('threads')} threads; this build "
        f"took {card.wall_time_s:.0f} s here (the runs' training time: see Cost).",
        *([f"The norm's code: `{card.source}`, the version this card judges."] if card.source else []),
        *(
            [
                f"Its options: `{options_text(card.options)}` (`--options`), given to its constructor in every slot; "
                "its runs and this card are keyed by them."
            ]
            if card.options
            else []
        ),
        "",
        *summary(card),
        *facts(card),
    ]
    for t in card.tasks:
        lines += task_section(t)
    lines += cost(card)
    lines += citation(card)
    return "\n".join(lines)
