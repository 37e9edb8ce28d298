"""Unselectable keys (Brody et al. 2023, Section 3.2, Theorem 1 and Appendix A).

Key k_i of a set {k_1..k_n} is *selectable* iff some query v gives it the strictly highest score,
v.k_i > v.k_j for all j != i, i.e. iff k_i is a vertex of conv{k_1..k_n} that no other key
duplicates. Otherwise it lies in conv{k_j : j != i} and attention can never rank it first.

The rule. Each set is measured in its own units: its keys are divided by a power of two
2^e >= max |k| (exact, and safe from overflow or underflow at any magnitude), then centred on
their centroid c and divided by the spread s = max_j ||k_j - c||. In these units let

    delta_i = min_{lambda >= 0, sum lambda = 1} || k_i - sum_{j != i} lambda_j k_j ||

be the distance of k_i from the hull of the others; it equals the best margin
max_{||v|| = 1} (v.k_i - max_{j != i} v.k_j) of a unit query (:mod:`normbench.analysis.hull`).
Key i is unselectable iff delta_i <= tol. The rule is invariant to translating, rotating or
rescaling a set; the default ``tol = 1e-13`` sits well above float64 rounding (~1e-16) and well
below any margin attention could use. Inputs are converted to float64 exactly, so float32 keys
are judged as given, and a torch tensor is judged the same on every device.

One decision, many certificates (cheapest first), each a bound on delta_i:

1. the nearest other key (delta_i <= its distance; duplicates);
2. vectorised queries: v = k_i - c and v = k_i for every i at once, a batch of random unit
   directions (their strict argmax is a vertex), then a few perceptron updates
   v <- v + (k_i - k_j*) of each open key's query against its current best rival j*
   (delta_i >= the margin of any query);
3. in low dimension (d <= 4), Qhull's facets: a key strictly inside every facet of the hull is
   inside the hull of the others (delta_i = 0);
4. per key, the hull of its nearest neighbours, a subset of the others' hull: a point of it near
   the key bounds delta_i from above, the query from that point to the key from below.

A certificate settles a key only when it is clear of the threshold by a factor ``GUARD``: a query
margin above GUARD * tol, a hull point within tol / GUARD. Rounding in the cheap stages (which
depends on the batch a set arrives in and on which stage reaches a key first) is ~1e-16, far
inside that band, so these verdicts are those of the rule. Every other key is decided by
:func:`normbench.analysis.hull.hull_distance` over all other keys of its set, which reads only that
set: the same keys get the same answer whatever the batch, its order, the device, or the stages.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from scipy.optimize import linprog
from scipy.spatial import ConvexHull, QhullError

from normbench.analysis.hull import hull_distance, nearest_hull_weights

DEFAULT_TOL = 1e-13
GUARD = 2.0  # certificates decide outside [tol / GUARD, GUARD * tol]; the exact distance inside it
LP_TOL = 1e-9  # HiGHS's own feasibility tolerance is ~1e-9: the reference LP decides to that precision
RANDOM_DIRECTIONS = 64
PERCEPTRON_STEPS = 20
QHULL_MAX_DIM = 4
NEIGHBOURS = 64
COLUMN_ROUNDS = 20


def check_tol(tol: Any) -> float:
    """``tol`` as a float, or a one-line error naming it: a finite number >= 0."""
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not math.isfinite(tol) or tol < 0:
        raise ValueError(f"tol: must be a finite number >= 0, got {tol!r}")
    return float(tol)


def _as_numpy(keys: Any) -> tuple[np.ndarray, Any]:
    """float64 numpy view of ``keys`` and a function converting a bool mask back to its type."""
    try:
        import torch

        if isinstance(keys, torch.Tensor):
            device = keys.device
            return keys.detach().to("cpu", torch.float64).numpy(), lambda m: torch.from_numpy(m).to(device)
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    return np.asarray(keys, dtype=np.float64), lambda m: m


def _check(keys: np.ndarray) -> None:
    if keys.ndim not in (2, 3):
        raise ValueError(f"keys: expected shape (n, d) or (B, n, d), got {keys.shape}")
    if keys.shape[-1] < 1:
        raise ValueError("keys: dimension d must be >= 1")
    if not np.isfinite(keys).all():
        raise ValueError("keys: contains NaN or infinite values; unselectability is undefined for them")


def set_units(sets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, unit, spread) of key sets (B, n, d), n >= 1: each set in its own units.

    x = k / 2^e with 2^e the power of two just above max |k| (exact: x is k with its exponent
    shifted, |x| < 1); unit = (x - c) / s with c the centroid and s = max_j ||x_j - c|| the
    spread (0 for a set of identical keys, whose ``unit`` is then 0).
    """
    _, exponent = np.frexp(np.abs(sets).max(axis=(1, 2)))
    x = np.ldexp(sets, -exponent[:, None, None])
    centred = x - x.mean(axis=1, keepdims=True)
    spread = np.sqrt(np.einsum("bnd,bnd->bn", centred, centred)).max(axis=1)
    unit = centred / np.where(spread == 0, 1.0, spread)[:, None, None]
    return x, unit, spread


