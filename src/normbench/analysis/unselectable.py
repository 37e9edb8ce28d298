"""Unselectable keys (Brody et al. 2023, Section 3.2, Theorem 1 and Appendix A).

Key k_i of a set {k_1..k_n} is *selectable* iff some query v gives it the strictly highest score,
v.k_i > v.k_j for all j != i, i.e. iff k_i is a vertex of conv{k_1..k_n} that no other key
duplicates. Otherwise it lies in conv{k_j : j != i} and attention can never rank it first.

Exact decision with certificates, cheapest first:

1. duplicates (both copies are unselectable);
2. vectorised queries that prove keys selectable: v = k_i - centroid for every i at once, a
   batch of random directions (their strict argmax is a vertex), then a few perceptron updates
   v <- v + (k_i - k_j*) of each open key's query against its current best rival j*;
3. in low dimension (d <= 4), Qhull's facet inequalities: a key strictly inside every facet of the
   hull (by more than the tolerance) is unselectable;
4. for each key still open, non-negative least squares on [k_j; 1]_j lambda = [k_i; 1] (first over
   its nearest neighbours, whose weights are already a valid certificate, then all keys): a zero
   residual gives convex weights lambda (unselectable); otherwise the residual r = (v, r0) is a
   separating query (KKT: v.k_j + r0 <= 0 for j != i < v.k_i + r0), so k_i is selectable;
5. an exact LP (scipy HiGHS) only for keys whose certificate is inside the tolerance band.

Tolerance: the keys of each set are centred and measured in units of
s = max_j ||k_j - centroid||. A key is selectable when a unit query beats every other key by more
than ``tol * s``; it is unselectable when convex weights reproduce it to within ``tol * s``.
Decisions are therefore invariant to translating or rescaling a set of keys. Keys closer than
``tol * s`` to the hull of the others count as unselectable. The default ``tol = 1e-13`` sits
well above float64 rounding of these products (~1e-16 s^2) and well below any margin attention
could use; inputs are converted to float64 exactly, so float32 keys are judged as given. The
rare keys left in the band go to HiGHS, whose feasibility tolerance (~1e-9) then applies.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import linprog, nnls
from scipy.spatial import ConvexHull, QhullError

DEFAULT_TOL = 1e-13
LP_TOL = 1e-9  # HiGHS's own feasibility tolerance is ~1e-9: the LP decides to that precision
RANDOM_DIRECTIONS = 64
PERCEPTRON_STEPS = 20
QHULL_MAX_DIM = 4
NEIGHBOURS = 64
COLUMN_ROUNDS = 50


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


def unselectable_mask(keys: Any, tol: float = DEFAULT_TOL, seed: int = 0, stats: dict[str, int] | None = None) -> Any:
    """Boolean mask, True where a key can never receive the strictly highest attention score.

    Args:
        keys: (n, d) or (B, n, d), numpy array or torch tensor.
        tol: relative tolerance (see the module docstring).
        seed: seed of the random certificate directions (the answer does not depend on it).
        stats: if given, filled with how many keys each stage decided.

    Returns:
        (n,) or (B, n) bool, numpy or torch like the input.
    """
    arr, back = _as_numpy(keys)
    _check(arr)
    batched = arr.ndim == 3
    sets = arr if batched else arr[None]
    mask = _unselectable_batch(sets, tol, np.random.default_rng(seed), stats if stats is not None else {})
    return back(mask if batched else mask[0])


def _unselectable_batch(keys: np.ndarray, tol: float, rng: np.random.Generator, stats: dict[str, int]) -> np.ndarray:
    b, n, d = keys.shape
    if n == 0 or b == 0:  # an empty key set: nothing to select, nothing unselectable
        return np.zeros((b, n), dtype=bool)
    centred = keys - keys.mean(axis=1, keepdims=True)
    scale = np.linalg.norm(centred, axis=-1).max(axis=1)  # (B,)
    decided = np.zeros((b, n), dtype=bool)
    unsel = np.zeros((b, n), dtype=bool)
    if n == 1:
        decided[:] = True
        return unsel
    flat = scale == 0  # every key of the set identical: none can win strictly
    unsel[flat] = decided[flat] = True
    safe = np.where(flat, 1.0, scale)
    unit = centred / safe[:, None, None]  # unit-scale keys: max norm 1

    # 1. duplicates: both copies are unselectable. Coordinate differences are exact (no
    # cancellation as in |a|^2 + |b|^2 - 2 a.b), so equal keys are always caught.
    gap = np.zeros((b, n, n))
    for c in range(d):
        np.maximum(gap, np.abs(unit[:, :, None, c] - unit[:, None, :, c]), out=gap)
    np.einsum("bii->bi", gap)[:] = np.inf
    dup = (gap <= tol).any(axis=2) & ~decided
    del gap
    unsel |= dup
    decided |= dup
    stats["duplicates"] = stats.get("duplicates", 0) + int(dup.sum())

    # 2a. own direction v = k_i - centroid, and v = k_i itself (exact for keys on a sphere around
    # the origin, e.g. after LayerNorm or RMSNorm): margin_i = v.k_i - max_{j != i} v.k_j
    raw = keys / np.where(flat, 1.0, np.linalg.norm(keys, axis=-1).max(axis=1))[:, None, None]
    for g in (unit @ unit.transpose(0, 2, 1), raw @ raw.transpose(0, 2, 1)):
        sq_g = np.einsum("bii->bi", g).copy()
        others = g.copy()
        np.einsum("bii->bi", others)[:] = -np.inf
        own = (sq_g - others.max(axis=2) > tol * np.sqrt(sq_g)) & ~decided
        decided |= own
        stats["own_direction"] = stats.get("own_direction", 0) + int(own.sum())

    # 2b. random directions: a strict winner is a vertex
    if (~decided).any():
        dirs = rng.standard_normal((max(RANDOM_DIRECTIONS, 4 * d), d))
        dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
        scores = unit @ dirs.T  # (B, n, m)
        top2 = np.partition(scores, n - 2, axis=1)[:, n - 2 :, :]  # (B, 2, m): runner-up and max
        strict = (top2[:, 1, :] - top2[:, 0, :]) > tol  # (B, m)
        winner = scores.argmax(axis=1)  # (B, m)
        hit = np.zeros((b, n), dtype=bool)
        rows = np.broadcast_to(np.arange(b)[:, None], winner.shape)
        hit[rows[strict], winner[strict]] = True
        hit &= ~decided
        decided |= hit
        stats["random_directions"] = stats.get("random_directions", 0) + int(hit.sum())

    # 2c. perceptron steps on the open keys: v <- v + (k_i - k_j*), j* the current best rival
    if (~decided).any():
        found = _perceptron(unit, decided, tol, PERCEPTRON_STEPS)
        decided |= found
        stats["perceptron"] = stats.get("perceptron", 0) + int(found.sum())

    # 2d. low dimension: Qhull's facets describe conv(keys); a key strictly inside all of them
    # (by more than tol) lies in the hull of the others
    if 2 <= d <= QHULL_MAX_DIM and n > d + 1:
        for s_idx in np.flatnonzero((~decided).any(axis=1)):
            inside = _inside_facets(unit[s_idx], ~decided[s_idx], tol)
            unsel[s_idx] |= inside
            decided[s_idx] |= inside
            stats["qhull"] = stats.get("qhull", 0) + int(inside.sum())

    # 3./4. per-key certificates for what is left
    for s_idx in np.flatnonzero((~decided).any(axis=1)):
        _resolve_set(unit[s_idx], decided[s_idx], unsel[s_idx], dup[s_idx], tol, stats)
    return unsel


def _inside_facets(k: np.ndarray, open_keys: np.ndarray, tol: float) -> np.ndarray:
    """Open keys strictly inside every facet of Qhull's hull of ``k`` (empty if Qhull fails)."""
    try:
        hull = ConvexHull(k)
    except (QhullError, ValueError):
        return np.zeros(len(k), dtype=bool)
    idx = np.flatnonzero(open_keys)
    slack = k[idx] @ hull.equations[:, :-1].T + hull.equations[:, -1]  # <= 0 inside
    inside = np.zeros(len(k), dtype=bool)
    inside[idx] = slack.max(axis=1) < -10 * tol
    inside[hull.vertices] = False
    return inside


