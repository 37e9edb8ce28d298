"""A sweep's leaderboard and reports, written from its run records (nothing here trains or plans).

The sweep layer (:mod:`normbench.sweep.run`) plans the runs and passes them here as :class:`PlannedRun`
objects; :func:`write_results` reads their finished records and writes ``leaderboard.{md,json}``, the
figures and the task's extra reports into one folder, in steps: :func:`shown_records` (what the board shows),
:func:`may_replace` (the publishing rule), :func:`build_board` and :func:`write_board`. Every writer follows one
publishing rule (:mod:`normbench.publish.files`): a published board is replaced only by a build that covers its
finished runs and its settings, else nothing is written (``force`` replaces it).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from normbench.archive import FINISHED, Board, BoardError, load_board
from normbench.archive.board import Supersedes, SweepDefinition
from normbench.archive.documents.sections import RunInProgress
from normbench.archive.facts import archive_facts
from normbench.archive.store import Archive
from normbench.boards import build as board_build
from normbench.boards.progress import PlannedRun, in_progress, record_file
from normbench.boards.published import is_stand_in, stand_ins
from normbench.boards.shown import keep_analyses, shown_runs
from normbench.boards.variants import group_by_variant, n_layers_of
from normbench.io import atomic_files
from normbench.judge import claims, tuned
from normbench.judge.entries import judged_entry
from normbench.publish import files as publish
from normbench.publish import leaderboard as lb
from normbench.publish import report_kinds
from normbench.publish.compare import KeptAsPublished, kept_as_published, outside_figures
from normbench.publish.report_kinds import AnalysedRecord, Records
from normbench.publish.settings import Bench, Config
from normbench.publish.token_runs import published_runs, report_runs
from normbench.publish.tokens import TOKEN_REPORT, write_token_report
from normbench.render.plots import plot_series

# (task, preset, seeds or None, variants) -> (resolved config, planned runs): how a report finds the runs of
# another sweep (the sst2 token report reads the lm bench's runs); the sweep layer passes its planner
RunPlanner = Callable[[str, "str | None", "list[int] | None", "list[str] | None"], tuple[Config, Sequence[PlannedRun]]]


@dataclass(frozen=True)
class ResultsOptions:
    """What :func:`write_results` writes a sweep's board of, and under which rule.

    Args:
        task: the sweep's task.
        preset: the preset its runs were planned at (the resolved config's ``preset``).
        config: the resolved config (its ``bench`` the board's settings: metrics, claims, plots, reports).
        plan: how a report finds the runs of another sweep (the ``sst2`` token report's Table 3 reads the ``lm``
            runs); ``None``: no such report.
        sweep: the sweep's key (:func:`normbench.sweep.folders.sweep_key`), written on the board.
        definition: what the sweep is, as its command says it (:func:`normbench.sweep.folders.sweep_definition`).
        force: replace the published board even when this build lacks some of its finished runs or settings.
        uncommitted: runs trained from uncommitted code may be shown (the board then says so).
        archive: the run archive; a run it holds a canonical replicate of is shown from there, and an unfinished
            run (local or archived) is a row of the board's ``in_progress`` table ("step k of N").
    """

    task: str
    preset: str | None
    config: Config
    plan: RunPlanner | None = None
    sweep: str | None = None
    definition: SweepDefinition | None = None
    force: bool = False
    uncommitted: bool = False
    archive: Archive | None = None


@dataclass(frozen=True)
class Shown:
    """What a board shows of a sweep's runs (:func:`shown_records`).

    Args:
        runs: the runs it shows (:func:`normbench.boards.shown.shown_runs`: an archived canonical replicate in place
            of a local run).
        local: the runs as planned here.
        records: the finished records it shows, but those of runs published before the archive kept records.
        published: the runs published before the archive kept records (their published values are canonical).
        progress: the rows of its ``in_progress`` table (unfinished runs, local or archived).
        stand_ins: the published values of ``published``, where the board shows them (beside new records, or on a
            new board).
    """

    runs: list[PlannedRun]
    local: list[PlannedRun]
    records: Records
    published: list[PlannedRun]
    progress: list[RunInProgress]
    stand_ins: list[AnalysedRecord]


@dataclass(frozen=True)
class Build:
    """A board built (:func:`build_board`), not yet written.

    Args:
        board: the board, its views and keys added.
        records: the records it shows (analyses added), in the order of the planned runs.
        bench: the ``bench`` settings it was built with (a tuned board's choice made again; the kinds' additions).
        n_layers: the model's layers (what the figures of some report kinds need).
        planned: each variant's planned seeds.
    """

    board: Board
    records: Records
    bench: Bench
    n_layers: int
    planned: dict[str, list[int]]


def load_finished(runs: Sequence[PlannedRun], statuses: tuple[str, ...] = FINISHED) -> Records:
    """The finished records of ``runs`` (or those of other ``statuses``), each named by its planned
    variant (a run shared by two sweeps under different variant names is shown under this sweep's name)."""
    by_path = {str(r.record_path): r for r in runs}
    records = [
        r
        for r in board_build.load_records([record_file(r) for r in runs], [r.config_hash for r in runs])
        if r["status"] in statuses
    ]
    named: Records = [{**r, "variant": by_path[r["record_path"]].variant} for r in records]
    return named


def write_analyses(task: str, preset: str | None, config: Config, runs: Sequence[PlannedRun]) -> int:
    """Compute into each finished run's folder the analyses of its checkpoint that the preset's board reads (the
    decomposition, key sets, per-head and per-class keys of :mod:`normbench.publish.report_kinds`), while the
    weights are here. For a sweep that writes no board (a bake's run, a shard): its runs enter the run archive, which
    keeps no weights of a finished run, so an analysis not computed now is lost. Returns the finished runs read; an
    analysis that cannot be computed is one line on stderr (the board's build tries again where the weights are)."""
    records = load_finished(runs)
    if not records:
        return 0
    first = records[0]
    sweep = report_kinds.Sweep(task, preset, Path(first["record_path"]).parent, n_layers_of(first["config"]))
    try:
        report_kinds.enrich(records, config.get("bench") or {}, sweep)
    except (ValueError, OSError, RuntimeError) as exc:
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        print(f"normbench: analyses of the finished runs not computed: {first_line}", file=sys.stderr)
    return len(records)


def write_results(runs: Sequence[PlannedRun], out: Path, options: ResultsOptions) -> None:
    """Build the leaderboard of the finished records among ``runs`` into ``out``, with the task's
    extra reports where its config asks for them (``bench.token_report``: Tables 3-4, whose Table 3 reads
    the ``lm`` runs that ``options.plan`` finds).

    Nothing is written when ``out`` holds a leaderboard with finished runs or settings this build lacks
    (:func:`normbench.publish.files.check_leaderboard`; ``options.force`` replaces it anyway). Runs trained from
    uncommitted code are refused unless ``options.uncommitted`` (or ``force``), and the board then says so. A build
    that says what the published board says, or whose per-seed values of its runs differ (replicates trained
    elsewhere), leaves it as it is (:func:`normbench.publish.compare.kept_as_published`).
    """
    shown = shown_records(options, runs, out)
    if not shown.records and not shown.progress and shown.published and (out / "leaderboard.json").is_file():
        print(
            f"normbench: {out / 'leaderboard.json'} stands as published: its {len(shown.published)} runs were "
            f"published before the run archive kept records, so its per-seed values are canonical (`normbench rejudge "
            f"{out}` judges its claims again; retrained replicates are compared with it in results/reproducibility.md)"
        )
        return
    if not shown.records and not shown.progress and not shown.stand_ins:
        raise ValueError(
            f"runs_dir: no finished run records for task {options.task} (preset {options.preset}); "
            f"run `normbench sweep --config {options.task}` first"
        )
    bench = tuned.with_rechosen(options.config.get("bench") or {}, out / "leaderboard.json")
    if not may_replace(options, shown, out, bench):
        return
    build = build_board(options, shown, out, bench)
    written = write_board(options, build, out)
    keep_facts(out)
    if written is not None:
        board, json_path, md_path = written
        missing = len(shown.runs) - len(build.records)
        note = f" ({missing} planned runs have no finished record yet)" if missing else ""
        print(f"normbench: wrote {md_path} and {json_path}{note}")
        for claim in board.claims:
            print(f"  {claim.id}: {claim.verdict}")
    if build.bench.get("token_report"):  # its own unit: new runs of the other task (Table 3's lm) change it alone
        write_tokens(options.config, options.preset, out, shown.runs, options.plan, options.archive)


def shown_records(options: ResultsOptions, runs: Sequence[PlannedRun], out: Path) -> Shown:
    """What the board at ``out`` shows of ``runs``: the runs (an archived canonical replicate in place of a local run),
    their finished records, the runs in progress, and the runs published before the archive kept records, whose
    published values are canonical (one run, one result: a local retraining of one is a replicate, compared in
    results/reproducibility.md, not shown here). Those are shown with their published values beside new records,
    and on a new board of published runs only (a report card's, on the runs of boards published before the archive)."""
    task, archive = options.task, options.archive
    local = list(runs)
    shown = shown_runs(task, runs, archive)
    records = load_finished(shown)
    published = [
        r
        for r in shown
        if archive
        and r.config_hash
        and archive.published_elsewhere(task, r.config_hash, r.seed)
        and archive.canonical(task, r.config_hash, r.seed) is None
    ]
    held = {(r.variant, r.seed) for r in published}
    records = [r for r in records if (r["variant"], r["seed"]) not in held]
    progress = in_progress(task, local, archive, {(r["variant"], r["seed"]) for r in records} | held)
    new_board = not (out / "leaderboard.json").is_file()
    # boards.published gives a stand-in record as a JSON object: the fields of a run record it has
    stand_in_records = cast(Records, stand_ins(task, published, archive)) if records or new_board else []
    return Shown(shown, local, records, published, progress, stand_in_records)


def may_replace(options: ResultsOptions, shown: Shown, out: Path, bench: Bench) -> bool:
    """Whether this build may replace the board published at ``out``: a one-line error when it lacks finished runs
    or settings of it (:func:`normbench.publish.files.check_leaderboard`), ``False`` (said in one line) while that
    board waits for replacements of superseded runs still planned; the token report beside it is checked too."""
    superseded = publish.superseded_configs(bench)
    try:
        publish.check_leaderboard(
            out,
            {(r["variant"], r["seed"]): r.get("config_hash") for r in shown.records + shown.stand_ins},
            publish.sweep_settings(options.task, options.preset, options.definition),
            options.force,
            superseded=superseded,
            variants={r.variant for r in shown.runs},
        )
    except publish.AwaitingReplacements as waiting:  # not an error: the board waits for runs still planned
        print(f"normbench: {str(waiting).removeprefix('results_dir: ')}")
        return False
    if bench.get("token_report"):  # the report beside the leaderboard: checked before either is written
        publish.check_report(
            out / TOKEN_REPORT,
            lambda doc: published_runs(doc, options.config),
            lambda: report_runs(
                options.config, shown.runs, options.plan, options.archive, publish.read_if_readable(out / TOKEN_REPORT)
            ),
            options.force,
            "--results_dir/--name",
            superseded=superseded,
        )
    return True


def build_board(options: ResultsOptions, shown: Shown, out: Path, bench: Bench) -> Build:
    """Build the board of what is shown: the records' analyses added by the report kinds (and kept in the archive),
    the records in the order of the planned runs, what a superseded build said, the sweep's key, its runs in
    progress, and whether runs trained from uncommitted code are on it."""
    task, preset, runs, records = options.task, options.preset, shown.runs, shown.records
    variant_order = list(dict.fromkeys(r.variant for r in runs))
    planned = {name: [r.seed for r in runs if r.variant == name] for name in variant_order}
    first_config = records[0]["config"] if records else shown.local[0].config
    n_layers = n_layers_of(first_config)
    if records:
        records, bench = report_kinds.enrich(records, bench, report_kinds.Sweep(task, preset, out, n_layers, planned))
        keep_analyses(task, runs, options.archive)
    order = [(r.variant, r.seed) for r in runs]
    records = sorted(records + shown.stand_ins, key=lambda r: order.index((r["variant"], r["seed"])))
    failed = load_finished(runs, ("failed",))
    board = board_build.build(task, preset, records, bench, variant_order, failed=failed, config=first_config)
    if replaced := superseded_build(out / "leaderboard.json", board, bench):
        board = board.with_keys(supersedes=replaced)
    board = board.with_keys(
        sweep_key=options.sweep, sweep=options.definition, planned_runs=len(runs), finished_runs=len(records)
    )
    uncommitted = publish.check_committed(out, records, options.force or options.uncommitted)
    if shown.progress:
        board = board.with_keys(in_progress=shown.progress)
    if uncommitted:
        board = board.with_keys(uncommitted_code=True)
    return Build(board, records, bench, n_layers, planned)


def write_board(options: ResultsOptions, build: Build, out: Path) -> tuple[Board, Path, Path] | None:
    """Write the board and its figures into ``out`` as one unit (all of them, or nothing changes); returns the board
    as written (the report kinds' views added), its JSON and its Markdown, or ``None`` when the published board stays
    as it is (:func:`normbench.publish.compare.kept_as_published`, said in one line)."""
    with_series = [r for r in build.records if not is_stand_in(r)]  # what the figures can draw
    by_variant = group_by_variant(with_series)
    try:
        with atomic_files(out) as stage:  # the board and its figures: one unit, or nothing changes
            sweep_of = report_kinds.Sweep(options.task, options.preset, stage, build.n_layers, build.planned)
            plots = [
                str(plot_series(by_variant, spec, stage / name))
                for name, spec in (build.bench.get("plots") or {}).items()
            ]
            doc = build.board.to_json()  # the board as its file will hold it: what the kinds draw from
            plots, views = report_kinds.draw(doc, build.bench, with_series, sweep_of, plots)
            board = build.board.with_keys(**views)
            if (kept := kept_as_published(out, board, options.force, plots)) is not None:
                raise KeptAsPublished(kept)  # the unit is not written: nothing under out changes
            json_path, md_path = lb.write(board, out, plots + figures_kept(out, plots), stage)
    except KeptAsPublished as kept:
        print(kept)
        return None
    return board, json_path, md_path


def write_tokens(
    config: Config,
    preset: str | None,
    out: Path,
    runs: Sequence[PlannedRun],
    plan: RunPlanner | None,
    archive: Archive | None,
) -> None:
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


def figures_kept(out: Path, plots: Sequence[str]) -> list[str]:
    """The published board's figures that another command draws beside it (the majority board's geometry,
    :data:`~normbench.render.plots.GEOMETRY_FIGURES`) and that still lie there: the rebuilt board keeps showing
    them. A figure the board's own build no longer draws is not kept (its config dropped it)."""
    return outside_figures(publish.read_if_readable(out / "leaderboard.json") or {}, out, plots)


def order_plots(plots: list[str], folder: Path) -> list[str]:
    """The figures in the order the board's Markdown showed them (new ones last)."""
    md = folder / "leaderboard.md"
    text = md.read_text(encoding="utf-8") if md.is_file() else ""
    return sorted(plots, key=lambda p: (text.find(f"({Path(p).name})") if f"({Path(p).name})" in text else 1 << 30, p))


def superseded_build(path: Path, board: Board, bench_cfg: Bench) -> Supersedes | None:
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
                "gap_to_paper": c.gap_to_paper or claims.paper_gaps(judged_entry(c.to_json())),
            }
            for c in old.claims
        ],
    }
