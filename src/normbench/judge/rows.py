"""A leaderboard's rows as the judge reads and completes them, keyed as the board file keys them: a variant's row
(:class:`VariantRow`, the JSON of :class:`normbench.archive.VariantEntry`), one of its metrics aggregated over seeds
(:class:`MetricRow`, the JSON of :class:`normbench.archive.Metric`: :func:`normbench.judge.stats.aggregate` builds it)
and the random-key null beside an unselectable fraction (:class:`NullBlock`:
:func:`normbench.judge.chance.board.with_chance` puts it there).

A row is built key by key and a board written before a key existed lacks it, so every key of a row is optional here.
The board pipeline hands its rows to the judge as JSON objects (:func:`normbench.boards.variants.variant_entry`'s, or
a board's variants read back): :func:`variant_rows` and :func:`rows_by_name` take them as rows of this shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict, cast


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


class NormRow(TypedDict, total=False):
    """One norm of a variant's network, as its records name it (:class:`normbench.nn.norms.NormSpec`'s fields).

    component: the component's name or import path; affine: a learned gain and bias after it; eps: its epsilon;
    options: the component's keyword options.
    """

    component: str
    affine: bool
    eps: float
    options: dict[str, object] | None


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
    platforms: list[dict[str, object]]


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
    norms: dict[str, NormRow]
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


def variant_rows(rows: Sequence[Mapping[str, object]]) -> Sequence[VariantRow]:
    """A board's variant rows as the board pipeline passes them (JSON objects of :class:`VariantRow`'s shape, the
    same objects: a row the judge completes, e.g. with its nulls, is the caller's)."""
    return cast("Sequence[VariantRow]", rows)


def variant_row(row: Mapping[str, object]) -> VariantRow:
    """One of :func:`variant_rows`."""
    return cast(VariantRow, row)


def rows_by_name(rows: Mapping[str, Mapping[str, object]]) -> Mapping[str, VariantRow]:
    """:func:`variant_rows` of rows by variant name."""
    return cast("Mapping[str, VariantRow]", rows)
