"""Leaderboards as tables: load ``results/<key>/leaderboard.json`` into pandas, compare two variants.

A leaderboard (the contract in the design notes) lists variants, each with its seeds, each seed's
run status, and per metric the per-seed values. :func:`load` turns one leaderboard into a long table,
one row per (variant, seed); :func:`compare` puts two variants side by side per metric with the
difference of their means, its 95% Welch interval and p-value (the statistics the claims' verdicts
use, :func:`normbench.judge.stats.difference_interval`, over the same per-seed samples);
:func:`format_comparison` renders that for a terminal.

    >>> from normbench import results
    >>> df = results.load("majority")                    # results/majority/leaderboard.json
    >>> df = results.load("majority", name="modern")     # results/majority/modern/leaderboard.json
    >>> df = results.load("cards/dyt/majority/lr")       # a report card's board: results/cards/dyt/majority/lr/
    >>> cmp = results.compare("majority", "pre/both", "pre/scale")
    >>> print(results.format_comparison(cmp, "pre/both", "pre/scale"))
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypedDict

import pandas as pd

from normbench.archive import Board, BoardError, load_board
from normbench.archive.board_keys import CARDS, board_order, key_of_folder, parse_key
from normbench.judge.stats import LEVEL, difference_interval
from normbench.render.citation import bibtex

FILENAME = "leaderboard.json"
#: the columns of :func:`load` before the metric columns
ID_COLUMNS = ("task", "preset", "variant", "seed", "status", "flagged")
#: the columns of :func:`compare` (one row per metric); ``diff`` is mean(b) − mean(a)
COMPARE_COLUMNS = (
    "mean_a",
    "std_a",
    "n_a",
    "mean_b",
    "std_b",
    "n_b",
    "diff",
    "ci_low",
    "ci_high",
    "p_value",
    "significant",
)


class ComparisonRow(TypedDict):
    """One metric's row of :func:`compare` (the columns of ``COMPARE_COLUMNS``): each variant's mean, sample standard
    deviation and seed count, the difference mean(b) − mean(a) with its interval and p-value (NaN where it cannot be
    computed), and whether the interval excludes zero."""

    mean_a: float
    std_a: float
    n_a: int
    mean_b: float
    std_b: float
    n_b: int
    diff: float
    ci_low: float
    ci_high: float
    p_value: float
    significant: bool


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
            subs = _names(root, source)
            hint = f"pass name= one of {', '.join(subs)}" if subs else _available(root)
            raise ValueError(
                f"source: task {source!r} has no leaderboard of its own bench ({os.fspath(path)!r} is missing); {hint}"
            )
        return path
    path = task_dir / name / FILENAME
    if "/" in name or os.sep in name or not path.is_file():
        names = _names(root, source)
        allowed = f"one of {', '.join(names)}" if names else "none (this task has only its own bench)"
        raise ValueError(f"name: task {source!r} has no leaderboard named {name!r}; allowed: {allowed}")
    return path


def _names(root: Path, task: str) -> list[str]:
    """The names of the task's boards under ``root`` beside its own bench (``lr``, ``tuned``)."""
    return [str(parsed.name) for parsed in map(parse_key, leaderboards(root)) if parsed.task == task and parsed.name]


def _read(path: Path) -> Board:
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
    board = _read(path)
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


# ---------------------------------------------------------------------------------------------------------------
# compare


def _describe(sample: Sequence[float]) -> tuple[float, float, int]:
    mean = statistics.fmean(sample) if sample else math.nan
    std = statistics.stdev(sample) if len(sample) > 1 else math.nan
    return mean, std, len(sample)


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def compare(
    source: Source | pd.DataFrame,
    a: str,
    b: str,
    name: str | None = None,
    results_dir: str | os.PathLike[str] = "results",
    metrics: str | Iterable[str] | None = None,
) -> pd.DataFrame:
    """Variants ``a`` and ``b`` side by side, one row per metric; the difference is **b − a** (``a`` is
    the reference: a positive ``diff`` means ``b`` is higher).

    ``source``, ``name`` and ``results_dir`` are as for :func:`load` (``source`` may also be a DataFrame
    that :func:`load` returned); ``metrics`` picks metrics (default: all, in the leaderboard's order).

    Returns a DataFrame indexed by ``metric`` with the columns ``mean_a``, ``std_a``, ``n_a``, ``mean_b``,
    ``std_b``, ``n_b`` (mean, sample std and count over the seeds that have a value; flagged seeds count,
    as in the leaderboard's verdicts), ``diff`` = mean_b − mean_a with its 95% Welch interval ``ci_low``,
    ``ci_high`` and two-sided ``p_value`` (from :func:`normbench.judge.stats.difference_interval`),
    and ``significant`` (the interval excludes 0). NaN where not computable: a mean without values, a std
    or an interval with fewer than two values on a side. ``attrs`` holds ``a``, ``b``,
    ``difference`` (``"b - a"``), ``level`` (0.95) and the provenance of :func:`load`.

    Raises ``ValueError`` with a one-line message for a variant or metric the leaderboard lacks."""
    df = source if isinstance(source, pd.DataFrame) else load(source, name, results_dir)
    variants = list(df.attrs.get("variants") or dict.fromkeys(df["variant"]))
    where = df.attrs.get("source", "the leaderboard")
    for arg, variant in (("a", a), ("b", b)):
        if variant not in variants:
            raise ValueError(f"{arg}: no variant {variant!r} in {where}; variants: {', '.join(variants)}")
    known = list(df.attrs.get("metrics") or [c for c in df.columns if c not in ID_COLUMNS])
    chosen = known if metrics is None else [metrics] if isinstance(metrics, str) else list(metrics)
    unknown = [m for m in chosen if m not in known]
    if unknown:
        raise ValueError(f"metrics: no metric {', '.join(map(repr, unknown))} in {where}; metrics: {', '.join(known)}")
    rows: dict[str, ComparisonRow] = {}
    for m in chosen:
        sa = df.loc[df["variant"] == a, m].dropna().astype(float).tolist()
        sb = df.loc[df["variant"] == b, m].dropna().astype(float).tolist()
        (mean_a, std_a, n_a), (mean_b, std_b, n_b) = _describe(sa), _describe(sb)
        iv = difference_interval(sb, sa, (b, a))
        rows[m] = {
            "mean_a": mean_a,
            "std_a": std_a,
            "n_a": n_a,
            "mean_b": mean_b,
            "std_b": std_b,
            "n_b": n_b,
            "diff": _nan(iv.estimate) if iv else math.nan,
            "ci_low": _nan(iv.low) if iv else math.nan,
            "ci_high": _nan(iv.high) if iv else math.nan,
            "p_value": _nan(iv.p_value) if iv else math.nan,
            "significant": bool(iv and iv.excludes_zero()),
        }
    out = pd.DataFrame.from_dict(rows, orient="index", columns=list(COMPARE_COLUMNS))
    out = out.astype({"n_a": "int64", "n_b": "int64", "significant": bool}) if rows else out
    out.index.name = "metric"
    out.attrs.update({k: v for k, v in df.attrs.items() if k not in ("metrics", "variants")})
    out.attrs.update({"a": a, "b": b, "difference": "b - a", "level": LEVEL})
    return out


