"""``card.md``: a report card in Markdown, every section from the card's JSON alone.

Order: the summary across tasks, the norm's measured facts and speed, one section per task (its headline metrics,
the verdicts against LayerNorm and RMSNorm with their details, thresholds, failed seeds, the query angle, the
unselectable keys against chance, its figure), then the protocol, the cost and how to cite it.
"""

from __future__ import annotations

import re
from typing import Any

from normbench.archive import JudgedClaim
from normbench.archive.store import cpu_family
from normbench.boards.norm_board import drift_comparable
from normbench.cards.build import Card
from normbench.cards.probe import NormFacts
from normbench.cards.protocol import options_text
from normbench.cards.summary import fmt, grid_progress, no_rate, summary_table
from normbench.cards.verdicts import BASELINES, comparisons, interval_text, verdict_text
from normbench.judge.claims import describe, describe_difference, describe_seeds
from normbench.render.chance_view import chance_rows
from normbench.render.claims_view import anchor, detectable_text
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
TEST_WORDS = {
    "equivalence": {"reproduced": "within the margin", "not reproduced": "beyond the margin",
                    "inconclusive": "undecided", "borderline": "on the margin", "not run": "not run"},
    "ordering": {"reproduced": "the new norm better", "not reproduced": "the new norm worse",
                 "inconclusive": "undecided", "not run": "not run"},
}  # fmt: skip


def comparison_lines(claims: list[dict[str, Any]], rate: str = "") -> Lines:
    """The verdicts against LayerNorm and RMSNorm (:func:`normbench.cards.verdicts.compare`), one row per metric and
    baseline with its intervals, then each test behind them in a collapsible block (``rate``: ``tuned`` where the
    section's claims are judged at the tuned rates, so their anchors differ)."""
    lines = [
        "| metric | vs | verdict | new − baseline [95% CI] | TOST: 90% interval vs ± margin |",
        "|---|---|---|---|---|",
    ]
    for metric, per in comparisons(claims).items():
        for key, c in per.items():
            test = (c.get("equivalence") or {}).get("interval") or {}
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


NORM_NAMES = {"attn": "attention", "ffn": "FFN", "final": "final", "embed": "embedding"}


def norm_text(spec: dict[str, Any]) -> str:
    """``both (affine, eps 1e-05, 16 parameters)``: a norm as the built model has it (``eps unused`` where its map
    takes none; the trained values of one such norm)."""
    eps = "eps unused" if spec.get("eps") is None else f"eps {spec['eps']:g}"
    count = f", {spec['parameters']} parameters" if spec.get("parameters") is not None else ""
    frozen = f", own {', '.join(spec['frozen'])} frozen" if spec.get("frozen") else ""
    options = f", options {spec['options']}" if spec.get("options") else ""
    affine = "affine" if spec.get("affine") else "no affine"
    return f"`{spec.get('component')}` ({affine}, {eps}{count}{frozen}{options})"


def drift_text(t: dict[str, Any]) -> str:
    """The measured platform drift of each headline metric beside the margin (``results/reproducibility.md``): a
    drift above a tenth of the margin is *comparable* to it (a seed retrained elsewhere can move a verdict near the
    margin), so the card says so; ``""`` where no drift is measured."""
    said = []
    for metric, drift in (t.get("platform_drift") or {}).items():
        comparable = drift_comparable(drift["drift"], t["margin"])
        said.append(
            f"`{metric}` ends {drift['drift']:.2g} apart on another platform ({drift['where']}), "
            + (
                f"comparable to the margin: a verdict within {drift['drift']:.2g} of the margin may differ on another "
                "machine"
                if comparable
                else "far below the margin"
            )
        )
    return f" Measured platform drift (results/reproducibility.md): {'; '.join(said)}." if said else ""


