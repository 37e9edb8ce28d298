"""The random-key experiment of Brody et al. (2023), Figure 1c/1d.

For every (d, n) cell, ``runs`` sets of n keys are drawn i.i.d. from N(0, I_d), once as they are
and once after LayerNorm (projection + scaling, eps = 0, no affine). Two statistics are kept per
cell, because the paper's text and the authors' script differ:

* ``mean_fraction``: the mean over runs of the fraction of unselectable keys in a run
  (what the caption describes: "the average fraction of unselectable key vectors");
* ``any_fraction``: the fraction of runs with at least one unselectable key
  (what the authors' script computed).

A third set, ``layernorm_eps``, applies LayerNorm with PyTorch's default eps = 1e-5: a key with
variance v gets norm sqrt(d v / (v + eps)) < sqrt(d), so a low-variance key falls inside the sphere
the others lie on and can become unselectable (normbench's own check, not in the paper).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import NotRequired, TypedDict

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from normbench.analysis.unselectable import unselectable_mask
from normbench.io import show_bars


class GridStats(TypedDict):
    """One set of keys' statistics over the grid, each indexed ``[d][n]``: ``mean_fraction``, the mean over runs of
    a run's fraction of unselectable keys, and ``any_fraction``, the fraction of runs with at least one."""

    mean_fraction: list[list[float]]
    any_fraction: list[list[float]]


class RandomGrid(TypedDict):
    """The random grid (:func:`random_grid`; ``results/unselectable/random_grid.json``, with the ``provenance`` of
    the build that wrote it).

    ns, ds: the key counts n and dimensions d of its cells; runs: random sets per cell; seed: the seed of every
    cell's draws. layernorm, layernorm_eps: what the LayerNorm sets apply (eps = 0, and ``eps``).
    stats: set (``raw``, ``layernorm``, ``layernorm_eps``) -> its :class:`GridStats`. decided_by: how many keys
    each stage of the decision decided; wall_time_s: the whole grid's time, seconds_by_d: d -> its row's time.
    A grid written before the eps set has no ``layernorm_eps``, ``eps`` or ``seconds_by_d``.
    """

    ns: list[int]
    ds: list[int]
    runs: int
    seed: int
    layernorm: str
    layernorm_eps: NotRequired[str]
    eps: NotRequired[float]
    stats: dict[str, GridStats]
    decided_by: dict[str, int]
    wall_time_s: float
    seconds_by_d: NotRequired[dict[str, float]]


def cell_keys(d: int, n: int, runs: int, seed: int) -> np.ndarray:
    """The (runs, n, d) standard-normal keys of one cell; independent of the grid's other cells."""
    return np.random.default_rng([seed, d, n]).standard_normal((runs, n, d))


def layer_norm_keys(keys: np.ndarray, eps: float = 0.0) -> np.ndarray:
    """LayerNorm without affine: (k - mean) / sqrt(var + eps); with eps = 0 every key has norm sqrt(d)."""
    return F.layer_norm(torch.from_numpy(keys), (keys.shape[-1],), eps=eps).numpy()


def random_grid(
    ns: Sequence[int] = range(3, 61),
    ds: Sequence[int] = range(3, 16),
    runs: int = 100,
    seed: int = 0,
    progress: bool = True,
    eps: float = 1e-5,
) -> RandomGrid:
    """Run the grid; returns the statistics as nested lists indexed [d][n] plus timing."""
    if runs < 1 or not ns or not ds or min(ns) < 1 or min(ds) < 1:
        raise ValueError("random grid: runs, n and d must be positive and non-empty")
    shape = (len(ds), len(ns))
    sets = ("raw", "layernorm", "layernorm_eps")
    out = {name: {stat: np.zeros(shape) for stat in ("mean_fraction", "any_fraction")} for name in sets}
    stages: dict[str, int] = {}
    seconds_by_d: dict[str, float] = {}
    start = time.perf_counter()
    with tqdm(total=len(ds) * len(ns), desc="random grid (d x n)", unit="cell", disable=not show_bars(progress)) as bar:
        for a, d in enumerate(ds):
            row_start = time.perf_counter()
            for b, n in enumerate(ns):
                keys = cell_keys(d, n, runs, seed)
                for name, k in (
                    ("raw", keys),
                    ("layernorm", layer_norm_keys(keys)),
                    ("layernorm_eps", layer_norm_keys(keys, eps)),
                ):
                    mask = unselectable_mask(k, stats=stages)
                    out[name]["mean_fraction"][a, b] = mask.mean()
                    out[name]["any_fraction"][a, b] = mask.any(axis=1).mean()
                bar.update()
            seconds_by_d[str(d)] = round(time.perf_counter() - row_start, 3)
    return {
        "ns": list(ns),
        "ds": list(ds),
        "runs": runs,
        "seed": seed,
        "layernorm": "F.layer_norm(keys, eps=0), no affine",
        "layernorm_eps": f"F.layer_norm(keys, eps={eps:g}), no affine",
        "eps": eps,
        "stats": {name: {stat: v.tolist() for stat, v in s.items()} for name, s in out.items()},
        "decided_by": stages,
        "wall_time_s": round(time.perf_counter() - start, 2),
        "seconds_by_d": seconds_by_d,
    }