def _fmt(value: float, digits: int = 4) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}g}"


def _side(mean: float, std: float, n: int) -> str:
    return f"{_fmt(mean)} ± {_fmt(std)} ({int(n)})" if not math.isnan(mean) else f"- ({int(n)})"


def format_comparison(df: pd.DataFrame, a: str, b: str) -> str:
    """A plain-text table of a :func:`compare` result for the terminal: a header naming the leaderboard,
    ``a``, ``b`` and the direction of the difference (b - a), then one line per metric with each
    variant's mean ± std (n), the difference, its 95% interval and p-value (``*``: the interval excludes
    0; ``-``: not computable). Metrics neither variant measured are named in one closing line instead.
    Returns the text without a trailing newline."""
    where = " ".join(
        filter(
            None, [str(df.attrs.get("task") or ""), f"(preset {df.attrs['preset']})" if df.attrs.get("preset") else ""]
        )
    )
    level = int(round(100 * float(df.attrs.get("level", LEVEL))))
    head = [
        f"{where + ': ' if where else ''}b - a, where a = {a}, b = {b}",
        f"difference b - a with its {level}% Welch interval over seeds; * = interval excludes 0",
    ]
    if df.attrs.get("source"):
        head.append(f"source: {df.attrs['source']}")
    table = [["metric", "a: mean ± std (n)", "b: mean ± std (n)", "b - a", f"{level}% interval", "p"]]
    unmeasured = [str(m) for m, r in df.iterrows() if not r["n_a"] and not r["n_b"]]
    for metric, r in df.iterrows():
        if str(metric) in unmeasured:
            continue
        interval = f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]" if not math.isnan(r["ci_low"]) else "-"
        p = _fmt(r["p_value"], 3) + ("*" if r["significant"] else "")
        table.append(
            [
                str(metric),
                _side(r["mean_a"], r["std_a"], r["n_a"]),
                _side(r["mean_b"], r["std_b"], r["n_b"]),
                _fmt(r["diff"]),
                interval,
                p,
            ]
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = [
        "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=False))
        ).rstrip()
        for row in table
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    tail = ["", f"not measured by either: {', '.join(unmeasured)}"] if unmeasured else []
    return "\n".join([*head, "", *lines, *tail])


def containing_commit(path: str | os.PathLike[str]) -> str | None:
    """The commit that holds ``path`` as it is on disk: the last commit that changed it, when the file is
    tracked and unmodified; ``None`` when it is uncommitted, modified, or not in a git checkout."""
    path = Path(path).resolve()
    try:
        status = subprocess.run(
            ["git", "status", "--porcelain", "--", path.name],
            cwd=path.parent,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        sha = subprocess.run(
            ["git", "log", "-1", "--format=%H", "--", path.name],
            cwd=path.parent,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return sha if sha and not status.strip() else None


def citation(source: Source, name: str | None = None, results_dir: str | os.PathLike[str] = "results") -> str:
    """A BibTeX entry for one leaderboard naming the commit that contains it (see :func:`containing_commit`)
    and the commit its runs were built at. An uncommitted or modified leaderboard is a one-line ``ValueError``:
    there is no commit to cite yet."""
    path = resolve(source, name, results_dir)
    board = _read(path)
    commit = containing_commit(path)
    if commit is None:
        raise ValueError(
            f"source: {os.fspath(path)!r} is not committed as it is (uncommitted, modified or outside "
            f"a git checkout); commit it first, then cite that commit"
        )
    relative = path.as_posix()
    if "results/" in relative:
        relative = "results/" + relative.rsplit("results/", 1)[1]
    return bibtex(board, relative, contained_in=commit)
