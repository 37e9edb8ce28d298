"""A sweep's leaderboard and reports, written from its run records (nothing here trains or plans).

The sweep layer (:mod:`normbench.sweep.run`) plans the runs and passes them here as :class:`PlannedRun`
objects; :func:`write_results` reads their finished records and writes ``leaderboard.{md,json}``, the
figures and the task's extra reports into one folder. Every writer follows one publishing rule
(:mod:`normbench.publish.files`): a published board is replaced only by a build that covers its
finished runs and its settings, else nothing is written (``force`` replaces it).
"""

from __future__ import annotations

import fnmatch
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from normbench.archive import FINISHED, Board, BoardError, load_board, parse_board
from normbench.archive.facts import archive_facts
from normbench.archive.store import Archive
from normbench.boards.progress import PlannedRun, in_progress
from normbench.boards.published import is_stand_in, stand_ins
from normbench.boards.shown import keep_analyses, shown_runs
from normbench.io import atomic_files
from normbench.judge import claims, tuned
from normbench.publish import files as publish
from normbench.publish import leaderboard as lb
from normbench.publish import report_kinds
from normbench.publish.tokens import TOKEN_REPORT, published_runs, report_runs, write_token_report
from normbench.render.plots import GEOMETRY_FIGURES, plot_series

# (task, preset, seeds or None, variants) -> (resolved config, planned runs): how a report finds the runs of
# another sweep (the sst2 token report reads the lm bench's runs); the sweep layer passes its planner
RunPlanner = Callable[
    [str, "str | None", "list[int] | None", "list[str] | None"], tuple[dict[str, Any], Sequence[PlannedRun]]
]


def load_finished(runs: Sequence[PlannedRun], statuses: tuple[str, ...] = FINISHED) -> list[dict[str, Any]]:
    """The finished records of ``runs`` (or those of other ``statuses``), each named by its planned
    variant (a run shared by two sweeps under different variant names is shown under this sweep's name)."""
    by_path = {str(r.record_path): r for r in runs}
    records = [
        r
        for r in lb.load_records([r.record_path for r in runs], [r.config_hash for r in runs])
        if r["status"] in statuses
    ]
    return [{**r, "variant": by_path[r["record_path"]].variant} for r in records]


def write_analyses(task: str, preset: str | None, config: dict, runs: Sequence[PlannedRun]) -> int:
    """Compute into each finished run's folder the analyses of its checkpoint that the preset's board reads (the
    decomposition, key sets, per-head and per-class keys of :mod:`normbench.publish.report_kinds`), while the
    weights are here. For a sweep that writes no board (a bake's run, a shard): its runs enter the run archive, which
    keeps no weights of a finished run, so an analysis not computed now is lost. Returns the finished runs read; an
    analysis that cannot be computed is one line on stderr (the board's build tries again where the weights are)."""
    records = load_finished(runs)
    if not records:
        return 0
    first = records[0]
    sweep = report_kinds.Sweep(task, preset, Path(first["record_path"]).parent, lb.n_layers_of(first["config"]))
    try:
        report_kinds.enrich(records, config.get("bench") or {}, sweep)
    except (ValueError, OSError, RuntimeError) as exc:
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        print(f"normbench: analyses of the finished runs not computed: {first_line}", file=sys.stderr)
    return len(records)


