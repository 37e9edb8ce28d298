"""What a task's norm leaderboard ranks (:mod:`normbench.boards.norm_board`): the norms its config declares, once, in
``bench.norm_board`` (:class:`TaskRanking`: the headline metric and its direction, the norms ranked and the
placements table, the tuning grid and the judging preset, the card margin), and the norm of every published report
card that ran the task (:func:`card_norms`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from normbench.training.config import load_config

#: the reader's name of each named card's norm (a plug-in card's norm is named by its class)
CARD_NAMES = {"dyt": "DyT", "scalenorm": "ScaleNorm", "qknorm": "QK-norm", "peri": "peri-norm"}
BETTER = ("higher", "lower")


@dataclass(frozen=True)
class NormSlot:
    """One norm of a task's ranking: its reader's ``name`` and the task's ``variant`` that stands for it; ``card``:
    the report card it comes from (``None``: declared by the task)."""

    name: str
    variant: str
    card: str | None = None


@dataclass(frozen=True)
class TaskRanking:
    """What a task ranks (``bench.norm_board`` of its config), typed: see the module docstring of
    :mod:`normbench.boards.norm_board`."""

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
