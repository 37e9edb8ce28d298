"""The rows of ``results/reproducibility.json`` (:mod:`normbench.boards.replicates`): each value compared, the drift
reported from elsewhere, the seeds' spread, and per metric the drift measured against its tolerance."""

from __future__ import annotations

from typing import TypedDict


class ReplicateValue(TypedDict):
    """A published per-seed value beside a replicate's (``reproducibility.json``: ``values[]``): the ``board``,
    ``variant``, ``seed`` and ``metric``; the ``published`` value and the ``replicate``'s, the replicate's platform
    (``replicate_platform``) and those of the values the board shows (``published_platforms``); ``seed_std``: the
    metric's std over the variant's seeds; ``chaotic``: why the board's task or preset is chaotic (``None``: it is
    not)."""

    board: str
    variant: str
    seed: int
    metric: str
    published: float
    replicate: float
    replicate_platform: str
    published_platforms: list[str]
    seed_std: float | None
    chaotic: str | None


class ReportedDrift(TypedDict):
    """Drift reported from a platform whose replicates are not archived (``reproducibility.json``: ``reported[]``,
    from :data:`~normbench.boards.replicates.compare.REPORTED`): the ``platform``, ``task`` and ``preset``, the
    ``runs`` compared, the metric ``pattern``, the drift as ``absolute`` or ``relative`` (times the largest published
    value), ``at_least``: a lower bound, and a ``note``."""

    platform: str
    task: str
    preset: str | None
    runs: str
    pattern: str
    absolute: float | None
    relative: float | None
    at_least: bool
    note: str


class SeedSpread(TypedDict):
    """One published metric's spread over seeds (:func:`~normbench.boards.replicates.compare.seed_spreads`):
    ``board``, ``task``, ``variant``, ``metric``, the seeds' ``mean`` and ``std`` and their largest absolute value
    (``max_abs``)."""

    board: str
    task: str
    variant: str
    metric: str
    mean: float
    std: float
    max_abs: float


class Drift(TypedDict):
    """One drift a metric's tolerance answers to: its size (``drift``), the value it was measured ``at``, the
    ``platform``, ``where`` it was measured and whether it is a lower bound (``at_least``)."""

    drift: float
    at: float
    platform: str
    where: str
    at_least: bool


class MetricDrift(TypedDict):
    """Per metric, the drift measured against its tolerance (``reproducibility.json``: ``metrics[]``,
    :func:`~normbench.boards.replicates.drift.summary`).

    ``compared``: the values compared, ``bit_identical`` of them; ``platforms``, ``vendors``: where; ``max_drift``
    (``at_least``: a lower bound) and the ``worst`` run; ``tolerance`` (its declared one at the worst value) and the
    ``needed`` 3x drift; ``ceiling``: a tenth of the smallest seed std (``ceiling_at``: where); the drift in
    tolerances and in tenths of that std; ``by_distribution``: why it is compared by distribution (``None``: by its
    tolerance); ``status`` and whether the rule holds (``rule_holds``).
    """

    metric: str
    compared: int
    bit_identical: int
    platforms: list[str]
    vendors: list[str]
    max_drift: float
    at_least: bool
    worst: str
    tolerance: float
    needed: float
    ceiling: float | None
    ceiling_at: str
    drift_in_tolerances: float | None
    drift_in_seed_std: float | None
    by_distribution: str | None
    status: str
    rule_holds: bool


class ChaoticDrift(TypedDict):
    """The largest drift of a metric on a chaotic board (:func:`~normbench.boards.replicates.drift.chaotic_drift`):
    ``board``, ``metric``, the values ``compared``, ``max_drift``, the ``worst`` run and ``why`` the board is
    chaotic."""

    board: str
    metric: str
    compared: int
    max_drift: float
    worst: str
    why: str | None


class ReproducibilityReport(TypedDict):
    """``results/reproducibility.json``: the drift per metric (``metrics``), the ``reported`` drift and every
    compared value (``values``)."""

    metrics: list[MetricDrift]
    reported: list[ReportedDrift]
    values: list[ReplicateValue]