def unselectable_mask(keys: Any, tol: float = DEFAULT_TOL, seed: int = 0, stats: dict[str, int] | None = None) -> Any:
    """Boolean mask, True where a key can never receive the strictly highest attention score.

    True iff the key's distance from the convex hull of the other keys of its set is at most
    ``tol`` in the set's own units (see the module docstring); every count of unselectable keys
    in normbench is a sum of this mask.

    Args:
        keys: (n, d) or (B, n, d), numpy array or torch tensor (any device).
        tol: relative tolerance, a finite number >= 0 (see the module docstring).
        seed: seed of the random certificate directions (the answer does not depend on it).
        stats: if given, filled with how many keys each stage decided.

    Returns:
        (n,) or (B, n) bool, numpy or torch like the input (a tensor on the input's device).
    """
    tol = check_tol(tol)
    arr, back = _as_numpy(keys)
    _check(arr)
    batched = arr.ndim == 3
    sets = arr if batched else arr[None]
    mask = _unselectable_batch(sets, tol, np.random.default_rng(seed), stats if stats is not None else {})
    return back(mask if batched else mask[0])


def _count(stats: dict[str, int], stage: str, found: np.ndarray) -> None:
    stats[stage] = stats.get(stage, 0) + int(found.sum())


def _margins(queries: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """(B, n) margin of query i for key i: (q_i.k_i - max_{j != i} q_i.k_j) / ||q_i|| (nan for q_i = 0)."""
    scores = queries @ unit.transpose(0, 2, 1)  # (B, n, n): [b, i, j] = q_i . k_j
    own = np.einsum("bii->bi", scores).copy()
    np.einsum("bii->bi", scores)[:] = -np.inf
    with np.errstate(invalid="ignore", divide="ignore"):
        return (own - scores.max(axis=2)) / np.linalg.norm(queries, axis=2)


def _unselectable_batch(keys: np.ndarray, tol: float, rng: np.random.Generator, stats: dict[str, int]) -> np.ndarray:
    b, n, d = keys.shape
    if n == 0 or b == 0:  # an empty key set: nothing to select, nothing unselectable
        return np.zeros((b, n), dtype=bool)
    unsel = np.zeros((b, n), dtype=bool)
    if n == 1:  # a lone key wins against nobody: selectable
        return unsel
    x, unit, spread = set_units(keys)
    decided = np.zeros((b, n), dtype=bool)
    flat = spread == 0  # every key of the set identical: none can win strictly
    unsel[flat] = decided[flat] = True
    win, near = GUARD * tol, tol / GUARD  # a certificate settles a key only outside [near, win]

    # 1. the nearest other key bounds delta from above: duplicates (and near-duplicates) are
    # unselectable. Coordinate differences avoid the cancellation of |a|^2 + |b|^2 - 2 a.b.
    sq = np.zeros((b, n, n))
    for c in range(d):
        sq += (unit[:, :, None, c] - unit[:, None, :, c]) ** 2
    np.einsum("bii->bi", sq)[:] = np.inf
    dup = (np.sqrt(sq.min(axis=2)) <= near) & ~decided
    del sq
    unsel |= dup
    decided |= dup
    _count(stats, "duplicates", dup)

    # 2a. own direction v = k_i - c, and v = k_i itself (exact for keys on a sphere around the
    # origin, e.g. after LayerNorm or RMSNorm)
    for queries in (unit, x):
        own = (_margins(queries, unit) > win) & ~decided
        decided |= own
        _count(stats, "own_direction", own)

    # 2b. random unit directions: a strict winner is a vertex
    if (~decided).any():
        dirs = rng.standard_normal((max(RANDOM_DIRECTIONS, 4 * d), d))
        dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
        scores = unit @ dirs.T  # (B, n, m)
        top2 = np.partition(scores, n - 2, axis=1)[:, n - 2 :, :]  # (B, 2, m): runner-up and max
        strict = (top2[:, 1, :] - top2[:, 0, :]) > win  # (B, m)
        winner = scores.argmax(axis=1)  # (B, m)
        hit = np.zeros((b, n), dtype=bool)
        rows = np.broadcast_to(np.arange(b)[:, None], winner.shape)
        hit[rows[strict], winner[strict]] = True
        hit &= ~decided
        decided |= hit
        _count(stats, "random_directions", hit)

    # 2c. perceptron steps on the open keys: v <- v + (k_i - k_j*), j* the current best rival
    if (~decided).any():
        found = _perceptron(unit, decided, win, PERCEPTRON_STEPS)
        decided |= found
        _count(stats, "perceptron", found)

    # 3. low dimension: Qhull's facets describe conv(keys); a key strictly inside all of them
    # lies in the hull of the others
    if 2 <= d <= QHULL_MAX_DIM and n > d + 1:
        for s_idx in np.flatnonzero((~decided).any(axis=1)):
            inside = _inside_facets(unit[s_idx], ~decided[s_idx], win)
            unsel[s_idx] |= inside
            decided[s_idx] |= inside
            _count(stats, "qhull", inside)

    # 4. per key: the hull of its nearest neighbours (a point of it near the key, or the query
    # pointing from it to the key); then the rule itself, the distance from the hull of all others
    # Keys shown unselectable leave the candidate subsets: any subset of the others gives a valid
    # upper bound, and queries are always checked against every other key.
    candidates = ~unsel
    for s_idx, i in zip(*np.nonzero(~decided), strict=False):
        verdict = _neighbour_certificate(unit[s_idx], int(i), candidates[s_idx], near, win)
        if verdict is None:
            verdict = key_distance(x[s_idx], int(i), float(spread[s_idx])) <= tol
            stats["exact"] = stats.get("exact", 0) + 1
        else:
            stats["neighbours"] = stats.get("neighbours", 0) + 1
        unsel[s_idx, i] = verdict
        candidates[s_idx, i] = not verdict
    return unsel


def _neighbour_certificate(unit: np.ndarray, i: int, candidates: np.ndarray, near: float, win: float) -> bool | None:
    """Key i of one set against the hull of a subset S of the other ``candidates`` (large sets only).

    S starts as the key's ``NEIGHBOURS`` nearest candidates. conv(S) lies inside the hull of all
    others, so a point of it within ``near`` of the key settles it unselectable; otherwise the
    direction from that point to the key is a query, which settles it selectable if it beats every
    other key by more than ``win``; if not, the keys that beat it join S (column generation).
    None: not settled within ``COLUMN_ROUNDS`` rounds.
    """
    key, others = unit[i], np.delete(unit, i, axis=0)
    pool = np.flatnonzero(np.delete(candidates, i))
    if len(others) <= NEIGHBOURS or len(pool) <= NEIGHBOURS:  # no cheaper than the exact distance
        return None
    chosen = np.zeros(len(others), dtype=bool)
    chosen[pool[np.argpartition(np.sum((others[pool] - key) ** 2, axis=1), NEIGHBOURS)[:NEIGHBOURS]]] = True
    allowed = np.zeros(len(others), dtype=bool)
    allowed[pool] = True
    for _ in range(COLUMN_ROUNDS):
        subset = others[chosen]
        query = key - nearest_hull_weights(subset, key) @ subset
        length = float(np.linalg.norm(query))
        if length <= near:
            return True
        scores = others @ query
        if (key @ query - scores.max()) / length > win:
            return False
        rivals = np.flatnonzero(allowed & ~chosen & (scores >= key @ query - win * length))
        if not len(rivals):
            return None
        chosen[rivals[np.argsort(scores[rivals])[-4 * len(key) :]]] = True
    return None


def key_distance(x: np.ndarray, i: int, spread: float) -> float:
    """delta_i: distance of key i of one set x (n, d) from the hull of its other keys, in units of ``spread``.

    Reads only this set, in its index order: the same set always gives the same number.
    """
    others = np.delete(x, i, axis=0)
    return hull_distance(others / spread, x[i] / spread)


def _inside_facets(k: np.ndarray, open_keys: np.ndarray, margin: float) -> np.ndarray:
    """Open keys inside every facet of Qhull's hull of ``k`` by more than ``margin`` (none if Qhull fails)."""
    try:
        hull = ConvexHull(k)
    except (QhullError, ValueError):
        return np.zeros(len(k), dtype=bool)
    idx = np.flatnonzero(open_keys)
    slack = k[idx] @ hull.equations[:, :-1].T + hull.equations[:, -1]  # <= 0 inside; unit normals
    inside = np.zeros(len(k), dtype=bool)
    inside[idx] = slack.max(axis=1) < -margin
    inside[hull.vertices] = False
    return inside


def _perceptron(unit: np.ndarray, decided: np.ndarray, win: float, steps: int) -> np.ndarray:
    """Keys proven selectable (a query margin above ``win``) by a few perceptron updates of their own query.

    Vectorised over all open keys: one batched matrix product per step for many small sets, one
    BLAS product per set for a few large ones.
    """
    out = np.zeros_like(decided)
    open_sets = np.flatnonzero((~decided).any(axis=1))
    if len(open_sets) <= 64:
        for b in open_sets:
            ks = np.flatnonzero(~decided[b])
            out[b, ks] = _perceptron_one_set(unit[b], ks, win, steps)
        return out
    sub = unit[open_sets]
    closed = decided[open_sets]
    width = int((~closed).sum(axis=1).max())
    order = np.argsort(closed, axis=1, kind="stable")[:, :width]  # open keys first, padded with closed
    valid = ~np.take_along_axis(closed, order, axis=1)
    keys = np.take_along_axis(sub, order[:, :, None], axis=1)
    won = _perceptron_rows(sub, keys, order, win, steps) & valid
    rows = np.broadcast_to(open_sets[:, None], order.shape)
    out[rows[won], order[won]] = True
    return out


def _perceptron_one_set(k: np.ndarray, ks: np.ndarray, win: float, steps: int) -> np.ndarray:
    """Perceptron certificates for keys ``ks`` of one set; rows drop out as soon as they win."""
    found = np.zeros(len(ks), dtype=bool)
    alive = np.arange(len(ks))
    v = k[ks].copy()
    for _ in range(steps):
        scores = v @ k.T  # (alive, n)
        rows = np.arange(len(alive))
        own = scores[rows, ks[alive]].copy()
        scores[rows, ks[alive]] = -np.inf
        rival = scores.argmax(axis=1)
        won = (own - scores[rows, rival]) > win * np.linalg.norm(v, axis=1)
        found[alive[won]] = True
        keep = ~won
        alive, v, rival = alive[keep], v[keep], rival[keep]
        if not len(alive):
            break
        v = v + k[ks[alive]] - k[rival]
    return found


def _perceptron_rows(sets: np.ndarray, keys: np.ndarray, idx: np.ndarray, win: float, steps: int) -> np.ndarray:
    """sets (B, n, d), keys (B, m, d) = sets[b, idx[b]]; True where key idx beat every rival by more than ``win``."""
    v = keys.copy()
    found = np.zeros(idx.shape, dtype=bool)
    bi = np.arange(len(sets))[:, None]
    for _ in range(steps):
        scores = v @ sets.transpose(0, 2, 1)  # (B, m, n)
        own = np.take_along_axis(scores, idx[:, :, None], axis=2)[:, :, 0]
        np.put_along_axis(scores, idx[:, :, None], -np.inf, axis=2)
        rival = scores.argmax(axis=2)
        best = np.take_along_axis(scores, rival[:, :, None], axis=2)[:, :, 0]
        found |= (own - best) > win * np.linalg.norm(v, axis=2)
        if found.all():
            break
        v = np.where(found[:, :, None], v, v + keys - sets[bi, rival])
    return found


def max_margin(others: np.ndarray, key: np.ndarray) -> float:
    """max_{v in [-1,1]^d} min_j v.(key - others_j), by HiGHS (0 when the key cannot win)."""
    d = len(key)
    diff = key[None, :] - others  # (m, d)
    # variables (v, t); maximise t  <=>  minimise -t;  t - v.diff_j <= 0
    c = np.zeros(d + 1)
    c[-1] = -1.0
    a_ub = np.hstack([-diff, np.ones((len(diff), 1))])
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(len(diff)), bounds=[(-1, 1)] * d + [(None, 1.0)], method="highs")
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded
        raise RuntimeError(f"HiGHS failed on an unselectability LP: {res.message}")
    return float(-res.fun)


def unselectable_mask_lp(keys: Any, tol: float = DEFAULT_TOL) -> Any:
    """Reference: one HiGHS LP per key (its max-margin query in the box [-1, 1]^d), no shortcuts.

    Same units and conventions as :func:`unselectable_mask`, but HiGHS decides only to its own
    precision: a key is unselectable when its best margin is <= max(tol, 1e-9), so keys closer
    than ~1e-9 to the hull of the others can differ from :func:`unselectable_mask`.
    """
    tol = check_tol(tol)
    arr, back = _as_numpy(keys)
    _check(arr)
    sets = arr if arr.ndim == 3 else arr[None]
    out = np.zeros(sets.shape[:2], dtype=bool)
    if sets.shape[1] > 1:
        _, units, spreads = set_units(sets)
        for s, (unit, spread) in enumerate(zip(units, spreads, strict=False)):
            if spread == 0:
                out[s] = True
                continue
            for i in range(len(unit)):
                out[s, i] = max_margin(np.delete(unit, i, axis=0), unit[i]) <= max(tol, LP_TOL)
    return back(out if arr.ndim == 3 else out[0])