def write_results(
    task: str,
    preset: str | None,
    config: dict,
    runs: Sequence[PlannedRun],
    out: Path,
    plan: RunPlanner | None = None,
    sweep: str | None = None,
    definition: dict[str, Any] | None = None,
    force: bool = False,
    uncommitted: bool = False,
    archive: Archive | None = None,
) -> None:
    """Build the leaderboard of the finished records among ``runs`` into ``out``, with the task's
    extra reports where its config asks for them (``bench.token_report``: Tables 3-4, whose Table 3 reads
    the ``lm`` runs that ``plan`` finds).

    Nothing is written when ``out`` holds a leaderboard with finished runs or settings this build lacks
    (:func:`normbench.publish.files.check_leaderboard`; ``force`` replaces it anyway). Runs trained from
    uncommitted code are refused unless ``uncommitted`` (or ``force``), and the board then says so.
    ``archive``: the run archive; a run it holds a canonical replicate of is shown from there, and an unfinished
    run (local or archived) is a row of the board's ``in_progress`` table ("step k of N").
    """
    local = list(runs)
    runs = shown_runs(task, runs, archive)
    records = load_finished(runs)
    # runs published before the archive kept records: their published values are canonical (one run, one result),
    # so a local retraining of one is a replicate, compared in results/reproducibility.md, not shown here
    published = [
        r
        for r in runs
        if archive
        and r.config_hash
        and archive.published_elsewhere(task, r.config_hash, r.seed)
        and archive.canonical(task, r.config_hash, r.seed) is None
    ]
    shown_published = {(r.variant, r.seed) for r in published}
    records = [r for r in records if (r["variant"], r["seed"]) not in shown_published]
    progress = in_progress(task, local, archive, {(r["variant"], r["seed"]) for r in records} | shown_published)
    if not records and not progress and published and (out / "leaderboard.json").is_file():
        print(
            f"normbench: {out / 'leaderboard.json'} stands as published: its {len(published)} runs were published "
            f"before the run archive kept records, so its per-seed values are canonical (`normbench rejudge {out}` "
            f"judges its claims again; retrained replicates are compared with it in results/reproducibility.md)"
        )
        return
    # beside new seeds of the same board, and on a new board of published runs only (a report card's on the runs of
    # boards published before the archive), the published runs are shown with their published values
    new_board = not (out / "leaderboard.json").is_file()
    stand_in_records = stand_ins(task, published, archive) if records or new_board else []
    order = [(r.variant, r.seed) for r in runs]
    if not records and not progress and not stand_in_records:
        raise ValueError(
            f"runs_dir: no finished run records for task {task} (preset {preset}); "
            f"run `normbench sweep --config {task}` first"
        )
    bench_cfg = tuned.with_rechosen(config.get("bench") or {}, out / "leaderboard.json")
    superseded = publish.superseded_configs(bench_cfg)
    try:
        publish.check_leaderboard(
            out,
            {(r["variant"], r["seed"]): r.get("config_hash") for r in records + stand_in_records},
            publish.sweep_settings(task, preset, definition),
            force,
            superseded=superseded,
            variants={r.variant for r in runs},
        )
    except publish.AwaitingReplacements as waiting:  # not an error: the board waits for runs still planned
        print(f"normbench: {str(waiting).removeprefix('results_dir: ')}")
        return
    if bench_cfg.get("token_report"):  # the report beside the leaderboard: checked before either is written
        publish.check_report(
            out / TOKEN_REPORT,
            lambda doc: published_runs(doc, config),
            lambda: report_runs(config, runs, plan, archive, publish.read_if_readable(out / TOKEN_REPORT)),
            force,
            "--results_dir/--name",
            superseded=superseded,
        )
    variant_order = list(dict.fromkeys(r.variant for r in runs))
    planned = {name: [r.seed for r in runs if r.variant == name] for name in variant_order}
    first_config = records[0]["config"] if records else local[0].config
    n_layers = lb.n_layers_of(first_config)
    if records:
        records, bench_cfg = report_kinds.enrich(
            records, bench_cfg, report_kinds.Sweep(task, preset, out, n_layers, planned)
        )
        keep_analyses(task, runs, archive)
    records = sorted(records + stand_in_records, key=lambda r: order.index((r["variant"], r["seed"])))
    board = lb.build(
        task, preset, records, bench_cfg, variant_order, failed=load_finished(runs, ("failed",)), config=first_config
    )
    if replaced := superseded_build(out / "leaderboard.json", board, bench_cfg):
        board = board.with_keys(supersedes=replaced)
    board = board.with_keys(
        sweep_key=sweep,
        sweep=definition,
        planned_runs=len(runs),
        finished_runs=len(records),
    )
    extra = {
        **({"in_progress": progress} if progress else {}),
        **({"uncommitted_code": True} if publish.check_committed(out, records, force or uncommitted) else {}),
    }
    if extra:
        board = parse_board({**board.to_json(), **extra})
    with_series = [r for r in records if not is_stand_in(r)]  # what the figures can draw
    by_variant = lb.group_by_variant(with_series)
    try:
        with atomic_files(out) as stage:  # the board and its figures: one unit, or nothing changes
            sweep_of = report_kinds.Sweep(task, preset, stage, n_layers, planned)
            plots = [
                str(plot_series(by_variant, spec, stage / name))
                for name, spec in (bench_cfg.get("plots") or {}).items()
            ]
            doc = board.to_json()  # the kinds add their views (matrix, width) to the document
            plots = report_kinds.draw(doc, bench_cfg, with_series, sweep_of, plots)
            if (kept := kept_as_published(out, doc, force, plots)) is not None:
                raise KeptAsPublished(kept)  # the unit is not written: nothing under out changes
            board = parse_board(doc)
            json_path, md_path = lb.write(board, out, plots + figures_kept(out, plots), stage)
    except KeptAsPublished as kept:
        print(kept)
        keep_facts(out)
        if bench_cfg.get("token_report"):  # its own unit: new runs of the other task (Table 3's lm) change it alone
            write_tokens(config, preset, out, runs, plan, archive)
        return
    keep_facts(out)
    missing = len(runs) - len(records)
    note = f" ({missing} planned runs have no finished record yet)" if missing else ""
    print(f"normbench: wrote {md_path} and {json_path}{note}")
    for claim in board.claims:
        print(f"  {claim.id}: {claim.verdict}")
    if bench_cfg.get("token_report"):
        write_tokens(config, preset, out, runs, plan, archive)