def protocol_lines(t: dict[str, Any]) -> Lines:
    """What each variant of a task's section is, read from the model it builds: the placement, every norm of the
    network and the trained parameters (the baselines are the published variants; the new norm replaces the block
    norms of the LayerNorm one); then where the new norm trains parameters the baselines lack."""
    norms = t.get("norms") or {}
    kinds = list(dict.fromkeys(k for n in norms.values() for k in n["norms"]))
    head = f"**Protocol.** Preset `{t['preset']}`; equivalence margin {t['margin']:g} ({t['better']} is better)."
    head += drift_text(t)
    if not kinds:
        return [head, ""]
    lines = [
        f"{head} Each variant's norms and trained parameters, read from the model it builds (a norm's parameters: "
        "those of one layer's):",
        "",
        "| role | variant | placement | parameters | "
        + " | ".join(f"{NORM_NAMES.get(k, k)} norm" for k in kinds)
        + " |",
        "|---|---|---|---|" + "---|" * len(kinds),
    ]
    for role, n in norms.items():
        cells = [norm_text(n["norms"][k]) if k in n["norms"] else "–" for k in kinds]
        count = f"{n['parameters']:,}" if n.get("parameters") is not None else "–"
        lines.append(f"| {role} | `{t['variants'][role]}` | {n['placement']} | {count} | " + " | ".join(cells) + " |")
    extra = t.get("extra_parameters")
    if extra is not None:
        said = [
            f"{NORM_NAMES.get(e['norm'], e['norm'])} norm: {', '.join(f'`{p}`' for p in e['parameters'])} "
            f"(in each of its {e['layers']})"
            for e in extra
        ]
        lines += [
            "",
            "Parameters the new norm trains that the baselines lack: " + ("; ".join(said) if said else "none") + ".",
        ]
    return [*lines, ""]


def block_components(t: dict[str, Any], role: str) -> tuple[str, str] | None:
    """The components of a role's attention and FFN norms in a task's section (``None`` where its runs are not there
    or it has not both)."""
    norms = ((t.get("norms") or {}).get(role) or {}).get("norms") or {}
    return (
        (str(norms["attn"].get("component")), str(norms["ffn"].get("component")))
        if {"attn", "ffn"} <= set(norms)
        else None
    )


def baseline_notes(card: Card) -> Lines:
    """A line per baseline and pair of block norms where its attention and FFN norms differ (RMSNorm as the attention
    norm only, the FFN norm LayerNorm), while the new norm replaces both: the comparison is with the published
    variant, and the card says so."""
    notes = []
    for role in BASELINES:
        mixed: dict[tuple[str, str], list[str]] = {}
        for t in card.tasks:
            pair = block_components(t, role)
            if pair and pair[0] != pair[1]:
                mixed.setdefault(pair, []).append(t.get("label", t["task"]))
        notes += [
            f"The {role} baseline on {', '.join(labels)} is the published variant: `{attn}` as the attention norm, "
            f"`{ffn}` as the FFN norm (each section's protocol table); the new norm replaces both."
            for (attn, ffn), labels in mixed.items()
        ]
    return notes


def task_section(t: dict[str, Any]) -> Lines:
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
    angle = {t["angle_metric"]: t["angle"]} if t.get("angle") else {}
    for metric, row in {**t["headline"], **t["thresholds"], **angle}.items():
        lines.append(f"| `{metric}` | " + " | ".join(cell(fmt(row.get(r))) for r in ROLES) + " |")
    failed = t["failed_seeds"]
    lines += ["", "**Failed seeds of the new norm**: " + ("; ".join(f"seed {s}: {w}" for s, w in failed.items()) or
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
    if spent.get("estimated_whole_card_s") is not None:
        lines.append(
            f"At these means per run, the whole card's runs of {', '.join(spent['estimated_tasks'])} take about "
            f"{duration(spent['estimated_whole_card_s'])}, summed over runs."
        )
    return [*lines, ""]


def duration(seconds: float) -> str:
    """A time for people: minutes under an hour and a half, else hours to one decimal."""
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} hours"


def tuning_lines(t: dict[str, Any]) -> Lines:
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
    failed = (grid or {}).get("failed_seeds") or {}
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


def chosen_on(tuned: dict[str, Any]) -> str:
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


def device_text(prov: dict[str, Any]) -> str:
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
