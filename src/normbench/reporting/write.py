"""A sweep's leaderboard and reports, written from its run records (nothing here trains or plans).

The sweep layer (:mod:`normbench.sweep.run`) plans the runs and passes them here as :class:`PlannedRun`
objects; :func:`write_results` reads their finished records and writes ``leaderboard.{md,json}``, the
figures and the task's extra reports into one folder. Every writer follows one publishing rule
(:mod:`normbench.reporting.publish`): a published board is replaced only by a build that covers its
finished runs and its settings, else nothing is written (``force`` replaces it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from normbench.archive import FINISHED, Board, BoardError, load_board, parse_board
from normbench.io import atomic_files
from normbench.reporting import claims, publish, report_kinds
from normbench.reporting import leaderboard as lb
from normbench.reporting.plots import plot_series
from normbench.reporting.tokens import TOKEN_REPORT, published_runs, report_runs, write_token_report


class PlannedRun(Protocol):
    """One planned (variant, seed) run, as the sweep layer describes it (:class:`normbench.sweep.plan.Run`)."""

    variant: str
    seed: int
    record_path: Path | None
    config_hash: str | None
    config: dict[str, Any]


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
) -> None:
    """Build the leaderboard of the finished records among ``runs`` into ``out``, with the task's
    extra reports where its config asks for them (``bench.token_report``: Tables 3-4, whose Table 3 reads
    the ``lm`` runs that ``plan`` finds).

    Nothing is written when ``out`` holds a leaderboard with finished runs or settings this build lacks
    (:func:`normbench.reporting.publish.check_leaderboard`; ``force`` replaces it anyway).
    """
    records = load_finished(runs)
    missing = len(runs) - len(records)
    if not records:
        raise ValueError(
            f"runs_dir: no finished run records for task {task} (preset {preset}); "
            f"run `normbench sweep --config {task}` first"
        )
    bench_cfg = config.get("bench") or {}
    superseded = publish.superseded_configs(bench_cfg)
    publish.check_leaderboard(
        out,
        {(r["variant"], r["seed"]): r.get("config_hash") for r in records},
        publish.sweep_settings(task, preset, definition),
        force,
        superseded=superseded,
    )
    if bench_cfg.get("token_report"):  # the report beside the leaderboard: checked before either is written
        publish.check_report(
            out / TOKEN_REPORT,
            lambda doc: published_runs(doc, config),
            report_runs(config, runs, plan),
            force,
            "--results_dir/--name",
            superseded=superseded,
        )
    variant_order = list(dict.fromkeys(r.variant for r in runs))
    planned = {name: [r.seed for r in runs if r.variant == name] for name in variant_order}
    n_layers = lb.n_layers_of(records[0]["config"])
    records, bench_cfg = report_kinds.enrich(
        records, bench_cfg, report_kinds.Sweep(task, preset, out, n_layers, planned)
    )
    board = lb.build(task, preset, records, bench_cfg, variant_order, failed=load_finished(runs, ("failed",)))
    if replaced := superseded_build(out / "leaderboard.json", board, bench_cfg):
        board = board.with_keys(supersedes=replaced)
    board = board.with_keys(
        sweep_key=sweep,
        sweep=definition,
        planned_runs=len(runs),
        finished_runs=len(records),
    )
    by_variant = lb.group_by_variant(records)
    with atomic_files(out) as stage:  # the board and its figures: one unit, or nothing changes
        sweep_of = report_kinds.Sweep(task, preset, stage, n_layers, planned)
        plots = [
            str(plot_series(by_variant, spec, stage / name)) for name, spec in (bench_cfg.get("plots") or {}).items()
        ]
        doc = board.to_json()  # the kinds add their views (matrix, width) to the document
        plots = report_kinds.draw(doc, bench_cfg, records, sweep_of, plots)
        board = parse_board(doc)
        json_path, md_path = lb.write(board, out, plots, stage)
    note = f" ({missing} planned runs have no finished record yet)" if missing else ""
    print(f"normbench: wrote {md_path} and {json_path}{note}")
    for claim in board.claims:
        print(f"  {claim.id}: {claim.verdict}")
    if bench_cfg.get("token_report"):
        doc = write_token_report(config, preset, out, runs, plan)
        for claim in doc.get("claims", []):
            print(f"  {claim['id']}: {claim['verdict']}")


def order_plots(plots: list[str], folder: Path) -> list[str]:
    """The figures in the order the board's Markdown showed them (new ones last)."""
    md = folder / "leaderboard.md"
    text = md.read_text(encoding="utf-8") if md.is_file() else ""
    return sorted(plots, key=lambda p: (text.find(f"({Path(p).name})") if f"({Path(p).name})" in text else 1 << 30, p))


def superseded_build(path: Path, board: Board, bench_cfg: dict[str, Any]) -> dict[str, Any] | None:
    """What the published board at ``path`` said, when ``board`` replaces it as a build of superseded configs
    (``bench.superseded``): its date, commit, configs and claims with their gaps to the paper, kept so
    the new board shows whether the change closed them. A board that already carries such a block
    for the same runs passes it on."""
    superseded = publish.superseded_configs(bench_cfg)
    if not superseded or not path.is_file():
        return None
    try:
        old = load_board(path)
    except BoardError as exc:
        raise publish.unreadable(path, exc, "--results_dir/--name") from None
    old_hashes = {v.name: v.config_hash for v in old.variants}
    new_hashes = {v.name: v.config_hash for v in board.variants}
    if old_hashes == new_hashes or not any(superseded is True or h in superseded for h in old_hashes.values()):
        return old.supersedes
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
