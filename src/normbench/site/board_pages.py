"""Which boards the documentation publishes: every board under ``results/``, the docs page that shows it
(:func:`page_of`: ``docs/results/lm-width.md`` for ``results/lm/width/``), whether that page exists, and the figures
the site copies.

A board is *published* when the documentation has its page: the tables list those boards, and a link to a board goes
to its page only when that page exists, so a board of one's own sweep (``results/majority/quick-5e097699/``) adds no
link to a missing page.
"""

from __future__ import annotations

from pathlib import Path

from normbench import archive
from normbench.archive import Board
from normbench.archive.board_keys import board_folder
from normbench.site import card_pages

BOARD_FILE = "leaderboard.md"
#: where the figures of the boards lie in the built site, below the docs root
FIGURES = "results/figures"
#: the docs page of each board, relative to the docs root (``results/<key with / as ->.md``)
PAGES = "results"
IMAGE_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg", ".gif")


def boards(results_dir: str | Path = "results") -> list[str]:
    """Every board under ``results_dir``, as keys (``<task>``, ``<task>/<name>``, ``cards/<card>/<task>[/<kind>]``),
    sorted."""
    root = Path(results_dir)
    return sorted(p.parent.relative_to(root).as_posix() for p in root.rglob(BOARD_FILE))


def page_of(key: str) -> str:
    """The docs page (relative to the docs root) that shows board ``key``: ``results/lm-width.md``; a report card's
    board is shown on its card's page (``cards/pnorm/majority`` -> ``cards/pnorm.md``)."""
    return card_pages.page_of_card_board(key) or f"{PAGES}/{key.replace('/', '-')}.md"


def docs_root(results_dir: str | Path = "results", docs_dir: str | Path | None = None) -> Path:
    """The documentation's root: ``docs_dir``, by default ``docs/`` beside ``results_dir``."""
    return Path(docs_dir) if docs_dir is not None else Path(results_dir).resolve().parent / "docs"


def has_page(key: str, results_dir: str | Path = "results", docs_dir: str | Path | None = None) -> bool:
    """Whether board ``key`` is published: the documentation has its page :func:`page_of`."""
    return (docs_root(results_dir, docs_dir) / page_of(key)).is_file()


def published(results_dir: str | Path = "results", docs_dir: str | Path | None = None) -> list[str]:
    """The boards under ``results_dir`` that have a page (a board of one's own sweep has none), sorted."""
    return [key for key in boards(results_dir) if has_page(key, results_dir, docs_dir)]


def figures(results_dir: str | Path = "results") -> list[tuple[str, Path]]:
    """Every figure under ``results_dir`` as (its path in the site, its file): what the site copies."""
    root = Path(results_dir)
    return [
        (f"{FIGURES}/{p.relative_to(root).as_posix()}", p)
        for p in sorted(root.rglob("*"))
        if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()
    ]


def load_board(key: str, results_dir: str | Path = "results") -> Board:
    """Board ``key`` (``results/<key>/leaderboard.json``), read by :func:`normbench.archive.load_board`."""
    return archive.load_board(board_folder(results_dir, key) / "leaderboard.json")
