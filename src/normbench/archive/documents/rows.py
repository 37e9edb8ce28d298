"""A leaderboard's rows as JSON data: a variant's row (:class:`VariantRow`, the JSON of
:class:`normbench.archive.board.VariantEntry`), one of its metrics (:class:`MetricRow`, of
:class:`normbench.archive.board.Metric`) with the random-key null beside it (:class:`NullBlock`), the row's
provenance (:class:`RowProvenance`), and a board's ``provenance`` (:class:`BoardProvenance`), ``failed_runs``
(:class:`FailedRun`) and ``citation`` (:class:`Citation`). Built by :mod:`normbench.judge.rows`.

A row is built key by key and a board written before a key existed lacks it, so every key of a row is optional here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from normbench.archive.record import Platform, Provenance

if TYPE_CHECKING:  # the annotations are never evaluated (``from __future__ import annotations``)
    from normbench.nn.norms.base import NormSpecFields  # the norms' package imports torch


class BoardProvenance(Provenance, total=False):
    """Where and with what a board was built (a board's ``provenance``): the builder's :class:`Provenance`
    (:func:`normbench.training.run.records.provenance`), the ``normbench`` version and the ``wall_time_s`` of its
    variants' runs together."""

    normbench: str
    wall_time_s: float


class Citation(TypedDict):
    """How to cite a board (a board's ``citation``): its ``bibtex`` entry (:func:`normbench.render.citation.bibtex`)."""

    bibtex: str


class FailedRun(TypedDict):
    """A run that failed (an item of a board's ``failed_runs``): its ``variant``, ``seed`` and ``error``."""

    variant: str
    seed: int
    error: str | None


class NullBlock(TypedDict, total=False):
    """The random-key null beside an unselectable fraction (a metric's ``chance``; every key but ``sets``,
    ``target_sem`` and ``target_met`` always there).

    mean, sem: the fraction among random keys of the column's count and dimension, and its standard error (``None``:
        one set drawn, or a mean over layers); sets: the sets drawn.
    target_sem: the standard error it was drawn to (``None``: none, e.g. a sanity check); target_met: whether the
        draws got there (``None`` without a target). A mean of the layers' nulls has neither, nor ``sets``.
    sanity_check: keys on a sphere by construction (0, a check of the geometry, not a chance level).
    basis: what d and n are and what the keys are, in words.
    """

    mean: float
    sem: float | None
    sets: int
    target_sem: float | None
    target_met: bool | None
    sanity_check: bool
    basis: str


class MetricRow(TypedDict, total=False):
    """One metric of one variant aggregated over its seeds (:class:`normbench.archive.Metric`).

    per_seed: each seed's value in the variant's seed order (``None``: none, or the seed does not count).
    n: the values the mean is over; seeds: how many seeds there are, where some do not count.
    mean, std: over the counted seeds (``None`` where a counted seed has no value); always there once built.
    note: why seeds have no value; lower_bound, per_seed_lower_bound: the bound a "first step below" metric's last
        step gives where a seed never reached it.
    without_flagged: the same aggregate without the flagged seeds (``None``: no seed left).
    chance: the random-key null beside an unselectable fraction.
    """

    per_seed: list[float | None]
    n: int
    seeds: int
    mean: float | None
    std: float | None
    note: str
    lower_bound: float
    per_seed_lower_bound: list[float | None]
    without_flagged: MetricRow | None
    chance: NullBlock


class VariantPlatform(Platform, total=False):
    """A platform a variant's runs trained on (an item of its provenance's ``platforms``): the runs'
    :class:`~normbench.archive.record.Platform` block with their ``torch`` version (``None``: not recorded)."""

    torch: str | None


class RowProvenance(TypedDict, total=False):
    """Where and with what a variant's runs were trained, over its seeds.

    git_commits, dirty: the commits and whether a tree was dirty; torch, lightning: the versions; devices, threads,
    world_sizes, global_batch_sizes: how they ran; dates: the first and the last; wall_time_s: their wall time (a
    stack of seeds counted once); log_dirs: each seed's; platforms: the distinct platform blocks with their torch.
    """

    git_commits: list[str]
    dirty: bool
    torch: list[str]
    lightning: list[str]
    devices: list[str]
    threads: list[int]
    world_sizes: list[int]
    global_batch_sizes: list[int | None]
    dates: list[str]
    wall_time_s: float
    log_dirs: list[str | None]
    platforms: list[VariantPlatform]


class VariantRow(TypedDict, total=False):
    """One variant's row of a board (:class:`normbench.archive.VariantEntry`).

    name: the sweep's name of the variant; placement, norms: the norms its network has (role -> norm).
    seeds: the seeds with a finished run; status: theirs (``mixed`` when they differ), per seed in run_status.
    metrics: metric name -> its aggregate over seeds.
    qk_norm, n_layers, norm_roles: attention's QK-norm, the depth and each norm's role; config_hash, final_step: the
        runs' config hash and the last step of the longest.
    diverged_at_step: seed -> the step whose loss was not finite; failed: seed -> the error of a failed run;
        flagged: seed -> why it is flagged; collapsed: the seeds collapsed or at chance; collapse_baseline: seed ->
        its collapse baseline.
    provenance: where its runs were trained; canonical: the board whose values of these runs this board shows;
        published_seeds: board -> the seeds whose values are that board's.
    """

    name: str
    placement: str | None
    norms: dict[str, NormSpecFields]
    seeds: list[int]
    status: str
    run_status: dict[str, str]
    metrics: dict[str, MetricRow]
    qk_norm: bool
    config_hash: str
    final_step: int
    n_layers: int
    norm_roles: dict[str, str]
    diverged_at_step: dict[str, int | None]
    failed: dict[str, str]
    collapse_baseline: dict[str, float | None]
    collapsed: list[str]
    flagged: dict[str, str]
    provenance: RowProvenance
    canonical: str
    published_seeds: dict[str, list[int]]
