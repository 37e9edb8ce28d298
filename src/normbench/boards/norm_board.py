"""The norm leaderboard: which norm is better on each task, on equal terms (``results/norms.md``, ``norms.json``).

A view over every task's tuned protocol. Each task declares, once, in ``bench.norm_board`` of its config: the headline
metric and its direction (``better: higher | lower``), the norms it ranks (name -> the task's variant that stands for
the norm: every norm in the same slots of the block, the attention and the FFN norm) and the placements table; the
margin is the task's card margin (``bench.card.margin``), the judging protocol its ``tuned`` preset (the learning-rate
grid, tuning seeds and choice rule of its ``lr`` preset, the same for every norm). Every published report card's norm
joins the ranking on each task its card ran.

A norm's cell at a rate (its own tuned rate, or the rate all share) reads the per-seed values of the tuned board that
judged it (``results/<task>/tuned/``, ``tuned-blocks/``, ``tuned-card-<norm>/``: the same preset, so the same grid,
tuning seeds, rule and judging seeds): mean, 95% t-interval, finished and failed seeds of the declared n; its standing
is against the best complete cell (best, tied, worse, undecided, in progress: :mod:`normbench.boards.norm_cells`).
Each task states the smallest difference its seeds resolve (:func:`normbench.boards.norm_cells.resolution`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from normbench import archive
from normbench.archive import Board, VariantEntry
from normbench.boards.norm_cells import NormCell, complete, resolution, seed_cell, standings
from normbench.training.config import load_config

if TYPE_CHECKING:  # Python 3.11's; the annotations are never evaluated (``from __future__ import annotations``)
    from typing import NotRequired

TASKS = ("majority", "lm", "sst2")
#: the reader's name of each named card's norm (a plug-in card's norm is named by its class)
CARD_NAMES = {"dyt": "DyT", "scalenorm": "ScaleNorm", "qknorm": "QK-norm", "peri": "peri-norm"}
Rate = Literal["tuned", "shared"]
RATES: tuple[Rate, ...] = ("tuned", "shared")
BETTER = ("higher", "lower")


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


@dataclass(frozen=True)
class NormSlot:
    """One norm of a task's ranking: its reader's ``name`` and the task's ``variant`` that stands for it; ``card``:
    the report card it comes from (``None``: declared by the task)."""

    name: str
    variant: str
    card: str | None = None


@dataclass(frozen=True)
class TaskRanking:
    """What a task ranks (``bench.norm_board`` of its config), typed: see the module docstring."""

    task: str
    metric: str
    better: str
    margin: float
    grid: str
    tuned: str
    seeds: tuple[int, ...]
    norms: tuple[NormSlot, ...]
    placements: tuple[NormSlot, ...]

    @classmethod
    def of(cls, task: str) -> TaskRanking:
        """The ranking ``tasks/<task>.yaml`` declares; a one-line ``ValueError`` naming the field otherwise."""
        bench = load_config(task).get("bench") or {}
        spec = bench.get("norm_board")
        where = f"bench.norm_board (task {task})"
        if not isinstance(spec, dict):
            raise ValueError(f"{where}: the task declares no norm leaderboard")
        known = {"metric", "better", "norms", "placements", "grid", "tuned"}
        unknown = sorted(set(spec) - known)
        if unknown:
            raise ValueError(f"{where}.{unknown[0]}: not a setting; allowed: {', '.join(sorted(known))}")
        if spec.get("better") not in BETTER:
            raise ValueError(f"{where}.better: must be higher or lower, got {spec.get('better')!r}")
        variants = bench.get("variants") or {}
        slots = {}
        for field in ("norms", "placements"):
            entries = spec.get(field) or {}
            if not isinstance(entries, dict):
                raise ValueError(f"{where}.{field}: must map a norm's name to one of the task's variants")
            for name, variant in entries.items():
                if variant not in variants:
                    raise ValueError(f"{where}.{field}.{name}: {variant!r} is not a variant of task {task}")
            slots[field] = tuple(NormSlot(str(n), str(v)) for n, v in entries.items())
        tuned = str(spec.get("tuned", "tuned"))
        card = bench.get("card") or {}
        if "margin" not in card:
            raise ValueError(f"bench.card.margin (task {task}): the norm leaderboard's margin is the card's")
        return cls(
            task=task,
            metric=str(spec.get("metric")),
            better=spec["better"],
            margin=float(card["margin"]),
            grid=str(spec.get("grid", "lr")),
            tuned=tuned,
            seeds=tuple(int(s) for s in (load_config(task, tuned).get("bench") or {}).get("seeds") or ()),
            norms=slots["norms"],
            placements=slots["placements"],
        )


def card_options_text(options: Mapping[str, str | int | float | bool | None]) -> str:
    """``alpha_init=0.0``: a card's options (its ``card.json``), as ``normbench card --options`` took them."""
    words = {True: "true", False: "false", None: "null"}
    return ",".join(
        f"{k}={words.get(v, v) if isinstance(v, (bool, type(None))) else v}" for k, v in sorted(options.items())
    )


def card_norms(task: str, results_dir: Path) -> list[NormSlot]:
    """The norm of every published report card that ran ``task`` at the pre placement (its ``card.json``)."""
    out = []
    for path in sorted((results_dir / "cards").glob("*/card.json")):
        card = json.loads(path.read_text(encoding="utf-8"))
        for entry in card.get("tasks") or []:
            if entry.get("task") == task and entry.get("placement", "pre") == "pre":
                variant = (entry.get("variants") or {}).get("new")
                slug = str(card.get("slug") or path.parent.name)
                name = CARD_NAMES.get(slug) or str(card.get("norm") or slug).rpartition(":")[2]
                if card.get("options"):  # one norm's cards at two option sets: two rows
                    name += f" ({card_options_text(card['options'])})"
                if variant:
                    out.append(NormSlot(name, str(variant), path.parent.name))
    return out


