"""Board keys: the one name of a published leaderboard, and the folder and task it stands for.

A board's key is its folder under the results root (``results/``), as a POSIX path:

* ``<task>``: the task's own bench (``majority``);
* ``<task>/<name>``: another board of the task (``majority/lr``, ``lm/tuned``);
* ``cards/<slug>/<task>``: report card ``<slug>``'s headline runs on the task (``cards/dyt/majority``);
* ``cards/<slug>/<task>/<kind>``: its other boards on the task: ``lr`` (the learning-rate grid), ``tuned`` (the
  claims at each variant's tuned rate), ``post`` (the headline runs at a placement the task does not declare).

:func:`parse_key` reads a key (a one-line error for any other text), :func:`board_folder` gives its folder and
:func:`board_task` its task; :func:`task_key` and :func:`card_key` build keys. The inputs that name boards (the bake
queue, a card's queue and configs) live outside the results root, in :func:`queues_folder`.

Boards published before this layout were ``<task>/card-<slug>`` and ``<task>/<kind>-card-<slug>``;
:func:`migrated_key` gives their keys today (:func:`migrated_text` rewrites a text that names them).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

CARDS = "cards"  # the folder of the report cards under the results root (and of their queues under the queues')
QUEUES = "queues"  # the folder of the inputs beside the results root: the bake queue, the cards' queues and configs
CARD_GRID, CARD_TUNED = "lr", "tuned"  # a card's learning-rate grid and its claims at the tuned rates, on a task
CARD_KINDS = (CARD_GRID, CARD_TUNED, "post")  # a card's boards on a task beside its headline one
PART = r"[A-Za-z0-9_.+=-]+"  # one part of a key: a folder name
_KEY = re.compile(rf"(?!{CARDS}(?:/|$)){PART}(?:/{PART})?|{CARDS}/{PART}/{PART}(?:/{PART})?")


@dataclass(frozen=True)
class BoardKey:
    """A parsed board key: its ``task``, its ``name`` among the task's boards (``None``: the task's own bench), or
    the ``card`` (slug) it belongs to and the card's ``kind`` of board (``""``: the headline runs)."""

    key: str
    task: str
    name: str | None = None
    card: str | None = None
    kind: str = ""

    def folder(self, results_dir: str | os.PathLike[str] = "results") -> Path:
        """The board's folder under ``results_dir``."""
        return Path(results_dir) / self.key


def parse_key(key: str) -> BoardKey:
    """``key`` parsed (the forms of the module docstring); a one-line ``ValueError`` naming the forms otherwise."""
    text = str(key)
    if not _KEY.fullmatch(text) or any(part in (".", "..") for part in text.split("/")):
        raise ValueError(
            f"board: {text!r} must be <task>, <task>/<name>, {CARDS}/<card>/<task> or {CARDS}/<card>/<task>/<kind>"
        )
    parts = text.split("/")
    if parts[0] == CARDS:
        return BoardKey(text, parts[2], card=parts[1], kind=parts[3] if len(parts) == 4 else "")
    return BoardKey(text, parts[0], name=parts[1] if len(parts) == 2 else None)


def board_task(key: str) -> str:
    """The task of board ``key`` (``cards/dyt/majority/lr`` -> ``majority``)."""
    return parse_key(key).task


def board_folder(results_dir: str | os.PathLike[str], key: str) -> Path:
    """The folder of board ``key`` under ``results_dir`` (a one-line ``ValueError`` for a malformed key)."""
    return parse_key(key).folder(results_dir)


def task_key(task: str, name: str | None = None) -> str:
    """The key of the task's board ``name`` (``None``: its own bench); ``name`` may be a whole key of the task
    already (``cards/dyt/majority/lr``)."""
    if name is not None and "/" in name:
        parsed = parse_key(name)
        if parsed.task != task:
            raise ValueError(f"name: {name!r} is a board of task {parsed.task}, not of {task}")
        return parsed.key
    return parse_key(task if name is None else f"{task}/{name}").key


def card_key(card: str, task: str, kind: str = "") -> str:
    """The key of card ``card``'s board on ``task``: its headline runs (``kind`` ``""``), or its ``kind`` of board
    (``lr``, ``tuned``, or a placement: ``post``)."""
    return parse_key("/".join([CARDS, card, task, *([kind] if kind else [])])).key


def key_of_folder(results_dir: str | os.PathLike[str], folder: str | os.PathLike[str]) -> str | None:
    """The key of the board in ``folder`` (a folder under ``results_dir``), or ``None`` where it is not one."""
    try:
        relative = Path(folder).resolve().relative_to(Path(results_dir).resolve()).as_posix()
        return parse_key(relative).key
    except ValueError:
        return None


def results_root(folder: str | os.PathLike[str], task: str) -> Path | None:
    """The results root that holds board folder ``folder`` of ``task``: the farthest folder above it under which its
    path is a key of ``task`` (``results/cards/dyt/majority/lr`` -> ``results``); ``None`` where there is none."""
    folder = Path(folder).resolve()
    for root in reversed(folder.parents):
        try:
            if parse_key(folder.relative_to(root).as_posix()).task == task:
                return root
        except ValueError:
            continue
    return None


def board_order(key: str) -> tuple[str, bool, bool, str]:
    """How boards are listed: by task; the task's own bench, then its other boards, then the cards' boards."""
    parsed = parse_key(key)
    return parsed.task, parsed.key != parsed.task, parsed.card is not None, parsed.key


def queues_folder(results_dir: str | os.PathLike[str] = "results") -> Path:
    """The folder of the inputs that name the boards of ``results_dir``: beside it, ``queues/`` (``results`` ->
    ``queues``)."""
    return Path(results_dir).parent / QUEUES


def card_queue_folder(results_dir: str | os.PathLike[str], card: str) -> Path:
    """The folder of card ``card``'s queue (``bake.yaml``) and its configs (``<task>.yaml``)."""
    return queues_folder(results_dir) / CARDS / card


def migrated_key(key: str) -> str:
    """The key today of a board published before card boards had their card's folder: ``<task>/card-<slug>`` ->
    ``cards/<slug>/<task>``, ``<task>/<kind>-card-<slug>`` -> ``cards/<slug>/<task>/<kind>``; any other key as it
    is."""
    m = re.fullmatch(rf"({PART})/(?:(lr|tuned|post)-)?card-({PART})", key)
    return card_key(m[3], m[1], m[2] or "") if m else key


def migrated_text(text: str, tasks: tuple[str, ...]) -> str:
    """``text`` with every old card board key of ``tasks`` (``majority/lr-card-dyt``, also inside a path such as
    ``results/majority/lr-card-dyt/leaderboard.json``) replaced by its key today (:func:`migrated_key`), and the old
    places of the inputs (``results/bake.yaml``, ``results/cards/<slug>/<name>.yaml``) by their places today."""
    names = "|".join(map(re.escape, tasks))
    old = re.compile(rf"(?<![A-Za-z0-9_.+=-])({names})/(?:(lr|tuned|post)-)?card-([a-z0-9_+=-]+(?:\.[0-9]+)?)")
    text = old.sub(lambda m: card_key(m[3], m[1], m[2] or ""), text)
    text = re.sub(rf"\bresults/{CARDS}/({PART})/((?:bake|{names})\.yaml)", rf"{QUEUES}/{CARDS}/\1/\2", text)
    return re.sub(r"\bresults/bake\.yaml", f"{QUEUES}/bake.yaml", text)
