"""A published leaderboard found by key or path (:func:`resolve`, :func:`leaderboards`) and read as a long table,
one row per (variant, seed) (:func:`load`)."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from normbench.archive import Board, BoardError, load_board
from normbench.archive.board_keys import CARDS, board_order, key_of_folder, parse_key

FILENAME = "leaderboard.json"
#: the columns of :func:`load` before the metric columns
ID_COLUMNS = ("task", "preset", "variant", "seed", "status", "flagged")
Source = str | os.PathLike[str]


# ---------------------------------------------------------------------------------------------------------------
# finding a leaderboard


def leaderboards(results_dir: str | os.PathLike[str] = "results") -> list[str]:
    """The leaderboards under ``results_dir``, as keys (:mod:`normbench.archive.board_keys`): ``<task>`` (the task's
    own bench), ``<task>/<name>`` (another preset), ``cards/<card>/<task>[/<kind>]`` (a report card's), sorted by
    task; an empty list when ``results_dir`` is not a folder."""
    root = Path(results_dir)
    if not root.is_dir():
        return []
    patterns = ["*", "*/*", f"{CARDS}/*/*", f"{CARDS}/*/*/*"]
    found = {key_of_folder(root, p.parent) for pattern in patterns for p in root.glob(f"{pattern}/{FILENAME}")}
    return sorted((k for k in found if k is not None), key=board_order)


def _available(results_dir: str | os.PathLike[str]) -> str:
    keys = leaderboards(results_dir)
    return (
        f"leaderboards under {os.fspath(results_dir)}: {', '.join(keys)}"
        if keys
        else f"no leaderboards under {os.fspath(results_dir)!r}"
    )


def _looks_like_path(source: Source) -> bool:
    if isinstance(source, os.PathLike):
        return True
    return "/" in source or os.sep in source or source.endswith(".json") or source in (".", "..")


def resolve(source: Source, name: str | None = None, results_dir: str | os.PathLike[str] = "results") -> Path:
    """The ``leaderboard.json`` that ``source`` (and ``name``) designate; see :func:`load` for the forms.

    Raises ``FileNotFoundError`` for a path that does not exist or a folder without a leaderboard.json, and
    ``ValueError`` for an unknown task or name; each message is one line and says what is allowed."""
    if not isinstance(source, (str, os.PathLike)) or (isinstance(source, str) and not source.strip()):
        raise ValueError(f"source: {source!r} is not a task name or a path; {_available(results_dir)}")
    root = Path(results_dir)
    if _looks_like_path(source) or (not (root / source).is_dir() and Path(source).exists()):
        path = Path(source)
        if not path.exists() and isinstance(source, str) and (root / source / FILENAME).is_file():
            path = root / source  # the key form "<task>/<name>", as `leaderboards` lists it
        if name is not None:
            raise ValueError(
                f"name: {name!r} applies to a task name, not to the path {os.fspath(source)!r}; "
                f"give the sub-leaderboard's path instead"
            )
        if not path.exists():
            raise FileNotFoundError(
                f"source: {os.fspath(source)!r} does not exist; give a task name, a "
                f"<task>/<name> key, or a path to a {FILENAME} or its folder ({_available(root)})"
            )
        if path.is_dir():
            if not (path / FILENAME).is_file():
                raise FileNotFoundError(
                    f"source: the folder {os.fspath(path)!r} holds no {FILENAME}; {_available(root)}"
                )
            path = path / FILENAME
        return path
    if not root.is_dir():
        raise FileNotFoundError(
            f"results_dir: {os.fspath(results_dir)!r} is not a folder; pass the folder that "
            f"holds <task>/{FILENAME} (from the repository root, 'results')"
        )
    task_dir = root / source
    if not task_dir.is_dir():
        raise ValueError(f"source: unknown task {source!r} (no folder {os.fspath(task_dir)!r}); {_available(root)}")
    if name is None:
        path = task_dir / FILENAME
        if not path.is_file():
            subs = _names(root, os.fspath(source))
            hint = f"pass name= one of {', '.join(subs)}" if subs else _available(root)
            raise ValueError(
                f"source: task {source!r} has no leaderboard of its own bench ({os.fspath(path)!r} is missing); {hint}"
            )
        return path
    path = task_dir / name / FILENAME
    if "/" in name or os.sep in name or not path.is_file():
        names = _names(root, os.fspath(source))
        allowed = f"one of {', '.join(names)}" if names else "none (this task has only its own bench)"
        raise ValueError(f"name: task {source!r} has no leaderboard named {name!r}; allowed: {allowed}")
    return path


def _names(root: Path, task: str) -> list[str]:
    """The names of the task's boards under ``root`` beside its own bench (``lr``, ``tuned``)."""
    return [str(parsed.name) for parsed in map(parse_key, leaderboards(root)) if parsed.task == task and parsed.name]


def read_leaderboard(path: Path) -> Board:
    try:
        return load_board(path)
    except BoardError as exc:  # one line: "source: '<path>' is not a leaderboard (<the field and what is wrong>)"
        raise ValueError("source: " + str(exc).removeprefix("board: ")) from None


# ---------------------------------------------------------------------------------------------------------------
# load


def _metric_order(board: Board) -> list[str]:
    order = list(board.metrics or {})
    for v in board.variants:
        order += [m for m in v.metrics if m not in order]
    return order


def _number(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return math.nan


def load(source: Source, name: str | None = None, results_dir: str | os.PathLike[str] = "results") -> pd.DataFrame:
    """One leaderboard as a long table: one row per (variant, seed).

    ``source`` is a task name (``"majority"`` reads ``<results_dir>/majority/leaderboard.json``; with
    ``name="modern"``, ``<results_dir>/majority/modern/leaderboard.json``), a ``<task>/<name>`` key as
    :func:`leaderboards` lists them, or a path to a ``leaderboard.json`` or to the folder holding one
    (``name`` then must be ``None``). A relative ``results_dir`` is relative to the working directory.

    Returns a DataFrame with the columns ``task``, ``preset``, ``variant``, ``seed`` (int), ``status``
    (that seed's run status, e.g. ``done``/``diverged``), ``flagged`` (why the seed is flagged, e.g.
    ``"at chance (...)"``, or ``None``), then one float column per metric in the leaderboard's metric
    order (NaN where a seed has no value, e.g. a threshold not reached). Rows follow the leaderboard's
    variant order, then seed order. ``df.attrs`` holds the provenance: ``task``, ``preset``,
    ``generated_at``, ``git_commit``, ``dirty``, ``source`` (the file read), ``metrics`` (the metric
    columns) and ``variants`` (the variant names in order).

    Raises ``ValueError`` (unknown task or name, a file that is not a leaderboard) or
    ``FileNotFoundError`` (a path that does not exist, a folder without a leaderboard.json), each with a
    one-line message naming the argument and what is allowed."""
    path = resolve(source, name, results_dir)
    board = read_leaderboard(path)
    metrics = _metric_order(board)
    columns: dict[str, list[Any]] = {c: [] for c in (*ID_COLUMNS, *metrics)}
    for v in board.variants:
        run_status = v.run_status or {}
        flags = v.flagged or {}
        for i, seed in enumerate(v.seeds):
            columns["task"].append(board.task)
            columns["preset"].append(board.preset)
            columns["variant"].append(v.name)
            columns["seed"].append(seed)
            columns["status"].append(run_status.get(str(seed), v.status))
            columns["flagged"].append(flags.get(str(seed)) or None)
            for m in metrics:
                per_seed = v.metrics[m].per_seed if m in v.metrics else ()
                columns[m].append(_number(per_seed[i]) if i < len(per_seed) else math.nan)
    df = pd.DataFrame(
        {
            c: pd.Series(vals, dtype=("float64" if c in metrics else "int64" if c == "seed" else object))
            for c, vals in columns.items()
        }
    )
    prov = board.provenance
    df.attrs.update(
        {
            "task": board.task,
            "preset": board.preset,
            "generated_at": board.generated_at,
            "git_commit": prov.get("git_commit"),
            "dirty": prov.get("dirty"),
            "source": os.fspath(path),
            "metrics": metrics,
            "variants": [v.name for v in board.variants],
        }
    )
    return df
