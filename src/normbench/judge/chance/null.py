"""Chance level of every unselectable-key fraction: the same count on random keys.

A leaderboard's unselectable fraction says little on its own: in a low dimension most random
points lie inside the hull of the others anyway (in the plane ~96% of 256 Gaussian points do).
:func:`chance_fraction` counts, with the analyzer every measured column uses
(:func:`normbench.analysis.unselectable.unselectable_mask`, same tolerance), the unselectable keys
among i.i.d. N(0, I_d) keys drawn by the random-key experiment's generator
(:func:`normbench.analysis.random_grid.cell_keys`), in key sets of the sizes the column counted.
Unselectability is invariant under any invertible affine map of a set, so N(0, I_d) stands for
every non-degenerate Gaussian N(mu, Sigma) in d dimensions. Which d and n a leaderboard column's
keys have is read from a run's config by :mod:`normbench.judge.chance.columns`.

**The matched null.** A trained model's keys are compared with random keys of the same count and dimension drawn
with the trained keys' own mean and covariance, N(mu, Sigma). The unselectable count is invariant under an
invertible affine map (a key is a vertex of the hull of a set exactly when its image is one of the image's), and
N(mu, Sigma) = mu + Sigma^(1/2) N(0, I_r) in the r = rank(Sigma) dimensions the keys span, so the matched null *is*
the i.i.d. N(0, I_r) value (:func:`matched_null` draws both and a test holds them equal); the rank is what the
architecture fixes: d, or d - 1 where a projecting norm feeds the keys.

Results are cached as JSON under ``<cache root>/chance/`` (:func:`normbench.io.cache_root`), one file
per (dimensions, set sizes, sets, seed, key distribution, tolerance, version).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
import typing
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, TypedDict

import numpy as np

from normbench.analysis.random_grid import cell_keys
from normbench.analysis.unselectable import DEFAULT_TOL, unselectable_mask
from normbench.io import atomic_write_json, cache_root, params_digest

VERSION = 1  # bump when a cached value would change (the generator, the analyzer's rule, the statistic)
DEFAULT_SETS = 50  # sets of n keys: d = 8, n = 256: about 1 s on two shared CPU cores, standard error ~0.004
DEFAULT_COPIES = 4  # copies of a list of set sizes (each copy is a whole data set: thousands of keys)
PAIRWISE_BUDGET = 4_000_000  # keys squared per analyzer call: its first stage holds (sets, n, n) float64

Keys = Literal["gaussian", "sphere"]


class SetSizes(TypedDict):
    """A list of key-set sizes as a null reports it (its ``n``): how many ``sets``, their ``keys`` in all, the
    smallest and largest (``min``, ``max``) and a ``digest`` of the sorted sizes (what the cache keys on)."""

    sets: int
    keys: int
    min: int
    max: int
    digest: str


class ChanceFraction(TypedDict):
    """The random-key null of :func:`chance_fraction` (cached as its ``result``).

    mean, sem: the fraction of unselectable keys and its standard error over the replicates (``None``: one); sets:
    the replicates, replicate: what one is; d: the dimension (one per layer where they differ); n: the keys per set,
    or the summary of a list of sizes; keys: their distribution; layers, skip_ends: as drawn; statistic: what the
    fraction counts; seed, tol, version: what the value depends on; seconds: the computing time when it was computed.
    """

    mean: float
    sem: float | None
    sets: int
    replicate: str
    d: int | list[int]
    n: int | SetSizes
    keys: Keys
    layers: int
    skip_ends: bool
    statistic: str
    seed: int
    tol: float
    version: int
    seconds: float


class CacheParams(TypedDict):
    """What a cached null is drawn with (the ``params`` of its file under ``<cache root>/chance/``): the ``version``,
    the dimension of each layer (``dims``), the keys per set (or the digest of a list of sizes), the ``sets``, the
    ``seed``, ``skip_ends``, the ``keys``' distribution and the analyzer's ``tol``."""

    version: int
    dims: list[int]
    n: int | str
    sets: int
    seed: int
    skip_ends: bool
    keys: Keys
    tol: float


class NullValue(TypedDict):
    """A null's fraction (``mean``) and its standard error (``sem``, ``None``: one set)."""

    mean: float
    sem: float | None


class MatchedNull(TypedDict, total=False):
    """:func:`matched_null`: the null drawn with the trained keys' own mean and covariance (``matched``) beside the
    i.i.d. value from the same draws (``iid``), the covariance's ``rank``, the keys' dimension ``d``, the keys per
    set ``n`` and the ``sets`` (``matched`` and ``iid`` are added once drawn)."""

    rank: int
    d: int
    n: int
    sets: int
    matched: NullValue
    iid: NullValue


