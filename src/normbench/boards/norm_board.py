"""The norm leaderboard: which norm is better on each task, on equal terms (``results/norms.md``, ``norms.json``).

A view over every task's tuned protocol. Each task declares, once, in ``bench.norm_board`` of its config: the headline
metric and its direction (``better: higher | lower``), the norms it ranks (name -> the task's variant that stands for
the norm: every norm in the same slots of the block, the attention and the FFN norm) and the placements table; the
margin is the task's card margin (``bench.card.margin``), the judging protocol its ``tuned`` preset (the learning-rate
grid, tuning seeds and choice rule of its ``lr`` preset, the same for every norm). Every published report card's norm
joins the ranking on each task its card ran.

A norm's cell at a rate (its own tuned rate, or the rate all share) reads the per-seed values of the tuned board that
judged it (``results/<task>/tuned/``, ``tuned-blocks/``, ``results/cards/<norm>/<task>/tuned/``: the same preset, so the
same grid, tuning seeds, rule and judging seeds): mean, 95% t-interval, finished and failed seeds of the declared n; its
standing is against the best complete cell (best, tied, worse, undecided, in progress:
:mod:`normbench.boards.norm_cells`). Each task states the smallest difference its seeds resolve
(:func:`normbench.boards.norm_cells.resolution`).

What a task ranks is :mod:`normbench.boards.norm_ranking`; where its cells are read,
:mod:`normbench.boards.norm_sources`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict

from normbench import archive
from normbench.archive.board_keys import CARD_GRID, CARD_TUNED, board_order, board_task, parse_key
from normbench.boards.norm_cells import NormCell, complete, resolution, standings
from normbench.boards.norm_ranking import NormSlot, TaskRanking, card_norms
from normbench.boards.norm_sources import Sources, queued_boards, slots_of
from normbench.training.config import load_config

if TYPE_CHECKING:  # Python 3.11's; the annotations are never evaluated (``from __future__ import annotations``)
    from typing import NotRequired

TASKS = ("majority", "lm", "sst2")
Rate = Literal["tuned", "shared"]
RATES: tuple[Rate, ...] = ("tuned", "shared")


class Parameters(TypedDict):
    """A norm's network size on a task: ``count``, its trainable parameters (``None``: not counted, ``why`` not)."""

    count: int | None
    why: NotRequired[str]


class NormRow(TypedDict):
    """One norm of a task's ranking (``results/norms.json``: ``tasks[].norms[]`` and ``.placements[]``).

    ``norm``: the reader's name; ``variant``: the task's variant that stands for it; ``card``: the report card it
    comes from (``None``: declared by the task); ``slots``: each norm slot of its network and the component in it;
    ``tuned``, ``shared``: its cell at its own tuned rate and at the shared rate; ``parameters``: its network's size;
    ``queued``: the bake-queue boards that train it.
    """

    norm: str
    variant: str
    card: str | None
    slots: NotRequired[dict[str, str] | None]
    tuned: NotRequired[NormCell]
    shared: NotRequired[NormCell]
    parameters: NotRequired[Parameters]
    queued: NotRequired[list[str]]


class PlatformDrift(TypedDict):
    """The largest measured drift of a metric between platforms (:func:`platform_drift`): ``drift``, the absolute
    difference of a published per-seed value and its replicate's, and ``where``: the board, variant, seed and
    platform of that replicate."""

    drift: float
    where: str


class TuningProtocol(TypedDict):
    """How every norm of a task is tuned: the grid's ``preset``, its ``grid`` (config key -> learning rates), its
    ``tuning_seeds`` and ``choice`` (the grid's ``bench.choice``: the rule that picks a rate)."""

    preset: str
    grid: dict[str, list[float]]
    tuning_seeds: list[int]
    choice: Mapping[str, object] | None


