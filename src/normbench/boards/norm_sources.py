"""Where the norm leaderboard reads its cells (:mod:`normbench.boards.norm_board`): a task's boards judged at tuned
rates (:func:`tuned_boards`), indexed by the base variant each judges (:class:`Sources`: a variant's cell at a rate,
and whether its rate still waits on the grid's choice), a variant's norm slots (:func:`slots_of`) and the bake-queue
boards that train it (:func:`queued_boards`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from normbench import archive
from normbench.archive import Board, VariantEntry
from normbench.archive.board_keys import CARDS, board_folder, key_of_folder, parse_key, queues_folder
from normbench.archive.documents.views import TunedBase
from normbench.boards.norm_cells import NormCell, seed_cell


def tuned_boards(task: str, preset: str, results_dir: Path) -> list[tuple[str, Board]]:
    """The task's boards judged at tuned rates in ``preset`` (key, board): the task's own first (``preset``, then
    ``<preset>-blocks``, then the others by name), then the report cards' by card, so a variant several boards share
    (LayerNorm's runs) is read from the first."""
    patterns = [f"{task}/*", f"{CARDS}/*/{task}", f"{CARDS}/*/{task}/*"]
    keys = [key_of_folder(results_dir, p.parent) for g in patterns for p in results_dir.glob(f"{g}/leaderboard.json")]
    parsed = [parse_key(k) for k in keys if k is not None]
    order = sorted(parsed, key=lambda k: (k.card is not None, k.name != preset, k.name != f"{preset}-blocks", k.key))
    out = []
    for key in order:
        board = archive.load_board(key.folder(results_dir))
        if board.tuned and board.preset == preset:
            out.append((key.key, board))
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
    """(task, variant) -> the boards of the bake queue (``queues/bake.yaml``, beside ``results_dir``) that train it."""
    path = queues_folder(results_dir) / "bake.yaml"
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
        self.index: dict[str, tuple[str, Board, TunedBase]] = {}
        for key, board in self.boards:
            for base in (board.tuned or {}).get("bases") or []:
                self.index.setdefault(str(base["base"]), (key, board, base))

    def cell(self, variant: str, rate: str, metric: str, declared: int) -> NormCell:
        """The variant's cell at ``rate`` (``tuned`` or ``shared``), with the board and rate it was read from."""
        found = self.index.get(variant)
        if found is None:
            return {**seed_cell(None, metric, declared), "board": None, "rate": None}
        key, board, base = found
        name = base.get("tuned") if rate == "tuned" else base.get("shared")
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
        if not key or not (board_folder(self.results_dir, str(key)) / "leaderboard.json").is_file():
            return None
        choice = archive.load_board(board_folder(self.results_dir, str(key))).choice
        groups = (choice.get("groups") if choice else None) or []
        group = next((g for g in groups if g.get("base") == variant), None)
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
