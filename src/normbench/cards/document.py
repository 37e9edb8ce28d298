"""A report card's document (``card.json``), typed: its sections (:func:`normbench.cards.build.task_card`), their
learning-rate tuning and their training cost. A card's own schema, in one place below the modules that build and
render it; the parts other modules build are theirs: a network's facts (:mod:`normbench.cards.models`), a verdict
against a baseline (:mod:`normbench.cards.verdicts`), a metric's platform drift
(:mod:`normbench.boards.norm_board`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:  # the annotations are never evaluated (``from __future__ import annotations``): no import at run time
    from typing import NotRequired  # Python 3.11's

    from normbench.archive.documents.sections import RunInProgress
    from normbench.archive.record import Provenance
    from normbench.boards.norm_board import PlatformDrift
    from normbench.cards.models import ExtraParameters, LearnedValue, ModelFacts
    from normbench.cards.probe import NormFactsJson
    from normbench.cards.protocol import OptionValue
    from normbench.cards.verdicts import Comparison
    from normbench.judge.entries import JudgedEntry
    from normbench.judge.rows import MetricRow, RowProvenance


class TaskCost(TypedDict):
    """The new norm's training on one task (:func:`_cost`; ``card.json``: ``tasks[].cost``): ``wall_time_s`` summed
    over its ``runs`` and their mean (``mean_run_s``), how many runs a whole card trains there (``whole_card_runs``),
    and the ``devices`` and ``platforms`` (the distinct platform blocks of their provenance) they ran on."""

    wall_time_s: float
    runs: int
    mean_run_s: float | None
    whole_card_runs: int
    devices: list[str]
    platforms: list[dict[str, object]]


class CardCost(TypedDict):
    """The card's training time (:func:`card_cost`; ``card.json``: ``training_cost``): per task (``tasks``: label ->
    its :class:`TaskCost`), summed (``wall_time_s``, ``None`` where nothing finished) with the ``devices``; the whole
    card's time estimated from the tasks' mean run times (``estimated_whole_card_s``, over ``estimated_tasks``)."""

    tasks: dict[str, TaskCost]
    wall_time_s: float | None
    devices: list[str]
    estimated_whole_card_s: float | None
    estimated_tasks: list[str]


class SectionRuns(TypedDict):
    """A section's board's runs: ``planned``, ``finished`` and those ``in_progress`` (the board's own)."""

    planned: int | None
    finished: int | None
    in_progress: list[RunInProgress]


class NewNormRuns(TypedDict):
    """The new norm's runs on a learning-rate grid: ``finished`` of ``planned``."""

    finished: int
    planned: int


class GridStatus(TypedDict):
    """Where a section's learning-rate grid stands (``tuning.grid``): its board's ``planned`` and ``finished`` runs,
    ``failed_seeds`` (role -> rate -> the seeds that failed there), its tuning ``seeds`` and the new norm's runs
    (``new``)."""

    planned: int | None
    finished: int | None
    failed_seeds: dict[str, dict[str, list[str]]]
    seeds: list[int]
    new: NewNormRuns


class RoleRate(TypedDict):
    """A role's rate on the tuned board: the ``chosen`` learning rate (``None``: none chosen) and whether it sits at
    the grid's edge (``at_edge``)."""

    chosen: str | None
    at_edge: bool | None


class TunedStatus(TypedDict):
    """A section's claims at the tuned rates (``tuning.tuned``): the tuned board's ``planned`` and ``finished`` runs,
    the ``shared`` rate, what the rates were ``chosen_on`` (``metric``, ``goal``), each role's ``rates``, its
    ``headline`` values (metric -> role -> aggregate), ``claims``, their ``comparisons`` and ``failed_by_role``
    (role -> [failed, seeds])."""

    planned: int | None
    finished: int | None
    shared: str | None
    chosen_on: dict[str, str | None]
    rates: dict[str, RoleRate]
    headline: dict[str, dict[str, MetricRow | None]]
    claims: list[JudgedEntry]
    comparisons: dict[str, dict[str, Comparison]]
    failed_by_role: dict[str, list[int]]


class TuningSection(TypedDict):
    """A section's learning-rate tuning (:func:`tuning_section`; ``card.json``: ``tasks[].tuning``): the boards of
    the grid and of the tuned rates (``grid_board``, ``tuned_board``) and where each stands (``grid``, ``tuned``:
    ``None`` before its board is built); ``provenance``: the new norm's runs there, taken into the section's cost
    before the card is written."""

    grid_board: str
    tuned_board: str
    grid: GridStatus | None
    tuned: TunedStatus | None
    provenance: NotRequired[list[RowProvenance]]


class SectionHead(TypedDict):
    """What every section of a card names (``card.json``: ``tasks[]``): the ``task`` and ``placement`` (``label``:
    the task, with the placement where it is not the declared one), the protocol's ``preset``, ``seeds``, ``margin``,
    ``better`` and ``claim_prefix``, the ``variants`` (role -> variant) and its ``board``."""

    task: str
    placement: str
    label: str
    preset: str
    seeds: list[int]
    variants: dict[str, str]
    board: str
    margin: float
    better: str
    claim_prefix: str


class CardSection(SectionHead):
    """One task's section of a card (:func:`task_card`; ``card.json``: ``tasks[]``).

    ``status``: ``not run`` (then ``why``), ``incomplete`` or ``complete``; ``runs``: its board's; ``norms``: role ->
    the network its variant builds, ``extra_parameters``: what the new norm trains beyond the baselines, ``learned``:
    their final values per slot over the seeds (:func:`normbench.cards.models.learned_values`); ``headline``,
    ``thresholds``: metric -> role -> aggregate (``None``: no such variant or metric), ``angle`` the same of the
    ``angle_metric``; ``platform_drift``: metric -> its measured drift; ``claims``: the card's judged claims and their
    ``comparisons``; ``unselectable``: the new norm's per-layer fractions, ``against_chance``: their claims against
    the random-key null; ``new_seeds``, ``failed_seeds`` (seed -> why), ``failed_by_role`` (role -> [failed, seeds]),
    ``diverged_at_step``: the new norm's seeds; ``figures``: the board's; ``tuning``: its claims at the tuned rates;
    ``cost``: the new norm's training; ``built_at``: the board's ``generated_at``.
    """

    status: str
    why: NotRequired[str]
    runs: NotRequired[SectionRuns]
    norms: NotRequired[dict[str, ModelFacts]]
    extra_parameters: NotRequired[list[ExtraParameters]]
    learned: NotRequired[list[LearnedValue]]
    headline: NotRequired[dict[str, dict[str, MetricRow | None]]]
    platform_drift: NotRequired[dict[str, PlatformDrift]]
    claims: NotRequired[list[JudgedEntry]]
    comparisons: NotRequired[dict[str, dict[str, Comparison]]]
    thresholds: NotRequired[dict[str, dict[str, MetricRow | None]]]
    angle_metric: NotRequired[str | None]
    angle: NotRequired[dict[str, MetricRow | None] | None]
    unselectable: NotRequired[dict[str, MetricRow | None]]
    against_chance: NotRequired[list[JudgedEntry]]
    new_seeds: NotRequired[list[int]]
    failed_seeds: NotRequired[dict[str, str]]
    failed_by_role: NotRequired[dict[str, list[int]]]
    diverged_at_step: NotRequired[dict[str, int | None]]
    figures: NotRequired[list[str]]
    tuning: NotRequired[TuningSection | None]
    cost: NotRequired[TaskCost | None]
    built_at: NotRequired[str]


class QueueItem(TypedDict):
    """One item of a card's queue (``queues/cards/<slug>/bake.yaml``: ``queue[]``, :func:`normbench.cards.make.
    plan_card`): the ``board`` it builds on ``task``, its ``preset``, ``variants`` and ``seeds`` (comma-separated), and
    the card's task ``config`` it trains from."""

    board: str
    task: str
    preset: str
    variants: list[str]
    seeds: str
    config: str


class Superseded(TypedDict):
    """A preset's ``bench.superseded`` as a card declares it: ``why`` the runs of ``configs`` (their config hashes)
    are no longer the board's (a string alone: every published config, for that reason)."""

    why: str
    configs: list[str]


class PresetBench(TypedDict, total=False):
    """The ``bench`` block a card's task config gives one preset (``queues/cards/<slug>/<task>.yaml``:
    ``presets.<preset>.bench``): ``claims`` and ``token_report`` left to the card (``None``: the task's are off), at
    the tuned rates ``tuned`` (``choice``: the grid board the rates are chosen on) and ``protocol`` (its ``notes``),
    and ``superseded``: the runs a rebuild may drop (the card's own, or carried from its published config: as that
    file gives it)."""

    claims: None
    token_report: None
    tuned: dict[str, str]
    protocol: dict[str, list[str]]
    superseded: Superseded | str | None


class CardPreset(TypedDict, total=False):
    """One preset of a card's task config: its ``bench`` block."""

    bench: PresetBench


class CardVariants(TypedDict):
    """A card's task config's ``bench``: the card's ``variants`` the task does not define (name -> its overrides,
    config key -> value, :func:`normbench.cards.protocol.card_variant`)."""

    variants: dict[str, dict[str, object]]


class CardConfig(TypedDict):
    """A card's task config (``queues/cards/<slug>/<task>.yaml``, :func:`normbench.cards.make.plan_card`): the task
    it ``extends``, its ``presets`` (name -> what the card changes there) and, where the card adds a variant, its
    ``bench``."""

    extends: str
    presets: dict[str, CardPreset]
    bench: NotRequired[CardVariants]


class CardOptions(TypedDict, total=False):
    """A card's ``options`` (``card.json``; only where its norm has any): its constructor's keywords in every slot."""

    options: dict[str, OptionValue]


class CardJson(CardOptions):
    """A report card (``results/cards/<slug>/card.json``, :meth:`normbench.cards.build.Card.to_json`).

    ``card_version``; the ``normbench`` version and the ``norm``; ``source``: the version of a plug-in norm's code;
    ``slug``: its folder's name; ``generated_at`` and ``provenance``: when and where it was built; ``broken``: why the
    norm is broken (``None``: it is not); ``facts``: width -> what the probe measured; ``summary``: one row per task
    and headline metric; ``tasks``: the sections; ``training_cost``; ``wall_time_s``: the command's own time.
    """

    card_version: int
    normbench: str
    norm: str
    source: str | None
    slug: str
    generated_at: str
    provenance: Provenance
    broken: str | None
    facts: dict[str, NormFactsJson]
    summary: list[dict[str, str]]
    tasks: list[CardSection]
    training_cost: CardCost
    wall_time_s: float