class NormTask(TypedDict):
    """One task's section of the norm leaderboard (``results/norms.json``: ``tasks[]``).

    ``task``; ``metric`` and which way is ``better``; ``margin``: the card margin of a tie; ``judging_preset``,
    ``judging_seeds``: the tuned protocol's; ``tuning``: its grid; ``shared_rate``: the rate all share; ``resolution``:
    rate -> the smallest difference its seeds resolve; ``norms``, ``placements``: the ranked rows; ``boards``: the
    tuned boards read; ``platform_drift``: the metric's measured drift between platforms (``None``: none measured);
    ``separates``: rate -> whether the seeds separate any norm from the best (``None``: fewer than two complete cells).
    """

    task: str
    metric: str
    better: str
    margin: float
    judging_preset: str
    judging_seeds: list[int]
    tuning: TuningProtocol
    shared_rate: str | None
    resolution: dict[str, float | None]
    norms: list[NormRow]
    placements: list[NormRow]
    boards: list[str]
    platform_drift: PlatformDrift | None
    separates: NotRequired[dict[str, bool | None]]


class NormBoard(TypedDict):
    """The norm leaderboard (``results/norms.json``): ``norm_board_version``, a section per task (``tasks``) and
    ``built_from``: each tuned board read -> its ``generated_at``."""

    norm_board_version: int
    tasks: list[NormTask]
    built_from: dict[str, str]


def parameters_of(task: str, cell: NormCell, results_dir: Path) -> Parameters:
    """The trainable parameter count of a cell's network, built from its archived record's config (``count``), or
    why there is none (``why``)."""
    from normbench.archive.store import Archive
    from normbench.training.model_size import parameter_count

    if not cell.get("config_hash") or not cell.get("seeds"):
        return {"count": None, "why": "no run yet"}
    store = Archive(results_dir)
    rep = next(
        (r for seed in cell["seeds"] if (r := store.canonical(task, str(cell["config_hash"]), int(seed))) is not None),
        None,
    )
    if rep is None:
        return {"count": None, "why": "no archived record"}
    config = rep.record()["config"]
    arch = ((config.get("model") or {}).get("init_args") or {}).get("arch") or {}
    if any(":" in str((spec or {}).get("component", "")) for spec in arch.values() if isinstance(spec, dict)):
        return {"count": None, "why": "a plug-in norm: its code is not imported from a record (its card counts it)"}
    try:
        return {"count": parameter_count(config)}
    except (ValueError, KeyError, TypeError) as exc:
        return {"count": None, "why": str(exc)}


def rank(slots: list[NormSlot], sources: Sources, ranking: TaskRanking, results_dir: Path,
         queue: dict[tuple[str, str], list[str]]) -> list[NormRow]:  # fmt: skip
    """One row per norm: its slots, parameter count and a cell per rate, each with its standing."""
    rows = []
    for slot in slots:
        row: NormRow = {"norm": slot.name, "variant": slot.variant, "card": slot.card}
        row["slots"] = slots_of(sources.entry(slot.variant))
        for rate in RATES:
            row[rate] = sources.cell(slot.variant, rate, ranking.metric, len(ranking.seeds))
        row["parameters"] = parameters_of(ranking.task, row["shared"] if row["shared"]["seeds"] else row["tuned"],
                                          results_dir)  # fmt: skip
        queued = set(queue.get((ranking.task, slot.variant), []))
        row["queued"] = sorted((b for b in queued if tuning_board(b, ranking)), key=board_order)
        rows.append(row)
    for rate in RATES:
        standings([r[rate] for r in rows], ranking.better, ranking.margin)
    return rows


def tuning_board(key: str, ranking: TaskRanking) -> bool:
    """Whether board ``key`` tunes or judges at tuned rates on the ranking's task: a board of the task named after its
    grid or tuned preset (``majority/lr``, ``majority/tuned-blocks``), or a report card's grid or tuned board
    (``cards/dyt/majority/lr``, ``cards/dyt/majority/tuned``)."""
    try:
        parsed = parse_key(key)
    except ValueError:
        return False
    if parsed.task != ranking.task:
        return False
    if parsed.card is not None:
        return parsed.kind in (CARD_GRID, CARD_TUNED)
    return (parsed.name or "").startswith((ranking.grid, ranking.tuned))


