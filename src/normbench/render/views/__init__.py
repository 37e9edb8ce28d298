"""Board views: the registry of what a task's ``bench`` block may ask a board to show beside its variants.

A view is one module of this package defining ``VIEW``, a :class:`View`: the ``bench`` key that asks for it (also
the board's field that holds its document), how its spec is checked before anything trains, how its document is
built from the board's variants and the sweep's plan, its Markdown section and its figures. Adding a view is two
files: its module here and the task YAML whose ``bench`` block sets its key. The board is built (``publish``), drawn,
rendered and re-judged (``normbench rejudge``) from this registry alone.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from normbench.archive import Board
from normbench.render.markdown import Lines

ViewDoc = Mapping[str, Any]  # a view's document, as the board's JSON holds it


@dataclass(frozen=True)
class ViewInputs:
    """What a view reads of the sweep whose board is being built.

    Attributes:
        spec: the value of the view's key in the ``bench`` block (``true`` or its mapping).
        board: the board's JSON object so far (its variants, metrics, choice...).
        configs: variant name -> the config its finished runs were trained with.
        planned: variant name -> its planned seeds, every variant of the sweep (finished or not).
        task, preset: what the sweep trained (figure titles).
    """

    spec: Any
    board: Mapping[str, Any]
    configs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    planned: Mapping[str, list[int]] = field(default_factory=dict)
    task: str = ""
    preset: str | None = None

    @property
    def variants(self) -> list[Any]:
        """The board's variant entries (JSON objects)."""
        return list(self.board.get("variants") or [])


def no_check(spec: Any) -> None:
    """A view whose spec needs nothing checked before training."""


def no_section(doc: ViewDoc | None) -> Lines:
    """A view with no Markdown section (its figure is all it shows)."""
    return []


def no_figures(inputs: ViewInputs, doc: ViewDoc | None, out: Path) -> Sequence[Path]:
    """A view that draws nothing."""
    return []


@dataclass(frozen=True)
class View:
    """One board view.

    Attributes:
        key: the ``bench`` key that asks for it; its document, where it builds one, is the board's field ``key``.
        check: ``spec -> None``, a one-line ``ValueError`` naming the field for a bad spec (run when a sweep is
            planned, before it trains).
        build: ``inputs -> document`` stored on the board, or ``None`` for a view that only draws.
        render: ``document -> Markdown lines`` (the board's section; empty for none).
        plot: ``(inputs, document, folder) -> figures`` written into the board's folder.
        order: where it comes among the views (its section and its figures); ``first``: its figures lead the
            board's; ``style``: the version of its drawing, raised when a change should reach the published boards
            (a board records the style of each figure drawn above 1: ``figure_styles``).
    """

    key: str
    order: int
    check: Callable[[Any], None] = no_check
    build: Callable[[ViewInputs], ViewDoc] | None = None
    render: Callable[[ViewDoc | None], Lines] = no_section
    plot: Callable[[ViewInputs, ViewDoc | None, Path], Sequence[Path]] = no_figures
    first: bool = False
    style: int = 1


@cache
def views() -> tuple[View, ...]:
    """Every view of this package's modules, in their ``order``."""
    found = [importlib.import_module(f"{__name__}.{m.name}").VIEW for m in pkgutil.iter_modules(__path__)]
    return tuple(sorted(found, key=lambda v: (v.order, v.key)))


def asked(bench: Mapping[str, Any]) -> list[View]:
    """The views a ``bench`` block asks for (its key set to a true value), in order."""
    return [v for v in views() if bench.get(v.key)]


def check_views(bench: Mapping[str, Any]) -> None:
    """A one-line error for the first view spec of ``bench`` that its view refuses."""
    for view in asked(bench):
        view.check(bench[view.key])


def view_doc(board: Board, key: str) -> ViewDoc | None:
    """The document of view ``key`` on ``board`` (a declared field or one the board keeps as it was)."""
    declared = {f.name for f in dataclasses.fields(Board)}
    value = getattr(board, key, None) if key in declared else board.extra.get(key)
    return value if isinstance(value, Mapping) else None


def sections(board: Board) -> Lines:
    """The Markdown sections of every view the board holds a document of, in order."""
    return [line for view in views() for line in view.render(view_doc(board, view.key))]
