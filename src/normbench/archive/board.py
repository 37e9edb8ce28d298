"""A leaderboard (``results/<key>/leaderboard.json``): :class:`Board`, :class:`VariantEntry`, :class:`Metric`.

The contract is the design notes' (task, preset, generated_at, provenance, variants, claims); the views a
sweep adds (matrix, width, choice, collapse...) are kept as the objects their builders give. :func:`load_board`
is the one reader of a ``leaderboard.json``; :func:`dumps_board` the text the writer stores, so a board read
and written again is the same file byte for byte (keys in their order, unknown keys kept). The file is in board
format 2 (:mod:`normbench.archive.compact`: a block that repeats is stored once and referenced); a file in format 1
(every block inline) is still read, and :func:`recompact` rewrites it.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from normbench.archive._json import (
    NUMBER,
    JsonObject,
    SchemaError,
    as_tuple,
    items,
    optional,
    required,
    values,
)
from normbench.archive.claim import JudgedClaim
from normbench.archive.compact import FORMAT, compact, expand
from normbench.archive.documents.rows import BoardProvenance, Citation, FailedRun, NullBlock, RowProvenance
from normbench.archive.documents.sections import PaperProtocol, PaperTable, Reproducibility, RunInProgress
from normbench.archive.documents.views import ChoiceDoc, CollapseView, MatrixDoc, ReferenceDoc, TunedView, WidthDoc
from normbench.io import atomic_write_text, dumps_json_lines

if TYPE_CHECKING:  # the tasks package imports torch; a board's reader needs only the shape
    from normbench.nn.norms.base import NormSpecFields
    from normbench.tasks.series import MetricSpec

FILENAME = "leaderboard.json"


class BoardError(ValueError):
    """A ``leaderboard.json`` that cannot be read or is not the shape of a :class:`Board` (one line).

    ``reason``: what is wrong, without the file's name (e.g. ``board.variants[0]: missing key 'name'``).
    """

    def __init__(self, path: str | os.PathLike, reason: str) -> None:
        super().__init__(f"board: {os.fspath(path)!r} is not a leaderboard ({reason})")
        self.reason = reason


class SweepDefinition(TypedDict):
    """What a sweep is, as its command says it (a board's ``sweep``; :func:`normbench.sweep.folders.sweep_definition`
    builds it, :func:`normbench.sweep.folders.sweep_key` names it): its ``preset``, the ``variants`` it plans (a sweep
    judged at tuned values: their base variants), its ``seeds``, the config ``overrides`` and ``grid`` axes of its
    command line, and the name of its own config file (``config_file``; ``None``: the task's shipped config)."""

    preset: str | None
    variants: list[str]
    seeds: list[int]
    overrides: list[str]
    grid: list[str]
    config_file: str | None


class SupersededClaim(TypedDict):
    """A claim of the build a board replaced, as that build judged it: its ``id`` and ``verdict``, ``measured`` and
    ``per_seed`` (role -> mean, resp. each seed's value) and ``gap_to_paper`` (role -> mean minus the paper's value,
    with its 95% interval; :func:`normbench.judge.claims.paper_gaps`)."""

    id: str
    verdict: str
    measured: Mapping[str, object]
    per_seed: dict[str, list[float | None]] | None
    gap_to_paper: Mapping[str, object] | None


class Supersedes(TypedDict):
    """The build a board replaced as a build of superseded configs (a board's ``supersedes``;
    :func:`normbench.publish.write.superseded_build`): when (``generated_at``) and at which ``git_commit`` it was
    built, ``why`` its configs are superseded, its ``config_hashes`` (variant -> hash) and its ``claims``."""

    generated_at: str
    git_commit: str | None
    why: str
    config_hashes: dict[str, str | None]
    claims: list[SupersededClaim]


class Rejudged(TypedDict):
    """When (``at``) and at which commit (``git_commit``, ``dirty``) a board's or a token report's claims were judged
    again from the values it holds, by which ``normbench`` version (a board's), and ``what`` was recomputed."""

    at: str
    git_commit: str | None
    dirty: bool | None
    normbench: NotRequired[str]
    what: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class Metric(JsonObject):
    """One metric of one variant, aggregated over its seeds (:func:`normbench.judge.stats.aggregate`).

    Attributes:
        per_seed: each seed's value, in the variant's seed order (``None``: no value, e.g. diverged).
        n: the number of seeds in the mean (``seeds``: how many there are, when some do not count, e.g.
            diverged); ``mean``, ``std``: their mean and sample std (``None`` when no
            seed, resp. fewer than two, has a value).
        note: why some seeds have no value (e.g. ``not reached by step 1000``).
        lower_bound, per_seed_lower_bound: for a "first step below" metric that some seed never reached,
            the bound its last step gives (mean and per seed).
        without_flagged: the same aggregate without the flagged seeds (``None``: no seed left).
        chance: the same statistic for random keys, beside an unselectable fraction.
    """

    per_seed: tuple[float | None, ...] = required(list, decode=as_tuple)
    n: int = required(int)
    seeds: int | None = optional(int)
    mean: float | None = required(*NUMBER, type(None))
    std: float | None = required(*NUMBER, type(None))
    note: str | None = optional(str)
    lower_bound: float | None = optional(*NUMBER)
    per_seed_lower_bound: tuple[float | None, ...] | None = optional(list, decode=as_tuple)
    without_flagged: Metric | None = optional(dict, decode=lambda v, where: Metric.from_json(v, where))
    chance: NullBlock | None = optional(dict)

    WHAT = "metric"

    @property
    def seeds_with_value(self) -> int:
        """How many seeds have a value."""
        return sum(v is not None for v in self.per_seed)


@dataclasses.dataclass(frozen=True, kw_only=True)
class VariantEntry(JsonObject):
    """One variant's row of a board: its finished seeds aggregated.

    Attributes:
        name: the sweep's name of the variant; ``placement``, ``norms``: the norms its network has.
        seeds: the seeds with a finished run; ``status``: theirs (``mixed`` when they differ), per seed in
            ``run_status``.
        metrics: metric name -> :class:`Metric`.
        qk_norm: whether attention normalises queries and keys; ``n_layers``: the network's depth;
            ``norm_roles``: each norm's role (block, final, embedding).
        config_hash: the runs' config hash; ``final_step``: the last step of its longest run.
        diverged_at_step: seed -> the step whose loss was not finite; ``failed``: seed -> error of a
            failed run; ``flagged``: seed -> why it is flagged; ``collapsed``: the seeds at chance or
            collapsed; ``collapse_baseline``: seed -> its collapse baseline.
        provenance: commits, dates, devices and platforms of its runs.
        canonical: the board whose values of these runs this board shows (an earlier board published them
            first, with other values from another platform: :mod:`normbench.boards.canonical`).
        published_seeds: board -> the seeds whose values are that board's, published before the run archive kept
            records (:mod:`normbench.boards.published`); the other seeds' come from their records.
    """

    name: str = required(str)
    placement: str | None = required(str, type(None))
    norms: dict[str, NormSpecFields] = required(dict)
    seeds: tuple[int, ...] = required(list, decode=as_tuple)
    status: str = required(str)
    run_status: dict[str, str] | None = optional(dict)
    metrics: dict[str, Metric] = required(dict, decode=values(Metric))
    qk_norm: bool | None = optional(bool)
    config_hash: str | None = optional(str)
    final_step: int | None = optional(int)
    n_layers: int | None = optional(int)
    norm_roles: dict[str, str] | None = optional(dict)
    diverged_at_step: dict[str, int | None] | None = optional(dict)
    failed: dict[str, str] | None = optional(dict)
    collapse_baseline: dict[str, float | None] | None = optional(dict)
    collapsed: list[str] | None = optional(list)
    flagged: dict[str, str] | None = optional(dict)
    provenance: RowProvenance | None = optional(dict)
    canonical: str | None = optional(str)
    published_seeds: dict[str, list[int]] | None = optional(dict)

    WHAT = "variant"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Board(JsonObject):
    """A leaderboard: the finished runs of one sweep, aggregated per variant, with the claims judged on them.

    Attributes:
        task, preset, generated_at, provenance: what was built, when, where and with what.
        protocol: this sweep's settings beside the paper's; ``metrics``: metric name -> its definition
            (``series``, ``at_step`` or ``first_below``); ``columns``: the metrics the Markdown shows.
        variants: the :class:`VariantEntry` rows; ``tables``: paper-style tables; ``claims``: the
            :class:`~normbench.archive.claim.JudgedClaim` list; ``against_chance``: one claim per unselectable
            fraction against its random-key null (:mod:`normbench.judge.chance.rules`).
        reproducibility, collapse, choice, matrix, width, decided_by: the views a sweep's config asks for.
        failed_runs: runs that failed (named, never averaged); ``supersedes``: the build this one replaced.
        sweep_key, sweep: the sweep's key and definition; ``planned_runs``, ``finished_runs``: its size.
        figures: the figures beside the board, in the order the Markdown shows them; ``figure_styles``: file name
            -> the version of its drawing, for figures drawn above style 1
            (:attr:`normbench.render.views.View.style`).
        citation: its BibTeX; ``rejudged``: when and at which commit its claims were judged again.
        uncommitted_code: some runs were trained from a dirty tree (published with ``--force``);
            ``in_progress``: the unfinished runs with their steps ("step k of N") and platforms.
        tuned, tuned_claims: a board judged at a shared and at tuned learning rates (:mod:`normbench.judge.tuned`):
            each base variant's shared and chosen point, and the claims judged at the chosen points (``claims`` then
            holds them at the shared point).
        reference_runs: the board's seeds beside another code's runs of the same protocol
            (:mod:`normbench.judge.reference_runs`).
    """

    task: str = required(str)
    preset: str | None = required(str, type(None))
    generated_at: str = required(str)
    provenance: BoardProvenance = required(dict)
    protocol: PaperProtocol | None = optional(dict)
    metrics: dict[str, MetricSpec] | None = optional(dict)
    columns: tuple[str, ...] | None = optional(list, decode=as_tuple)
    variants: tuple[VariantEntry, ...] = required(list, decode=items(VariantEntry))
    tables: tuple[PaperTable, ...] | None = optional(list, decode=as_tuple)
    claims: tuple[JudgedClaim, ...] = required(list, decode=items(JudgedClaim))
    against_chance: tuple[JudgedClaim, ...] | None = optional(list, decode=items(JudgedClaim))
    reproducibility: Reproducibility | None = optional(dict)
    collapse: CollapseView | None = optional(dict)
    choice: ChoiceDoc | None = optional(dict)
    failed_runs: tuple[FailedRun, ...] | None = optional(list, decode=as_tuple)
    supersedes: Supersedes | None = optional(dict)
    sweep_key: str | None = optional(str)
    sweep: SweepDefinition | None = optional(dict)
    planned_runs: int | None = optional(int)
    finished_runs: int | None = optional(int)
    matrix: MatrixDoc | None = optional(dict)
    width: WidthDoc | None = optional(dict)
    decided_by: dict[str, int] | None = optional(dict)
    figures: tuple[str, ...] | None = optional(list, decode=as_tuple)
    figure_styles: dict[str, int] | None = optional(dict)
    citation: Citation | None = optional(dict)
    rejudged: Rejudged | None = optional(dict)
    uncommitted_code: bool | None = optional(bool)
    in_progress: list[RunInProgress] | None = optional(list)
    tuned: TunedView | None = optional(dict)
    tuned_claims: tuple[JudgedClaim, ...] | None = optional(list, decode=items(JudgedClaim))
    reference_runs: ReferenceDoc | None = optional(dict)

    SCHEMA_VERSION = FORMAT
    WHAT = "board"

    @classmethod
    def from_json(cls, data: Any, where: str | None = None) -> Board:
        """The board of ``data`` in either format (:func:`expand` first: its shared blocks back in their places)."""
        return super().from_json(expand(data, where or cls.WHAT) if isinstance(data, Mapping) else data, where)

    @property
    def by_name(self) -> dict[str, VariantEntry]:
        """The variants by name."""
        return {v.name: v for v in self.variants}

    @property
    def shown_metrics(self) -> list[str]:
        """The metrics the Markdown's tables show: ``columns``, else every defined metric."""
        return list(self.columns or self.metrics or {})

    def replace(self, **changes: Any) -> Board:
        """This board with ``changes`` (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)


def dumps_board(board: Board) -> str:
    """The text the writer stores for ``board``: :func:`compact` strict JSON, one line per top-level key and per item
    of a top-level list or object, a newline at the end. The same board always gives the same text."""
    return dumps_json_lines(compact(board.to_json()))


def board_path(path: str | os.PathLike) -> Path:
    """``path/leaderboard.json`` for a folder, else ``path`` itself."""
    path = Path(path)
    return path / FILENAME if path.is_dir() else path


def load_board(path: str | os.PathLike) -> Board:
    """The board at ``path`` (a ``leaderboard.json`` or the folder holding one).

    ``FileNotFoundError`` when there is none; one-line :class:`BoardError` naming the file and what is
    wrong when it is not JSON, not UTF-8 or not a board (a missing key, a value of the wrong type).
    """
    path = board_path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"board: {os.fspath(path)!r} does not exist") from None
    except UnicodeDecodeError:
        raise BoardError(path, "not a UTF-8 text file") from None
    except OSError as exc:
        raise BoardError(path, f"unreadable: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BoardError(path, f"not JSON: {exc.msg} at line {exc.lineno}") from None
    return parse_board(data, path)


def parse_board(data: Any, path: str | os.PathLike = "leaderboard.json") -> Board:
    """The :class:`Board` of a parsed ``leaderboard.json``; one-line :class:`BoardError` if it is not one."""
    try:
        return Board.from_json(data, "board")
    except SchemaError as exc:
        raise BoardError(path, str(exc)) from None


def recompact(path: str | os.PathLike) -> bool:
    """Rewrite the board at ``path`` (a ``leaderboard.json`` or its folder) in format :data:`FORMAT`, its values as
    they are (checked: the text written reads back as the same :class:`Board`); whether the file changed (one in the
    current format already is left as it is)."""
    path = board_path(path)
    board = load_board(path)
    text = dumps_board(board)
    if path.read_text(encoding="utf-8") == text:
        return False
    if parse_board(json.loads(text), path) != board:
        raise BoardError(path, "its compact form reads back with other values; left as it is")
    atomic_write_text(path, text)
    return True


def recompact_all(results_dir: str | os.PathLike = "results") -> list[Path]:
    """:func:`recompact` every ``leaderboard.json`` under ``results_dir`` (not under ``archive/``), one line each on
    stdout for a file rewritten; returns those files."""
    root = Path(results_dir)
    paths = sorted(p for p in root.rglob(FILENAME) if "archive" not in p.relative_to(root).parts)
    changed = []
    for path in paths:
        before = path.stat().st_size
        if recompact(path):
            changed.append(path)
            print(f"normbench: {path}: {before:,} -> {path.stat().st_size:,} bytes")
    print(f"normbench: {len(changed)} of {len(paths)} boards under {root} rewritten in board format {FORMAT}")
    return changed