def of_task(key: str, task: str) -> bool:
    """Whether ``key`` is a board of ``task`` (a text that is no board key is not)."""
    try:
        return board_task(key) == task
    except ValueError:
        return False


def platform_drift(task: str, metric: str, results_dir: Path) -> PlatformDrift | None:
    """The largest drift of ``metric`` between a published per-seed value of ``task`` and an archived replicate of
    its run on another platform (CPU or thread count; ``results/reproducibility.json``), or ``None`` where none is
    measured."""
    path = results_dir / "reproducibility.json"
    if not path.is_file():
        return None
    worst: PlatformDrift | None = None
    for row in json.loads(path.read_text(encoding="utf-8")).get("values") or []:
        board = str(row.get("board") or "")
        if row.get("metric") != metric or not of_task(board, task):
            continue
        if row.get("published") is None or row.get("replicate") is None:
            continue
        drift = abs(float(row["published"]) - float(row["replicate"]))
        if worst is None or drift > worst["drift"]:
            where = f"{board} {row.get('variant')} seed {row.get('seed')}, on {row.get('replicate_platform')}"
            worst = {"drift": drift, "where": where}
    return worst


def drift_comparable(drift: float, margin: float) -> bool:
    """Whether a measured platform drift is comparable to a margin: above a tenth of it (a seed retrained elsewhere
    can then move a verdict near the margin)."""
    return drift > margin / 10


def task_view(task: str, results_dir: Path, queue: dict[tuple[str, str], list[str]]) -> NormTask:
    """One task's section of the norm leaderboard: its protocol, its ranking and its placements table."""
    ranking = TaskRanking.of(task)
    sources = Sources(task, ranking.tuned, results_dir)
    declared = {s.variant for s in ranking.norms} | {s.name for s in ranking.norms}
    cards = [c for c in card_norms(task, results_dir) if c.variant not in declared and c.name not in declared]
    slots = list(ranking.norms) + cards
    rows = rank(slots, sources, ranking, results_dir, queue)
    placements = rank(list(ranking.placements), sources, ranking, results_dir, queue)
    grid = (load_config(task, ranking.grid).get("bench") or {}) if ranking.grid else {}
    n = len(ranking.seeds)
    out: NormTask = {
        "task": task,
        "metric": ranking.metric,
        "better": ranking.better,
        "margin": ranking.margin,
        "judging_preset": ranking.tuned,
        "judging_seeds": list(ranking.seeds),
        "tuning": {
            "preset": ranking.grid,
            "grid": {k: list(v) for k, v in (grid.get("grid") or {}).items()},
            "tuning_seeds": list(grid.get("seeds") or []),
            "choice": grid.get("choice"),
        },
        "shared_rate": next((b.tuned or {}).get("shared") for _, b in sources.boards) if sources.boards else None,
        "resolution": {rate: resolution([r[rate] for r in rows], n) for rate in RATES},
        "norms": rows,
        "placements": placements,
        "boards": [key for key, _ in sources.boards],
        "platform_drift": platform_drift(task, ranking.metric, results_dir),
    }
    # whether the seeds separate any norm from the best (None: fewer than two cells are complete)
    out["separates"] = {
        rate: any(r[rate].get("standing") == "worse" for r in rows)
        if sum(complete(r[rate]) for r in rows) > 1
        else None
        for rate in RATES
    }
    return out


def build_norm_board(results_dir: str | Path = "results", tasks: tuple[str, ...] = TASKS) -> NormBoard:
    """The norm leaderboard document (``results/norms.json``): a pure function of the published boards and cards."""
    root = Path(results_dir)
    queue = queued_boards(root)
    views = [task_view(task, root, queue) for task in tasks]
    sources = sorted({key for view in views for key in view["boards"]})
    built = {key: archive.load_board(root / key).generated_at for key in sources}
    return {"norm_board_version": 1, "tasks": views, "built_from": built}
