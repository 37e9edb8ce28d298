"""A board's own sections as JSON data: its ``protocol`` beside the paper's (:class:`PaperProtocol`), its paper-style
``tables`` (:class:`PaperTable`), its ``reproducibility`` (:class:`Reproducibility`: platforms and the tolerances a
re-run is held to) and its ``in_progress`` runs (:class:`RunInProgress`). Built by :mod:`normbench.boards.paper`,
:mod:`normbench.boards.build` and :mod:`normbench.boards.progress`.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from normbench.archive.documents.rows import NullBlock, VariantPlatform


class SettingRow(TypedDict):
    """A row of a board's protocol: the ``setting``, its value over this sweep's runs (``this_sweep``) and the
    ``paper``'s."""

    setting: str
    this_sweep: object
    paper: object


class PaperProtocol(TypedDict):
    """A board's protocol beside the paper's (``leaderboard.json``: ``protocol``): its ``settings`` rows and
    ``notes``."""

    settings: list[SettingRow]
    notes: list[str]


class PaperNull(TypedDict):
    """The random-key null at the paper's key counts beside a table row's paper value: ``mean`` (%) at each count of
    ``n`` keys in dimension ``d``."""

    d: int
    n: list[int]
    mean: list[float]


class PaperCell(TypedDict):
    """One measured cell of a paper table: the variant's ``mean`` and ``std`` of the column's metric, scaled (``None``:
    no value), and the random-key null beside it (``chance``, its mean scaled too) where the metric has one."""

    mean: float | None
    std: float | None
    chance: NotRequired[NullBlock]


class PaperRow(TypedDict):
    """One row of a paper table: its ``label``, ``variant`` and ``metric`` template, the ``measured`` cells (one per
    column), the ``paper``'s values and the random-key null beside them (``paper_null``)."""

    label: str
    variant: str
    metric: str
    measured: list[PaperCell]
    paper: list[float | None] | float | None
    paper_null: NotRequired[PaperNull | None]


class PaperTable(TypedDict):
    """A paper-style table of a board (``leaderboard.json``: ``tables[]``; :func:`build_tables`): its ``name`` and
    ``title``, its ``columns`` and the ``paper_column`` beside them, the ``scale`` of the measured values, the
    ``note`` under it (values cited filled in) and its ``rows``."""

    name: str
    title: str
    columns: list[str]
    paper_column: str | None
    scale: float
    note: str
    rows: list[PaperRow]


class DistributionRow(TypedDict):
    """A row of :func:`distribution_table`: metrics compared by their distribution over seeds."""

    metrics: str
    """The metric names' pattern (``fnmatch``)."""
    why: str
    """Why they are compared by distribution."""


class ToleranceRow(TypedDict):
    """A row of :func:`tolerance_table`: the cross-platform tolerance of some metrics."""

    metrics: str
    """The metric names' pattern (``fnmatch``; the last row's is ``*``)."""
    abs: float
    """The absolute part of the tolerance."""
    rel: float
    """The relative part of the tolerance."""
    why: str
    """Why the tolerance is what it is."""


class Reproducibility(TypedDict):
    """What a re-run of a board's runs can be expected to give (a board's ``reproducibility``): the distinct
    ``platforms`` its runs trained on (with their torch), how many runs name none (``runs_without_platform``), why its
    per-seed values do not travel between platforms (``chaotic``, ``None``: they do), and the tolerances a re-run is
    held to (``tolerances``, ``by_distribution``)."""

    platforms: list[VariantPlatform]
    runs_without_platform: int
    chaotic: str | None
    tolerances: list[ToleranceRow]
    by_distribution: list[DistributionRow]


class RunInProgress(TypedDict):
    """An unfinished run of a board (``leaderboard.json``: ``in_progress[]``): its ``variant``, ``seed`` and
    ``config_hash``, its record's ``status``, the ``step`` it has done ``of`` the steps its protocol plans (``None``:
    unknown), the ``platforms`` that trained it in order, and whether its checkpoint is in the run archive
    (``checkpoint_archived``)."""

    variant: str
    seed: int
    config_hash: str | None
    status: str | None
    step: int
    of: int | None
    platforms: list[str]
    checkpoint_archived: bool
