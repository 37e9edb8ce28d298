"""The views a sweep's config asks for, as a board stores them (JSON data): ``collapse`` (:class:`CollapseView`),
``choice`` (:class:`ChoiceDoc`), ``tuned`` (:class:`TunedView`), ``reference_runs`` (:class:`ReferenceDoc`),
``matrix`` (:class:`MatrixDoc`) and ``width`` (:class:`WidthDoc`). Built by :mod:`normbench.judge.collapse`,
:mod:`normbench.judge.choice`, :mod:`normbench.judge.tuned`, :mod:`normbench.judge.reference_runs` and the board views
(:mod:`normbench.render.views`); the archive fixes their shape, so a :class:`normbench.archive.board.Board`'s fields
are typed by them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from normbench.archive.documents.rows import MetricRow
from normbench.archive.documents.verdicts import IntervalDoc

if TYPE_CHECKING:  # Python 3.11's; the annotations are never evaluated (``from __future__ import annotations``)
    from typing import NotRequired


class CollapseSpec(TypedDict):
    """``bench.collapse`` as :func:`normbench.judge.collapse.check_spec` reads it (and a board's ``collapse``, with
    ``unavailable``): the leaderboard ``metric`` checked, the ``baseline`` a collapsed run sits at (a name of
    :data:`normbench.judge.collapse.BASELINES`) and the tolerance ``within``."""

    metric: str
    baseline: str
    within: float


class CollapseView(CollapseSpec):
    """A board's ``collapse``: its :class:`CollapseSpec` and the runs whose baseline could not be had
    (``unavailable``, one line each: :func:`normbench.judge.collapse.with_baselines`)."""

    unavailable: list[str]


class ChoiceSpec(TypedDict):
    """``bench.choice`` as :func:`normbench.judge.choice.check_spec` reads it: the grid ``axis``, the ``metric`` the
    choice is made on and its ``goal`` (``min`` or ``max``), the ``report`` metrics shown beside it, the ``rule``
    (:data:`normbench.judge.choice.RULES`), the ``min_seeds`` each value needs and the declared tuning ``seeds``
    (``None``: not declared)."""

    axis: str
    metric: str
    goal: str
    report: list[str]
    rule: str
    min_seeds: int
    seeds: list[str] | None


class ChoiceRow(TypedDict):
    """One grid value of a base variant (a row of a :class:`ChoiceGroup`).

    variant: the variant's name; value: its grid value; seeds: its seeds; metric: its aggregate of the choice's
    metric; report: each report metric's; collapsed: the seeds collapsed or at chance; diverged: seed -> the step it
    diverged at; failed: the seeds whose run failed.
    """

    variant: str
    value: str
    seeds: list[str]
    metric: MetricRow
    report: dict[str, MetricRow]
    collapsed: list[str]
    diverged: dict[str, int | None]
    failed: list[str]


class Excluded(TypedDict):
    """A grid value the rule rules out: the ``value`` and ``why``."""

    value: str
    why: str


class Missing(TypedDict):
    """A grid value short of the tuning budget: the ``value``, the declared seeds it ``lacking`` and the seeds it
    ``have``."""

    value: str
    lacking: list[str]
    have: int


class ChoiceGroup(TypedDict, total=False):
    """One base variant's choice (a group of the choice document); a board built before a key existed lacks it.

    base: the variant's name without the axis; rows: its grid values, in grid order; chosen, chosen_variant: the
    value chosen (or leading) and its variant (``None``: none); measured: the values with a mean; unstable: the values
    where a seed diverged or failed; excluded: the values the rule rules out; at_edge: the chosen value lies on the
    grid's edge; final: the tuning budget is spent (``missing``: the values short of it).
    """

    base: str
    rows: list[ChoiceRow]
    chosen: str | None
    chosen_variant: str | None
    measured: int
    unstable: list[str]
    excluded: list[Excluded]
    at_edge: bool
    final: bool
    missing: list[Missing]


class ChoiceDoc(ChoiceSpec):
    """The choice document (a board's ``choice``: :func:`normbench.judge.choice.build_choice`): its :class:`ChoiceSpec`
    and one :class:`ChoiceGroup` per base variant (``groups``)."""

    groups: list[ChoiceGroup]


class TunedBase(TypedDict, total=False):
    """One base variant of the tuned view (a row of its ``bases``).

    base: the variant's name without the axis; shared, tuned: the variant names of its shared and its chosen point
    (``tuned``: ``None`` until chosen); chosen: the chosen value; at_edge: it lies on the grid's edge;
    tuning_seeds, tuning_value: the seeds and the mean the choice was made on; waiting: why its choice is not made
    yet (absent once it is).
    """

    base: str
    shared: str
    chosen: str | None
    tuned: str | None
    at_edge: bool
    tuning_seeds: list[str]
    tuning_value: float | None
    waiting: str


class TunedView(TypedDict, total=False):
    """The tuned view of a board (a board's ``tuned``: :func:`normbench.judge.tuned.resolve`): the choice board
    (``choice``), its ``axis``, ``metric``, ``goal`` and ``rule`` (where the choice names one), the ``shared`` grid
    value and one :class:`TunedBase` per base variant (``bases``)."""

    choice: str
    axis: str
    metric: str
    goal: str
    rule: str
    shared: str
    bases: list[TunedBase]


class ReferenceScript(TypedDict, total=False):
    """What the reference ran: the ``repository`` at ``commit``, its ``file``, the ``options`` it was run with, the
    ``changes`` made to it and the ``platform`` it ran on."""

    repository: str
    commit: str
    file: str
    options: str
    changes: str
    platform: str


class Side(TypedDict, total=False):
    """One code's seeds of a variant: ``n`` values, their ``mean`` and sample ``std`` (``None``: too few values) and,
    for the reference, its runs' ``seeds`` as its file names them."""

    n: int
    mean: float | None
    std: float | None
    seeds: list[object]


class SeededPair(TypedDict):
    """A reference run trained on a board seed's data and initial weights: the ``seed`` and both values (``None``:
    none)."""

    seed: object
    reference: float | None
    board: float | None


class ReferenceRow(TypedDict):
    """One variant beside its reference group: the ``variant``, the ``group``, both sides (``board``,
    ``reference``), the Welch ``difference`` board − reference (``None``: a side without values) and the ``seeded``
    pairs."""

    variant: str
    group: str
    board: Side
    reference: Side
    difference: IntervalDoc | None
    seeded: list[SeededPair]


class PairDifference(TypedDict):
    """One complete seeded pair: its ``variant``, ``seed`` and ``difference`` board − reference."""

    variant: str
    seed: object
    difference: float


class Paired(TypedDict):
    """Every complete seeded pair together (:func:`normbench.judge.reference_runs.paired`): ``n`` pairs, each one's
    difference (``pairs``), their ``mean`` with its 95% t-interval, the largest |difference| (``max_abs``) and the
    board's sample std over seeds per variant with a pair (``board_std``)."""

    n: int
    pairs: list[PairDifference]
    mean: IntervalDoc | None
    max_abs: float
    board_std: dict[str, float | None]


class ReferenceDoc(TypedDict):
    """A board's ``reference_runs`` (:func:`normbench.judge.reference_runs.build_reference`): the reference ``file`` and
    the board's ``metric``, the reference's ``what``, ``script`` and ``checked`` (``None``, resp. empty, where its file
    has none), one :class:`ReferenceRow` per variant (``rows``) and the seeded pairs together (``paired``: ``None``
    without one)."""

    file: str
    metric: str
    what: str | None
    script: ReferenceScript | None
    checked: list[str]
    rows: list[ReferenceRow]
    paired: Paired | None


class MatrixCell(TypedDict):
    """One planned variant of the matrix (``leaderboard.json``: ``matrix.cells[]``): the ``variant``, its
    ``placement`` and ``component``, its ``planned_seeds`` and finished ``seeds``, its ``status`` (``done``,
    ``flagged``, ``partial: k of n seeds``, ``not run``), ``metrics``: the headline metrics' aggregates and the
    unselectable fraction's (:data:`normbench.render.matrix.UNSELECTABLE`), and ``flagged``: seed -> why, where a seed
    is."""

    variant: str
    placement: str
    component: str
    planned_seeds: list[int]
    seeds: list[int]
    status: str
    metrics: dict[str, MetricRow]
    flagged: NotRequired[dict[str, str]]


class MatrixDoc(TypedDict):
    """The placement x component matrix (``leaderboard.json``: ``matrix``): its ``rows`` (placements) and
    ``columns`` (components), the ``headline`` metrics and the ``unselectable`` metric its cells hold, and one cell per
    planned variant (``cells``)."""

    rows: list[str]
    columns: list[str]
    headline: list[str]
    unselectable: str | None
    cells: list[MatrixCell]


class WidthRow(TypedDict):
    """One planned (base variant, width) of the width axis (``leaderboard.json``: ``width.rows[]``): the ``variant``,
    its ``base`` and ``width``, its ``planned_seeds`` and finished ``seeds``, the network's ``n_layers``; ``metrics``:
    the validation loss's aggregate, the unselectable fraction averaged over layers (``unselectable``), per head
    (``unselectable_heads``) and per layer (``unselectable_L<i>``); ``loss_gap``: the loss minus the reference's at the
    same width, with its 95% Welch interval (``None``: none, or the reference itself)."""

    variant: str
    base: str
    width: int | None
    planned_seeds: list[int]
    seeds: list[int]
    metrics: dict[str, MetricRow]
    n_layers: NotRequired[int]
    loss_gap: NotRequired[IntervalDoc | None]


class WidthDoc(TypedDict):
    """The width axis (``leaderboard.json``: ``width``): the config key of the width (``axis``), the ``reference``
    base variant of the loss gaps, and one row per planned (base variant, width) (``rows``)."""

    axis: str
    reference: str
    rows: list[WidthRow]