MEAN_FRACTION = "fraction of unselectable keys over all keys of all sets (the column's key-weighted mean)"
ANY_LAYER = (
    "fraction of sentence tokens ([CLS] and the final [SEP] left out) unselectable in at least one layer, "
    "the layers' key sets drawn independently"
)


def chance_fraction(
    d: int,
    n: int | Sequence[int],
    sets: int | None = None,
    seed: int = 0,
    *,
    layers: int = 1,
    skip_ends: bool = False,
    keys: Keys = "gaussian",
) -> ChanceFraction:
    """Expected fraction of unselectable keys among random keys in d dimensions, with its standard error.

    ``n`` an integer: ``sets`` independent sets of n keys (default ``DEFAULT_SETS`` = 50; d = 8,
    n = 256 runs in 5-8 s on two shared CPU cores); ``mean`` is the mean over sets of each set's fraction.
    ``n`` a list of set sizes (variable-length sequences, e.g. sentences): one replicate is one key
    set of every listed size, a copy of the data set, and its fraction counts keys over all its sets
    (as a measured column weights keys); ``sets`` copies (default ``DEFAULT_COPIES`` = 4). The
    result depends on the sizes, not their order.

    Keys are N(0, I_d) from :func:`normbench.analysis.random_grid.cell_keys` (the random-key
    experiment's generator; the first rows of a larger draw are a smaller draw's), or with
    ``keys="sphere"`` the same keys scaled to unit norm. ``layers`` > 1 draws that many independent
    sets per replicate set and counts a key position unselectable in any of them; ``skip_ends``
    leaves each set's first and last position out of the count (SST-2's ``[CLS]`` and ``[SEP]``).
    Decided by :func:`~normbench.analysis.unselectable.unselectable_mask` at its default tolerance.

    Returns a dict: ``mean``, ``sem`` (standard error over the replicates; ``None`` for one),
    ``sets`` (replicates), ``replicate`` (what one is), ``d``, ``n`` (the integer, or a summary of
    the list: sets, keys, min, max, digest), ``keys``, ``layers``, ``skip_ends``, ``statistic``,
    ``seed``, ``tol``, ``version`` and ``seconds`` (computing time when it was computed).
    Deterministic for a seed; cached on disk (``<cache root>/chance/``).
    """
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise ValueError(f"d: must be a positive integer, got {d!r}")
    if isinstance(layers, bool) or not isinstance(layers, int) or layers < 1:
        raise ValueError(f"layers: must be a positive integer, got {layers!r}")
    return chance_of_layers((d,) * layers, n, sets, seed, skip_ends, keys)


def chance_of_layers(
    dims: tuple[int, ...], n: int | Sequence[int], sets: int | None, seed: int, skip_ends: bool, keys: Keys
) -> ChanceFraction:
    """:func:`chance_fraction` with one dimension per layer (a key counts if unselectable in any layer)."""
    sizes, n_out = _sizes(n)
    if sets is None:
        sets = DEFAULT_SETS if isinstance(n_out, int) else DEFAULT_COPIES
    if isinstance(sets, bool) or not isinstance(sets, int) or sets < 1:
        raise ValueError(f"sets: must be a positive integer, got {sets!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: must be an integer >= 0, got {seed!r}")
    if keys not in typing.get_args(Keys):
        raise ValueError(f"keys: choose one of {', '.join(typing.get_args(Keys))}, got {keys!r}")
    if skip_ends and min(sizes) < 3:
        raise ValueError("skip_ends: every set needs at least 3 keys (two ends and one counted key)")
    params: CacheParams = {
        "version": VERSION,
        "dims": list(dims),
        "n": n_out if isinstance(n_out, int) else n_out["digest"],
        "sets": sets,
        "seed": seed,
        "skip_ends": skip_ends,
        "keys": keys,
        "tol": DEFAULT_TOL,
    }
    path = cache_root() / "chance" / f"{params_digest(params)}.json"
    cached = _read(path, params)
    if cached is not None:
        return cached
    start = time.perf_counter()
    fractions = _fractions(dims, sizes, sets, seed, skip_ends, keys)
    sem = float(fractions.std(ddof=1) / math.sqrt(sets)) if sets > 1 else None
    one = "one set of n keys" if isinstance(n_out, int) else "one key set of every listed size (a copy of the data set)"
    result: ChanceFraction = {
        "mean": float(fractions.mean()),
        "sem": sem,
        "sets": sets,
        "replicate": one,
        "d": dims[0] if len(set(dims)) == 1 else list(dims),
        "n": n_out,
        "keys": keys,
        "layers": len(dims),
        "skip_ends": skip_ends,
        "statistic": ANY_LAYER if skip_ends or len(dims) > 1 else MEAN_FRACTION,
        "seed": seed,
        "tol": DEFAULT_TOL,
        "version": VERSION,
        "seconds": round(time.perf_counter() - start, 3),
    }
    atomic_write_json(path, {"params": params, "result": result})
    return result