def write_tokens(config: dict[str, Any], preset: str | None, out: Path, runs: Any, plan: Any, archive: Any) -> None:
    """Write the token report beside the board (:func:`write_token_report`), print its verdicts, and archive the data
    facts it read (its dev sentences'), as the board's are."""
    doc = write_token_report(config, preset, out, runs, plan, archive)
    for claim in doc.get("claims", []):
        print(f"  {claim['id']}: {claim['verdict']}")
    keep_facts(out)


def keep_facts(out: Path) -> None:
    """A published board's data facts go to the checkout's run archive (:mod:`normbench.archive.facts`), so that a
    clone without its corpus rebuilds it the same."""
    root = publish.repository_root()
    if root is not None and publish.publishes(out):
        for path in archive_facts(root / "results"):
            print(f"normbench: archived the data fact {path} (commit it with the board)")


# when and where a board was built (its citation names the commit), the figure files it lists, and when its claims
# were last judged again from its own values (`normbench rejudge`)
VOLATILE = ("generated_at", "provenance", "citation", "figures", "rejudged")


class KeptAsPublished(Exception):
    """A build that leaves the published board as it is (its message says why)."""


def kept_as_published(out: Path, doc: dict[str, Any], force: bool, plots: Sequence[str] = ()) -> str | None:
    """Why the published board at ``out`` stays as it is (a line to print), or ``None`` to write this build:
    a build that says the same and shows the same figures (``plots`` and :func:`figures_kept`, by name) is not
    written again (``git status`` stays clean), and one whose per-seed values differ for the same runs (replicates
    trained on another platform or commit) does not replace the published values unless ``force``."""
    published = publish.read_board(out / "leaderboard.json", "--results_dir/--name")
    if published is None or force:
        return None
    old = published.to_json() if isinstance(published, Board) else published
    shown = {Path(p).name for p in plots} | set(outside_figures(old, out, plots))  # the board is read once here
    figures_differ = shown != {Path(p).name for p in old.get("figures") or [] if isinstance(p, str)}
    if publish.says_the_same(own_rules(old), own_rules(doc), VOLATILE) and not figures_differ:
        return f"normbench: {out / 'leaderboard.json'} is unchanged (same runs, values and verdicts)"
    if drift := replicate_drift(old, doc):
        variant, metric, seed, was, now = max(drift, key=lambda d: abs(d[4] - d[3]))
        return (
            f"normbench: {out / 'leaderboard.json'} kept: {len(drift)} per-seed values of its runs differ in this "
            f"build (runs trained again on another platform or commit; largest: {variant} seed {seed} {metric} "
            f"{was:.6g} published, {now:.6g} here). Published values change only with their canonical runs; "
            f"{publish.FORCE}"
        )
    return None


def own_rules(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with only the reproducibility rules (declared tolerances, metrics compared by distribution) that apply
    to a metric of its own: a rule about other boards' metrics changes no word of what this board says, so a build
    that differs only there is not written again."""
    rep = doc.get("reproducibility")
    if not isinstance(rep, dict):
        return doc
    metrics = {m for v in doc.get("variants") or [] if isinstance(v, dict) for m in v.get("metrics") or {}}

    def applies(row: Any) -> bool:
        pattern = row.get("metrics") if isinstance(row, dict) else None
        return not isinstance(pattern, str) or any(fnmatch.fnmatchcase(m, pattern) for m in metrics)

    rules = {
        k: [r for r in rep[k] if applies(r)] for k in ("tolerances", "by_distribution") if isinstance(rep.get(k), list)
    }
    return {**doc, "reproducibility": {**rep, **rules}}


def figures_kept(out: Path, plots: Sequence[str]) -> list[str]:
    """The published board's figures that another command draws beside it (the majority board's geometry,
    :data:`~normbench.render.plots.GEOMETRY_FIGURES`) and that still lie there: the rebuilt board keeps showing
    them. A figure the board's own build no longer draws is not kept (its config dropped it)."""
    return outside_figures(publish.read_if_readable(out / "leaderboard.json") or {}, out, plots)


