"""Euclidean distance from a point to the convex hull of finitely many points.

    delta(p, {k_j}) = min_{lambda >= 0, sum_j lambda_j = 1} || p - sum_j lambda_j k_j ||

By separating-hyperplane duality delta also equals max_{||v|| = 1} min_j v.(p - k_j) when that is
positive: the best margin by which a unit query can rank p strictly above every k_j. So
delta > 0 iff p can win attention against the k_j, and delta is the margin it wins by.

Solved as non-negative least squares (Lawson and Hanson's least-distance programming): with
P_j = k_j - p and u = t lambda (t = sum u >= 0),

    || [P^T; 1^T] u - [0; 1] ||^2 = t^2 || P^T lambda ||^2 + (t - 1)^2,

so for every t the minimising lambda is the weights of the hull point nearest p, and
delta = || P^T u || / sum(u) at the NNLS solution u. The solver is an exact active-set method
(finitely many steps, each a small least-squares solve): the result depends only on its inputs.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import lsq_linear, nnls


def nearest_hull_weights(others: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Convex weights lambda (m,) of the point of conv(others) nearest ``point``: argmin ||point - others^T lambda||.

    ``others``: (m, d) with m >= 1; ``point``: (d,). float64 throughout.
    """
    m, d = others.shape
    a = np.empty((d + 1, m))
    a[:d] = (others - point).T
    a[d] = 1.0
    target = np.zeros(d + 1)
    target[d] = 1.0
    try:
        u, _ = nnls(a, target, maxiter=50 * (m + d))
    except RuntimeError:  # pragma: no cover - Lawson-Hanson ends within a few (d + 1) steps in practice
        u = lsq_linear(a, target, bounds=(0.0, np.inf), method="bvls").x
    total = u.sum()
    if not total > 0:  # pragma: no cover - u = 0 is never optimal: every column lowers the residual
        u, total = np.full(m, 1.0 / m), 1.0
    return u / total


def hull_distance(others: np.ndarray, point: np.ndarray) -> float:
    """delta = min over convex weights lambda of ||point - others^T lambda|| (0 when point is in the hull)."""
    weights = nearest_hull_weights(others, point)
    return float(np.linalg.norm(weights @ (others - point)))
