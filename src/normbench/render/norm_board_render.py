"""The norm leaderboard as Markdown (``results/norms.md``) and one dot-and-interval figure per task
(``results/norms-<task>.png``), from its document alone (:func:`normbench.boards.norm_board.build_norm_board`).

A cell reads ``mean [low, high]``: the mean over the judging seeds and its 95% t-interval; then its seeds (finished of
declared, failed ones named) and its standing against the best complete cell of its column.
"""

from __future__ import annotations

import json
from pathlib import Path

from normbench.boards.norm_board import NormBoard, NormRow, NormTask, Parameters, Rate, drift_comparable
from normbench.boards.norm_cells import NormCell
from normbench.formatting import number
from normbench.io import atomic_files, dumps_json, write_png

METRIC_WORDS = {
    "test_acc@5000": "test accuracy at step 5000",
    "final_val_loss": "validation loss at the end (nats per token)",
    "val_acc": "dev accuracy",
}
RATE_WORDS = {"tuned": "its own tuned rate", "shared": "the shared rate"}


def digits_of(view: NormTask) -> int:
    """Decimals that show the task's resolution: 3, or 4 where the resolution is below 0.005."""
    resolved = [r for r in (view.get("resolution") or {}).values() if r is not None]
    return 4 if resolved and min(resolved) < 0.005 else 3


def value_text(cell: NormCell, digits: int) -> str:
    """``mean [low, high]``, the mean alone with one seed, ``–`` with none."""
    if cell.get("mean") is None:
        return "–"
    if cell.get("low") is None:
        return number(cell["mean"], digits)
    return f"{number(cell['mean'], digits)} [{number(cell['low'], digits)}, {number(cell['high'], digits)}]"


def seeds_text(cell: NormCell) -> str:
    """``10 of 10``, with the failed seeds named: ``3 of 5; seeds 0, 1 failed``."""
    text = f"{cell['finished']} of {cell['declared']}"
    failed = cell.get("failed") or []
    if failed:
        text += f"; seed{'s' if len(failed) > 1 else ''} {', '.join(failed)} failed"
    return text


def standing_text(cell: NormCell, margin: float, digits: int) -> str:
    """The standing in words, the difference to the best and its 95% interval beside it where there is one."""
    standing = str(cell.get("standing") or "–")
    vs = cell.get("vs_best")
    words = f"**{standing}**" if standing.startswith("best") else standing
    words = f"tied (within ±{margin:g})" if standing == "tied" else words
    if vs and vs.get("difference") is not None and vs.get("low") is not None:
        words += f": {vs['difference']:+.{digits}f} [{vs['low']:+.{digits}f}, {vs['high']:+.{digits}f}]"
    return words


def rate_text(cell: NormCell) -> str:
    """The learning rate of a cell, marked where it sits at the grid's edge."""
    if cell.get("rate") is None:
        return "–"
    return f"{cell['rate']}" + (" (grid edge)" if cell.get("at_edge") else "")


def slots_text(slots: dict[str, str] | None) -> str:
    """``attn scale, ffn scale`` (the slots of the norm's network and what each holds)."""
    if not slots:
        return "–"
    return ", ".join(f"{role} {component.rpartition(':')[2]}" for role, component in slots.items())


def params_text(parameters: Parameters) -> str:
    return f"{parameters['count']:,}" if parameters.get("count") is not None else "–"