def outside_figures(published: dict[str, Any], out: Path, plots: Sequence[str]) -> list[str]:
    """:func:`figures_kept` of the ``published`` board already read."""
    drawn = {Path(p).name for p in plots}
    figures = published.get("figures") if isinstance(published.get("figures"), list) else []
    names = dict.fromkeys(Path(f).name for f in figures if isinstance(f, str))  # by file name, once, in its order
    return [n for n in names if n in GEOMETRY_FIGURES and n not in drawn and (out / n).is_file()]


def replicate_drift(old: dict[str, Any], new: dict[str, Any]) -> list[tuple[str, str, int, float, float]]:
    """Per-seed values of one run (same variant, seed and config hash) that differ between the published board
    ``old`` and the build ``new``: ``(variant, metric, seed, published, new)``."""
    out = []
    olds = {v.get("name"): v for v in old.get("variants") or [] if isinstance(v, dict)}
    for v in new.get("variants") or []:
        o = olds.get(v["name"])
        if o is None or o.get("config_hash") != v.get("config_hash"):
            continue
        seeds_old, seeds_new = list(o.get("seeds") or []), list(v.get("seeds") or [])
        for metric, m in (v.get("metrics") or {}).items():
            om = (o.get("metrics") or {}).get(metric) or {}
            for seed, now in zip(seeds_new, m.get("per_seed") or [], strict=False):
                if seed in seeds_old and isinstance(now, int | float):
                    was = (om.get("per_seed") or [None] * len(seeds_old))[seeds_old.index(seed)]
                    if isinstance(was, int | float) and was != now:
                        out.append((v["name"], metric, int(seed), float(was), float(now)))
    return out


def order_plots(plots: list[str], folder: Path) -> list[str]:
    """The figures in the order the board's Markdown showed them (new ones last)."""
    md = folder / "leaderboard.md"
    text = md.read_text(encoding="utf-8") if md.is_file() else ""
    return sorted(plots, key=lambda p: (text.find(f"({Path(p).name})") if f"({Path(p).name})" in text else 1 << 30, p))


def superseded_build(path: Path, board: Board, bench_cfg: dict[str, Any]) -> dict[str, Any] | None:
    """What the published board at ``path`` said, when ``board`` replaces it as a build of superseded configs
    (``bench.superseded``): its date, commit, configs and claims with their gaps to the paper, kept so
    the new board shows whether the change closed them. A build that replaces no superseded config (the same runs,
    or a variant added) passes on the block the board carries, while its configs are still superseded."""
    superseded = publish.superseded_configs(bench_cfg)
    if not superseded or not path.is_file():
        return None
    try:
        old = load_board(path)
    except BoardError as exc:
        raise publish.unreadable(path, exc, "--results_dir/--name") from None

    def applies(hashes: Iterable[str | None]) -> bool:
        return any(superseded is True or h in superseded for h in hashes)

    old_hashes = {v.name: v.config_hash for v in old.variants}
    new_hashes = {v.name: v.config_hash for v in board.variants}
    replaced = [h for name, h in old_hashes.items() if new_hashes.get(name) != h]  # runs of another config now
    if not applies(replaced):  # nothing superseded is replaced: a block still about superseded configs passes on as
        kept = old.supersedes  # it was written (its sentence says why then; today's may be another board's, inherited)
        return kept if kept and applies((kept.get("config_hashes") or {}).values()) else None
    why = bench_cfg["superseded"]["why"] if isinstance(bench_cfg["superseded"], dict) else bench_cfg["superseded"]
    return {
        "generated_at": old.generated_at,
        "git_commit": old.provenance.get("git_commit"),
        "why": why,
        "config_hashes": old_hashes,
        "claims": [
            {
                "id": c.id,
                "verdict": c.verdict,
                "measured": c.measured,
                "per_seed": c.per_seed,
                "gap_to_paper": c.gap_to_paper or claims.paper_gaps(c.to_json()),
            }
            for c in old.claims
        ],
    }
