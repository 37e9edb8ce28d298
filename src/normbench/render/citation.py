"""A leaderboard's BibTeX entry: what the board is, the commit its runs were built at and, once known, the commit
that contains the file. Imports no torch, so ``normbench cite`` answers at once."""

from __future__ import annotations

import re

from normbench import __version__
from normbench.archive import Board


def board_version(board: Board) -> str:
    """The normbench version that built a leaderboard (older boards: read from their citation), else this one's."""
    if version := board.provenance.get("normbench"):
        return str(version)
    found = re.search(r"normbench (\S+) leaderboard", board.citation.get("bibtex", "") if board.citation else "")
    return found[1] if found else __version__


def bibtex(board: Board, path: str, contained_in: str | None = None) -> str:
    """A BibTeX entry for the leaderboard at ``path`` (``results/<key>/leaderboard.json``): what it is,
    the commit its runs were built at and, once known, ``contained_in``, the commit that contains the file."""
    short = path.removeprefix("results/").removesuffix("/leaderboard.json")
    key = re.sub(r"[^A-Za-z0-9]+", "_", f"normbench_{short}") + (f"_{contained_in[:7]}" if contained_in else "")
    built = board.provenance.get("git_commit") or "unknown"
    note = (
        f"{path} at commit {contained_in} (runs built at commit {built})"
        if contained_in
        else f"{path}, built at commit {built}; `normbench cite {path}` names the commit that contains it"
    )
    version = board_version(board)
    return "\n".join(
        [
            f"@misc{{{key},",
            f"  title = {{normbench {version} leaderboard: {board.task}, preset {board.preset}}},",
            "  author = {{The normbench authors}},",
            f"  year = {{{board.generated_at[:4]}}},",
            f"  version = {{{version}}},",
            f"  note = {{{note}}},",
            "}",
        ]
    )