def _perceptron(unit: np.ndarray, decided: np.ndarray, tol: float, steps: int) -> np.ndarray:
    """Keys proven selectable by a few perceptron updates of their own query.

    Vectorised over all open keys: one batched matrix product per step for many small sets, one
    BLAS product per set for a few large ones.
    """
    out = np.zeros_like(decided)
    open_sets = np.flatnonzero((~decided).any(axis=1))
    if len(open_sets) <= 64:
        for b in open_sets:
            ks = np.flatnonzero(~decided[b])
            out[b, ks] = _perceptron_one_set(unit[b], ks, tol, steps)
        return out
    sub = unit[open_sets]
    closed = decided[open_sets]
    width = int((~closed).sum(axis=1).max())
    order = np.argsort(closed, axis=1, kind="stable")[:, :width]  # open keys first, padded with closed
    valid = ~np.take_along_axis(closed, order, axis=1)
    keys = np.take_along_axis(sub, order[:, :, None], axis=1)
    won = _perceptron_rows(sub, keys, order, tol, steps) & valid
    rows = np.broadcast_to(open_sets[:, None], order.shape)
    out[rows[won], order[won]] = True
    return out


def _perceptron_one_set(k: np.ndarray, ks: np.ndarray, tol: float, steps: int) -> np.ndarray:
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
        won = (own - scores[rows, rival]) > tol * np.linalg.norm(v, axis=1)
        found[alive[won]] = True
        keep = ~won
        alive, v, rival = alive[keep], v[keep], rival[keep]
        if not len(alive):
            break
        v = v + k[ks[alive]] - k[rival]
    return found


