"""A BibTeX entry for a leaderboard at the commit that holds it (:func:`citation`)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from normbench.render.citation import bibtex
from normbench.results.tables import Source, read_leaderboard, resolve


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
    board = read_leaderboard(path)
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