def _sizes(n: int | Sequence[int]) -> tuple[list[int], int | SetSizes]:
    """(the set sizes, ``n`` as a result reports it) or a one-line error."""
    if isinstance(n, int) and not isinstance(n, bool):
        if n < 1:
            raise ValueError(f"n: must be a positive integer, got {n!r}")
        return [n], n
    sizes = list(n) if isinstance(n, Sequence) and not isinstance(n, str) else None
    if not sizes or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 1 for k in sizes):
        raise ValueError(f"n: must be a positive integer or a non-empty list of them, got {n!r}")
    ordered = sorted(sizes)
    digest = hashlib.sha256(json.dumps(ordered).encode()).hexdigest()[:16]
    return sizes, {"sets": len(sizes), "keys": sum(sizes), "min": ordered[0], "max": ordered[-1], "digest": digest}


def _read(path: Path, params: CacheParams) -> ChanceFraction | None:
    """The cached result for ``params``, or None (absent, unreadable, or another entry's file)."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stored["result"] if isinstance(stored, dict) and stored.get("params") == params else None


def _fractions(
    dims: tuple[int, ...], sizes: list[int], copies: int, seed: int, skip_ends: bool, keys: Keys
) -> np.ndarray:
    """(copies,) fraction of counted key positions unselectable in any layer, per replicate."""
    bad = np.zeros(copies)
    counted = 0
    for n, m in sorted(Counter(sizes).items()):
        hit = np.zeros((copies, m, n), dtype=bool)
        for d, per_d in sorted(Counter(dims).items()):  # layers of one width: one draw, independent rows
            x = cell_keys(d, n, copies * m * per_d, seed)
            if keys == "sphere":
                x /= np.linalg.norm(x, axis=2, keepdims=True)
            hit |= _mask(x).reshape(copies, m, per_d, n).any(axis=2)
        if skip_ends:
            hit = hit[:, :, 1 : n - 1]
        bad += hit.sum(axis=(1, 2))
        counted += m * hit.shape[2]
    return bad / counted


def _mask(x: np.ndarray) -> np.ndarray:
    """``unselectable_mask`` of (B, n, d) sets in chunks (its verdicts do not depend on the batch)."""
    step = max(1, PAIRWISE_BUDGET // (x.shape[1] ** 2))
    return np.concatenate([unselectable_mask(x[i : i + step]) for i in range(0, len(x), step)])


def matched_null(
    keys: np.ndarray, n: int, sets: int = DEFAULT_SETS, seed: int = 0, rank_tol: float = 1e-9
) -> MatchedNull:
    """The matched null of a set of trained ``keys`` (m, d): the unselectable fraction among ``sets`` sets of ``n``
    random keys drawn N(mu, Sigma) with the keys' own mean and covariance, beside the i.i.d. N(0, I_r) value from
    the same standard normal draws, r = the covariance's rank (eigenvalues above ``rank_tol`` times the largest).

    Returns ``matched`` and ``iid`` (each ``mean``, ``sem``), ``rank`` and ``d``. By affine invariance (the module's
    docstring) the two agree up to the analyzer's numerical tolerance; the boards show the i.i.d. value, which needs
    no trained keys, as the null of every column."""
    keys = np.asarray(keys, dtype=np.float64)
    if keys.ndim != 2 or len(keys) < 2:
        raise ValueError(f"keys: need a (m >= 2, d) array of trained keys, got shape {keys.shape}")
    mu, cov = keys.mean(axis=0), np.cov(keys, rowvar=False).reshape(keys.shape[1], keys.shape[1])
    eigval, eigvec = np.linalg.eigh(cov)
    keep = eigval > rank_tol * max(float(eigval.max()), 0.0)
    rank = int(keep.sum())
    if rank < 1:
        raise ValueError("keys: all equal (a covariance of rank 0): no null to draw")
    z = cell_keys(rank, n, sets, seed)  # (sets, n, r) standard normal, the i.i.d. null's own draws
    matched = mu + z @ (eigvec[:, keep] * np.sqrt(eigval[keep])).T
    out: MatchedNull = {"rank": rank, "d": int(keys.shape[1]), "n": n, "sets": sets}
    name: Literal["matched", "iid"]
    for name, x in (("matched", matched), ("iid", z)):
        fractions = _mask(x).mean(axis=1)
        sem = float(fractions.std(ddof=1) / math.sqrt(sets)) if sets > 1 else None
        out[name] = {"mean": float(fractions.mean()), "sem": sem}
    return out