def tuned_boards(task: str, preset: str, results_dir: Path) -> list[tuple[str, Board]]:
    """The task's boards judged at tuned rates in ``preset`` (key, board): the task's own first, then the others by
    name, so a variant several boards share (LayerNorm's runs) is read from the first."""
    folder = results_dir / task
    keys = sorted(p.parent.name for p in folder.glob("*/leaderboard.json"))
    order = sorted(keys, key=lambda k: (k != preset, k != f"{preset}-blocks", k))
    out = []
    for name in order:
        board = archive.load_board(folder / name)
        if board.tuned and board.preset == preset:
            out.append((f"{task}/{name}", board))
    return out


def slots_of(entry: VariantEntry | None) -> dict[str, str] | None:
    """Each norm slot of a variant and the component in it (``attn``: ``scale``), with ``qk`` for QK-norm."""
    if entry is None:
        return None
    out = {role: str(spec.get("component")) for role, spec in entry.norms.items()}
    if entry.qk_norm:
        out["qk"] = "rms"
    return out


def queued_boards(results_dir: Path) -> dict[tuple[str, str], list[str]]:
    """(task, variant) -> the boards of the bake queue (``results/bake.yaml``) that train it."""
    path = results_dir / "bake.yaml"
    if not path.is_file():
        return {}
    import yaml

    out: dict[tuple[str, str], list[str]] = {}
    for item in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("queue") or []:
        for variant in item.get("variants") or []:
            out.setdefault((str(item.get("task")), str(variant)), []).append(str(item.get("board")))
    return out


class Sources:
    """The tuned boards of one task, indexed by the base variant each judges (the first board that judges it)."""

    def __init__(self, task: str, preset: str, results_dir: Path) -> None:
        self.results_dir = results_dir
        self.boards = tuned_boards(task, preset, results_dir)
        self.index: dict[str, tuple[str, Board, dict[str, Any]]] = {}
        for key, board in self.boards:
            for base in (board.tuned or {}).get("bases") or []:
                self.index.setdefault(str(base["base"]), (key, board, base))

    def cell(self, variant: str, rate: str, metric: str, declared: int) -> NormCell:
        """The variant's cell at ``rate`` (``tuned`` or ``shared``), with the board and rate it was read from."""
        found = self.index.get(variant)
        if found is None:
            return {**seed_cell(None, metric, declared), "board": None, "rate": None}
        key, board, base = found
        name = base.get(rate)
        entry = board.by_name.get(str(name)) if name else None
        cell = seed_cell(entry, metric, declared)
        if rate == "tuned" and base.get("waiting"):  # its own grid is not finished: chosen once it is
            cell["waiting"] = f"the rate is not chosen yet: {base['waiting']} ({(board.tuned or {}).get('choice')})"
        elif rate == "tuned" and base.get("chosen") is None:
            cell["no_rate"] = True  # a tuning seed failed at every rate of the grid (or next to it)
        if rate == "tuned" and "waiting" not in cell:
            if waiting := self.choice_waits(board, variant, base.get("chosen")):
                cell["waiting"] = waiting
        rate_value = base.get("chosen") if rate == "tuned" else (board.tuned or {}).get("shared")
        cell.update({"board": key, "rate": rate_value, "variant": name})
        if rate == "tuned":
            cell["at_edge"] = bool(base.get("at_edge"))
        return cell

    def choice_waits(self, board: Board, variant: str, chosen: Any) -> str | None:
        """Why the tuned board's rate for ``variant`` is not the grid's final choice under today's rule, or ``None``:
        the grid board (``tuned.choice``) still waits for tuning seeds, or it now chooses another rate."""
        key = (board.tuned or {}).get("choice")
        if not key or not (self.results_dir / str(key) / "leaderboard.json").is_file():
            return None
        choice = archive.load_board(self.results_dir / str(key)).choice or {}
        group = next((g for g in choice.get("groups") or [] if g.get("base") == variant), None)
        if group is None or "final" not in group:  # a grid built before the tuning budget was declared
            return None
        if not group["final"]:
            lacking = sorted({s for m in group.get("missing") or [] for s in m.get("lacking") or []})
            return f"the choice waits for tuning seed{'s' if len(lacking) > 1 else ''} {', '.join(lacking)} ({key})"
        if group.get("chosen") != chosen:
            return f"re-chosen on {key}: {group.get('chosen')} (was {chosen}); its judging runs are queued"
        return None

    def entry(self, variant: str) -> VariantEntry | None:
        """The board row of the variant at the shared rate (its norms), if any board judges it."""
        found = self.index.get(variant)
        if found is None:
            return None
        _, board, base = found
        return board.by_name.get(str(base.get("shared"))) or board.by_name.get(str(base.get("tuned")))


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
        tuning = (f"{ranking.task}/{ranking.grid}", f"{ranking.task}/{ranking.tuned}")
        row["queued"] = sorted(b for b in set(queue.get((ranking.task, slot.variant), [])) if b.startswith(tuning))
        rows.append(row)
    for rate in RATES:
        standings([r[rate] for r in rows], ranking.better, ranking.margin)
    return rows


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
        if row.get("metric") != metric or not (board == task or board.startswith(f"{task}/")):
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