def glance(doc: NormBoard) -> list[str]:
    """Every norm x task at its own tuned rate: the standing, its mean and interval."""
    tasks = doc["tasks"]
    names: list[str] = []
    for view in tasks:
        names += [r["norm"] for r in view["norms"] if r["norm"] not in names]
    head = [f"{v['task']}: `{v['metric']}` ({v['better']} is better)" for v in tasks]
    lines = ["| norm | " + " | ".join(head) + " |", "|---|" + "---|" * len(tasks)]
    for name in names:
        cells = []
        for view in tasks:
            row = next((r for r in view["norms"] if r["norm"] == name), None)
            if row is None:
                cells.append("not on this task")
                continue
            cell, digits = row["tuned"], digits_of(view)
            standing = standing_text({**cell, "vs_best": None}, view["margin"], digits)
            value = value_text(cell, digits)
            cells.append(standing if value == "–" else f"{standing}: {value}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def protocol_lines(view: NormTask) -> list[str]:
    """What every norm on the task shares: judging seeds, tuning grid, tuning seeds, rule, margin, resolution."""
    tuning = view["tuning"]
    grid = "; ".join(f"`{k.rpartition('.')[2]}` in {', '.join(f'{x:g}' for x in v)}" for k, v in tuning["grid"].items())
    choice = tuning.get("choice") or {}
    resolution = view.get("resolution") or {}
    resolved = ", ".join(
        f"{number(resolution[rate], 4)} at {RATE_WORDS[rate]}" for rate in ("tuned", "shared") if resolution.get(rate)
    )
    seeds = view["judging_seeds"]
    best = "highest" if choice.get("goal") == "max" else "lowest"
    lines = [
        f"- **Judging**: preset `{view['judging_preset']}`, {len(seeds)} seeds ({seeds[0]}-{seeds[-1]}), every norm at "
        f"the shared rate {view['shared_rate']} and at its own rate.",
        f"- **Tuning** (the same for every norm): preset `{tuning['preset']}`, {grid}, tuning seeds "
        f"{', '.join(map(str, tuning['tuning_seeds']))}, chosen by the {best} mean `{choice.get('metric')}` "
        "among the rates where no tuning seed failed (nor next to one).",
        f"- **Tie**: the 90% Welch interval of the difference to the best inside ±{view['margin']:g} (TOST); "
        "**worse**: the 95% interval excludes 0; otherwise undecided.",
        "- **Resolution**: "
        + (
            f"with {len(seeds)} seeds a difference below about {resolved} is not resolved "
            "(95% half-width of a difference, pooled seed spread of the complete cells)."
            if resolved
            else "not yet known (fewer than one complete cell)."
        ),
    ]
    drift = view.get("platform_drift")
    if drift:
        comparable = drift_comparable(drift["drift"], view["margin"])
        travel = (
            ": per-seed values do not travel between platforms; a re-run is compared by the seeds' distribution."
            if comparable
            else "."
        )
        lines.append(
            f"- **Platform drift**: a run retrained on another platform ends {drift['drift']:.2g} apart in "
            f"`{view['metric']}` ({drift['where']}; results/reproducibility.md), "
            f"{'comparable to' if comparable else 'far below'} the margin ±{view['margin']:g}{travel}"
        )
    for rate in ("tuned", "shared"):
        if (view.get("separates") or {}).get(rate) is False:
            lines.append(
                f"- At {RATE_WORDS[rate]} the seeds separate no norm from the best: every complete cell is tied or "
                "undecided."
            )
    return lines


def ranking_table(rows: list[NormRow], view: NormTask, first: str = "norm") -> list[str]:
    """One row per norm: slots, parameters, then its cell at its own rate and at the shared rate."""
    digits, margin = digits_of(view), view["margin"]
    lines = [
        f"| {first} | variant | slots | parameters | tuned rate | mean [95%] | seeds | standing | "
        "shared rate: mean [95%] | seeds | standing |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        t, s = r["tuned"], r["shared"]
        lines.append(
            f"| {r['norm']} | `{r['variant']}` | {slots_text(r['slots'])} | {params_text(r['parameters'])} | "
            f"{rate_text(t)} | {value_text(t, digits)} | {seeds_text(t)} | {standing_text(t, margin, digits)} | "
            f"{value_text(s, digits)} | {seeds_text(s)} | {standing_text(s, margin, digits)} |"
        )
    return lines


def pending_lines(view: NormTask) -> list[str]:
    """The cells still in progress and the bake-queue boards that train them."""
    out: list[str] = []
    for r in view["norms"] + view["placements"]:
        waiting: list[Rate] = [
            rate for rate in ("tuned", "shared") if str(r[rate].get("standing", "")).startswith("in progress")
        ]
        if waiting and r["variant"] not in {line.split("`")[1] for line in out}:
            where = ", ".join(f"`{b}`" for b in r["queued"]) or "not in the bake queue"
            why = "; ".join(
                f"{rate}: {r[rate]['standing'].removeprefix('in progress: ')}"
                for rate in waiting
                if r[rate]["standing"].startswith("in progress: ")
            )
            out.append(
                f"- `{r['variant']}` ({r['norm']}): {' and '.join(waiting)} rate in progress"
                + (f" ({why})" if why else "")
                + f"; queued: {where}"
            )
    return out


def render_glance(doc: NormBoard) -> str:
    """``results/norms-glance.md``: the at-a-glance table and the figures, what the README and the docs home show
    first (links relative to ``results/``)."""
    figures = " ".join(f"![{v['task']}](norms-{v['task']}.png)" for v in doc["tasks"])
    return "\n".join(
        [
            "Which norm is better, on equal terms (the same block slots, learning-rate grid, tuning seeds, rule and "
            "judging seeds for every norm): each norm at its own tuned rate, mean [95% interval] over the judging "
            "seeds and its standing against the best; *in progress k of n*: seeds still training (in the bake "
            "queue). The whole leaderboard, with the shared rate, parameter counts and placements: "
            "[norms.md](norms.md).",
            "",
            *glance(doc),
            "",
            figures,
            "",
        ]
    )


def render_markdown(doc: NormBoard) -> str:
    """``results/norms.md``."""
    lines = [
        "# Which norm is better: the norm leaderboard",
        "",
        "Every norm on equal terms, on every task: in the same slots of every block (the attention and the FFN norm, "
        "each slot with LayerNorm's affine map and eps), on the same learning-rate grid with the same tuning seeds "
        "and choice rule, judged on the same seeds at its own tuned rate and at the rate all share. Failed seeds are "
        "counted and named, never dropped; a cell with fewer finished seeds than declared is *in progress* and has no "
        "standing. How the comparison is made: [Fair comparisons](../docs/concepts/fair-comparison.md). Generated "
        "by `normbench norms` from the tuned boards (listed under each task); do not edit. The attention-only "
        "ablations of the papers (the norm in front of attention alone) stay on their own boards, e.g. "
        "[`majority/tuned`](majority/tuned/leaderboard.md).",
        "",
        "## At a glance: each norm at its own tuned rate",
        "",
        *glance(doc),
        "",
    ]
    for view in doc["tasks"]:
        task = view["task"]
        words = METRIC_WORDS.get(view["metric"], view["metric"])
        lines += [
            f"## {task}: `{view['metric']}`, {words} ({view['better']} is better)",
            "",
            *protocol_lines(view),
            "",
            f"![{task}: every norm's mean and 95% interval](norms-{task}.png)",
            "",
            *ranking_table(view["norms"], view),
            "",
            f"Placements of LayerNorm and RMSNorm on {task} (standing among these rows):",
            "",
            *ranking_table(view["placements"], view, first="norm, placement"),
            "",
        ]
        pending = pending_lines(view)
        if pending:
            lines += ["Cells in progress:", "", *pending, ""]
        lines += ["Read from: " + ", ".join(f"[`{b}`]({b}/leaderboard.md)" for b in view["boards"]) + ".", ""]
    return "\n".join(lines)


def plot_task(view: NormTask, path: Path) -> None:
    """A dot-and-interval figure of one task: each norm's mean and 95% interval at its own rate (filled) and at the
    shared rate (open); PNG drawn as every figure is (:func:`normbench.io.write_png`), so the same data give the same
    bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = view["norms"]
    marks: tuple[tuple[Rate, float, str], ...] = (("tuned", -0.15, "C0"), ("shared", 0.15, "white"))
    fig, ax = plt.subplots(figsize=(8.0, 0.42 * len(rows) + 1.6), dpi=100)
    for i, r in enumerate(rows):
        if r["tuned"].get("mean") is None and r["shared"].get("mean") is None:
            ax.annotate(str(r["tuned"].get("standing")), (0.01, i), xycoords=("axes fraction", "data"), va="center",
                        color="C7", fontsize=8)  # fmt: skip
        for rate, offset, face in marks:
            cell = r[rate]
            mean, low, high = cell.get("mean"), cell.get("low"), cell.get("high")  # an interval has both ends or none
            if mean is None:
                continue
            y = i + offset
            if low is not None and high is not None:
                ax.plot([low, high], [y, y], color="C0" if rate == "tuned" else "C7", lw=1.5)
            ax.plot([mean], [y], "o", mfc=face, mec="C0" if rate == "tuned" else "C7", ms=6)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{r['norm']} ({r['tuned']['finished']}/{r['tuned']['declared']})" for r in rows])
    ax.invert_yaxis()
    ax.set_xlabel(
        f"{view['metric']} ({view['better']} is better)\nfilled: at its own tuned rate; open: at the shared rate"
    )
    ax.set_title(f"{view['task']}: mean and 95% interval over the judging seeds", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    try:
        write_png(fig, path)
    finally:
        plt.close(fig)


def publish_norm_board(results_dir: str | Path = "results", force: bool = False, dry_run: bool = False) -> str:
    """Build the norm leaderboard and write ``norms.md``, ``norms.json`` and the figures into ``results_dir`` as one
    unit; what was done, in a line. An unchanged build writes nothing; one in which a cell lost finished seeds raises
    a one-line ``ValueError`` unless ``force``."""
    from normbench.boards.norm_board import build_norm_board

    root = Path(results_dir)
    if not root.is_dir():
        raise ValueError(f"results_dir: {str(root)!r} is not a folder of boards")
    doc = build_norm_board(root)
    text = dumps_json(doc, separators=(",", ":")) + "\n"
    markdown, glance_md = render_markdown(doc), render_glance(doc)
    published, page, glance_page = root / "norms.json", root / "norms.md", root / "norms-glance.md"
    old = published.read_text(encoding="utf-8") if published.is_file() else None
    same = lambda path, content: path.is_file() and path.read_text(encoding="utf-8") == content  # noqa: E731
    if old == text and same(page, markdown) and same(glance_page, glance_md):
        return f"{published} unchanged"
    lost = fewer_seeds(json.loads(old), doc) if old else []
    if lost and not force:
        raise ValueError(f"norms: {published} kept: this build has fewer finished seeds in {lost[0]} (--force: write)")
    if dry_run:
        return f"dry run: {published} would be rewritten"
    with atomic_files(root, last=("norms.md", "norms.json")) as stage:
        for view in doc["tasks"]:
            plot_task(view, stage / f"norms-{view['task']}.png")
        (stage / "norms.md").write_text(markdown, encoding="utf-8")
        (stage / "norms-glance.md").write_text(glance_md, encoding="utf-8")
        (stage / "norms.json").write_text(text, encoding="utf-8")
    return f"wrote {page}, {published} and a figure per task"


def fewer_seeds(old: NormBoard, new: NormBoard) -> list[str]:
    """The cells (``task section variant rate``) whose finished seeds the new build has fewer of than the old one at
    the same learning rate (a cell whose rate was chosen again is another cell, not a loss)."""
    cells = lambda doc: {  # noqa: E731
        f"{view['task']} {section} {row['variant']} {rate}": (row[rate].get("rate"), row[rate]["finished"])
        for view in doc.get("tasks") or []
        for section in ("norms", "placements")
        for row in view.get(section, [])
        for rate in ("tuned", "shared")
    }
    before, after = cells(old), cells(new)
    return [
        key
        for key, (value, n) in before.items()
        if after.get(key, (value, 0))[0] == value and after.get(key, (value, 0))[1] < n
    ]