def _perceptron_rows(sets: np.ndarray, keys: np.ndarray, idx: np.ndarray, tol: float, steps: int) -> np.ndarray:
    """sets (B, n, d), keys (B, m, d) = sets[b, idx[b]]; True where key idx beat every rival."""
    v = keys.copy()
    found = np.zeros(idx.shape, dtype=bool)
    bi = np.arange(len(sets))[:, None]
    for _ in range(steps):
        scores = v @ sets.transpose(0, 2, 1)  # (B, m, n)
        own = np.take_along_axis(scores, idx[:, :, None], axis=2)[:, :, 0]
        np.put_along_axis(scores, idx[:, :, None], -np.inf, axis=2)
        rival = scores.argmax(axis=2)
        best = np.take_along_axis(scores, rival[:, :, None], axis=2)[:, :, 0]
        found |= (own - best) > tol * np.linalg.norm(v, axis=2)
        if found.all():
            break
        v = np.where(found[:, :, None], v, v + keys - sets[bi, rival])
    return found


def _resolve_set(k: np.ndarray, decided: np.ndarray, unsel: np.ndarray, dup: np.ndarray, tol: float,
                 stats: dict[str, int]) -> None:
    """Decide the open keys of one unit-scale set in place (NNLS certificates, LP fallback)."""
    n = len(k)
    # Points known to be interior can be dropped from the candidate hull: conv stays the same.
    # Of each group of duplicates one representative stays (it may be a hull vertex).
    active = np.ones(n, dtype=bool)
    seen: list[np.ndarray] = []
    for i in np.flatnonzero(dup):
        if any(np.sum((k[i] - p) ** 2) <= tol**2 for p in seen):
            active[i] = False
        else:
            seen.append(k[i])
    for i in np.flatnonzero(~decided):
        cand = active.copy()
        cand[i] = False
        idx = np.flatnonzero(cand)
        decided[i] = True
        if not len(idx):
            continue
        verdict = _decide_key(k[idx], k[i], tol, stats)
        unsel[i] = verdict
        if verdict:
            active[i] = False


def _decide_key(others: np.ndarray, key: np.ndarray, tol: float, stats: dict[str, int]) -> bool:
    """Unselectable? NNLS by column generation, then the exact LP for the undecided.

    Start from the key's nearest neighbours S. NNLS over S either finds convex weights (a valid
    certificate as it is) or a residual query v; if v beats every other key the key is selectable,
    otherwise the keys that beat it under v join S and NNLS runs again.
    """
    m = len(others)
    if m <= NEIGHBOURS:
        chosen = np.ones(m, dtype=bool)
    else:
        chosen = np.zeros(m, dtype=bool)
        chosen[np.argpartition(np.sum((others - key) ** 2, axis=1), NEIGHBOURS)[:NEIGHBOURS]] = True
    for _ in range(COLUMN_ROUNDS):
        inside, v = _nnls_certificate(others[chosen], key, tol)
        if inside:
            stats["nnls"] = stats.get("nnls", 0) + 1
            return True
        if v is None:
            break
        scores = others @ v
        rivals = np.flatnonzero(~chosen & (scores >= key @ v - 10 * tol * np.linalg.norm(v)))
        if not len(rivals):
            if chosen.all() or _separates(v, key, others, tol):
                stats["nnls"] = stats.get("nnls", 0) + 1
                return False
            break
        chosen[rivals[np.argsort(scores[rivals])[-4 * len(key):]]] = True
    stats["lp"] = stats.get("lp", 0) + 1
    return _lp_inside_hull(others, key, tol)


def _separates(v: np.ndarray, key: np.ndarray, others: np.ndarray, tol: float) -> bool:
    """Does query v give ``key`` a score above every other key's by more than tol * |v|?"""
    return bool(key @ v - (others @ v).max() > 10 * tol * np.linalg.norm(v))


def _nnls_certificate(others: np.ndarray, key: np.ndarray, tol: float) -> tuple[bool, np.ndarray | None]:
    """(True, None) with convex weights found; else (False, residual query v or None)."""
    m, d = others.shape
    a = np.empty((d + 1, m))
    a[:d] = others.T
    a[d] = 1.0
    target = np.empty(d + 1)
    target[:d] = key
    target[d] = 1.0
    weights, _ = nnls(a, target, maxiter=50 * m)
    residual = target - a @ weights
    if abs(residual[d]) <= tol and residual[:d] @ residual[:d] <= tol * tol:
        return True, None
    v = residual[:d]
    return False, (v if v.any() else None)


def _lp_inside_hull(others: np.ndarray, key: np.ndarray, tol: float) -> bool:
    """Exact LP: max margin t of a query v in [-1, 1]^d with v.(k - k_j) >= t; inside iff t <= tol."""
    return max_margin(others, key) <= max(tol, LP_TOL)


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
    """Reference: one HiGHS LP per key (the max-margin query), no shortcuts. Same conventions."""
    arr, back = _as_numpy(keys)
    _check(arr)
    sets = arr if arr.ndim == 3 else arr[None]
    out = np.zeros(sets.shape[:2], dtype=bool)
    for s, k in enumerate(sets):
        centred = k - k.mean(axis=0)
        if len(k) <= 1:
            continue
        scale = np.linalg.norm(centred, axis=1).max()
        if scale == 0:
            out[s] = True
            continue
        unit = centred / scale
        for i in range(len(k)):
            out[s, i] = max_margin(np.delete(unit, i, axis=0), unit[i]) <= max(tol, LP_TOL)
    return back(out if arr.ndim == 3 else out[0])
