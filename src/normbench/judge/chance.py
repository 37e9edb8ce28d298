"""Chance level of every unselectable-key fraction: the same count on random keys.

A leaderboard's unselectable fraction says little on its own: in a low dimension most random
points lie inside the hull of the others anyway (in the plane ~96% of 256 Gaussian points do).
:func:`chance_fraction` counts, with the analyzer every measured column uses
(:func:`normbench.analysis.unselectable.unselectable_mask`, same tolerance), the unselectable keys
among i.i.d. N(0, I_d) keys drawn by the random-key experiment's generator
(:func:`normbench.analysis.random_grid.cell_keys`), in key sets of the sizes the column counted.
Unselectability is invariant under any invertible affine map of a set, so N(0, I_d) stands for
every non-degenerate Gaussian N(mu, Sigma) in d dimensions.

:func:`chance_for_metric` maps a leaderboard column and a run's resolved config to that
experiment: the width d the keys span and the key-set sizes n (the LM's analysis sequences, the
SST-2 dev sentences, the majority task's class tokens). Where a scaling norm (``Component.scales``)
feeds the keys, all of them lie on one sphere (after an affine map, one ellipsoid) and none is
unselectable by construction: the value returned is the count on keys drawn on a sphere, 0, marked
``sanity_check: true``; such a column checks the geometry, it is not evidence about training.

**The matched null.** A trained model's keys are compared with random keys of the same count and dimension drawn
with the trained keys' own mean and covariance, N(mu, Sigma). The unselectable count is invariant under an
invertible affine map (a key is a vertex of the hull of a set exactly when its image is one of the image's), and
N(mu, Sigma) = mu + Sigma^(1/2) N(0, I_r) in the r = rank(Sigma) dimensions the keys span, so the matched null *is*
the i.i.d. N(0, I_r) value (:func:`matched_null` draws both and a test holds them equal); the rank is what the
architecture fixes: d, or d - 1 where a projecting norm feeds the keys. :func:`with_chance` draws enough sets that
the null's standard error is below a tenth of the seed standard deviation it is compared with (``SE_SHARE``),
within a work budget (``WORK_BUDGET``); the board says where the budget ran out first.

Results are cached as JSON under ``<cache root>/chance/`` (:func:`normbench.io.cache_root`), one file
per (dimensions, set sizes, sets, seed, key distribution, tolerance, version).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import time
import typing
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from normbench.analysis.random_grid import cell_keys
from normbench.analysis.unselectable import DEFAULT_TOL, unselectable_mask
from normbench.archive.facts import data_fact
from normbench.io import atomic_write_json, cache_root, params_digest
from normbench.judge.stats import values_of
from normbench.nn.norms import get_component
from normbench.nn.placement import attention_input_norm, present_norms
from normbench.tasks import get_task, task_names

VERSION = 1  # bump when a cached value would change (the generator, the analyzer's rule, the statistic)
DEFAULT_SETS = 50  # sets of n keys: d = 8, n = 256: about 1 s on two shared CPU cores, standard error ~0.004
DEFAULT_COPIES = 4  # copies of a list of set sizes (each copy is a whole data set: thousands of keys)
SE_SHARE = 0.1  # a null's standard error is held below this share of the seed standard deviation it is compared to
WORK_BUDGET = 16_000_000  # keys drawn x their dimension for one null (d = 8, n = 256: 7,800 sets, about 100 s)
PAIRWISE_BUDGET = 4_000_000  # keys squared per analyzer call: its first stage holds (sets, n, n) float64

Keys = Literal["gaussian", "sphere"]

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
) -> dict[str, Any]:
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
    return _chance((d,) * layers, n, sets, seed, skip_ends, keys)


def _chance(
    dims: tuple[int, ...], n: int | Sequence[int], sets: int | None, seed: int, skip_ends: bool, keys: Keys
) -> dict[str, Any]:
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
    params = {
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
    result = {
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


def _sizes(n: int | Sequence[int]) -> tuple[list[int], int | dict[str, Any]]:
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


def _read(path: Path, params: dict[str, Any]) -> dict[str, Any] | None:
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


# -- leaderboard columns -----------------------------------------------------------------------

INPUT = re.compile(r"unselectable_(?:(?P<where>after|before)_)?(?:k(?P<k>\d+)_)?L(?P<layer>\d+)")
HEADS = re.compile(r"unselectable_heads_L(?P<layer>\d+)")
TOKENS = "unselectable_tokens"
CLASS_KEYS, CLASS_KEYS_HEADS = "class_keys_unselectable", "class_keys_unselectable_heads"


def chance_for_metric(
    metric: str,
    config: dict[str, Any],
    *,
    set_sizes: Sequence[int] | None = None,
    sets: int | None = None,
    seed: int = 0,
) -> dict[str, Any] | None:
    """The chance value of leaderboard column ``metric`` for a run with resolved config ``config``.

    ``None`` for a column that is not an unselectable fraction. Otherwise :func:`chance_fraction`'s
    dict plus ``metric``, ``basis`` (what n and d are, and what was assumed), ``sanity_check``
    (True where the keys lie on a sphere or ellipsoid by construction: the value is then the count
    on keys drawn on a sphere, 0) and ``feed`` (the component of the norm whose output the keys are,
    ``None`` for none). The columns:

    * ``unselectable_after_L{i}`` (LM), ``unselectable_L{i}`` (SST-2): layer i's attention input;
      ``unselectable_before_L{i}``: the block input (under ``post``/``none`` placement the same
      keys; under ``pre``/``peri`` the residual stream, layer 1's the embedding or its norm).
      d = d_model, or d_model - 1 where a projecting norm (``project``) feeds them: its outputs
      span a hyperplane, and a Gaussian projected onto it is Gaussian in d_model - 1 dimensions.
    * ``unselectable_{after,before}_k{n}_L{i}``: the same keys, the first n of each sequence.
    * ``unselectable_heads_L{i}``, ``class_keys_unselectable_heads``: each head's keys, d = d_head
      = d_model / n_heads (at most the width of the attention input); a sanity check under QK-norm
      (each head's keys on a sphere), or where a scaling norm feeds a head at least as wide as its
      keys' span (W_k maps the sphere onto an ellipsoid).
    * ``unselectable_tokens`` (SST-2): sentence tokens unselectable in at least one layer; the
      layers no scaling norm feeds are drawn as independent key sets (the value an independence
      assumption gives; ``if_layers_identical`` is the one-layer value, the other extreme).
    * ``class_keys_unselectable`` (majority): the C class keys at layer 1's attention input, n = C.

    n: LM, ``data.analysis_length`` (each analysis sequence is one key set); SST-2, the
    token count of every dev sentence, ``[CLS]`` and ``[SEP]`` included, read from the data module
    the config builds (``set_sizes`` gives them instead, e.g. for runs whose data cannot be rebuilt).
    """
    kind, layer, where, k = _parse(metric)
    if kind is None:
        return None
    task = _task_name(config)
    arch = _Arch(task, config)
    if kind in ("class", "class_heads"):
        n: int | list[int] = int(arch.value("num_classes"))
    elif k is not None:
        n = k
    else:
        n = _set_sizes(task, config, set_sizes)
    d = int(arch.value("d_model"))
    d_head = d // int(arch.value("n_heads"))
    n_text = f"n = {n} keys per set" if isinstance(n, int) else _sizes_text(task, n)
    if kind == "tokens":
        return _tokens(metric, arch, d, n, n_text, sets, seed)
    keys, span, feed_text, feed = arch.geometry(layer, "before" if where == "before" else "after", d)
    if kind in ("heads", "class_heads"):
        width = min(d_head, span)
        if arch.value("qk_norm"):
            keys, feed_text = "sphere", "QK-norm puts each head's keys on a sphere"
        elif keys == "sphere" and d_head < span:
            keys, feed_text = "gaussian", f"{feed_text}, mapped by W_k to d_head = {d_head} < {span}: not on a sphere"
        elif keys == "sphere":
            feed_text += f"; W_k maps it onto an ellipsoid in d_head = {d_head} >= {span}"
        view = f"each head's keys (rows of x W_k^T), d = {width} (d_head = d_model / n_heads = {d} / {d // d_head})"
    else:
        width = span
        view = f"input-space keys, d = {width} (d_model = {d}{'' if span == d else ', minus the projected direction'})"
    where_text = f"{'the block input' if where == 'before' else 'the attention input'} of layer {layer}"
    if kind in ("class", "class_heads"):
        where_text = "the class keys at the attention input of layer 1"
    result = dict(_chance((width,), n, sets, seed, False, keys))
    basis = f"{where_text}: {view}; {n_text}; {feed_text}; " + (
        "keys drawn on a unit sphere: 0 by construction, a check of the geometry, not a chance level"
        if keys == "sphere"
        else "keys drawn i.i.d. N(0, I_d)"
    )
    return {**result, "metric": metric, "feed": feed, "sanity_check": keys == "sphere", "basis": basis}


def _parse(metric: str) -> tuple[str | None, int, str | None, int | None]:
    """(kind, layer, before/after, key-set size) of a column; kind ``None`` for other columns."""
    if metric == TOKENS:
        return "tokens", 0, None, None
    if metric in (CLASS_KEYS, CLASS_KEYS_HEADS):
        return ("class" if metric == CLASS_KEYS else "class_heads"), 1, None, None
    if m := HEADS.fullmatch(metric):
        return "heads", int(m["layer"]), None, None
    if m := INPUT.fullmatch(metric):
        if m["k"] is not None and m["where"] is None:
            return None, 0, None, None
        return "input", int(m["layer"]), m["where"], None if m["k"] is None else int(m["k"])
    return None, 0, None, None


def _tokens(
    metric: str, arch: _Arch, d: int, n: int | list[int], n_text: str, sets: int | None, seed: int
) -> dict[str, Any]:
    """``unselectable_tokens``: any layer, sentence tokens only; layers fed by a scaling norm add nothing."""
    geometry = {i: arch.geometry(i, "after", d)[:3] for i in range(1, int(arch.value("n_layers")) + 1)}
    free = tuple(span for keys, span, _ in geometry.values() if keys == "gaussian")
    scaled = [i for i, (keys, _, _) in geometry.items() if keys == "sphere"]
    text = (
        f"{n_text}; input-space keys of every layer, the tokens between the first and the last ([CLS], [SEP]) counted"
    )
    if not free:
        result = dict(_chance(tuple(span for _, span, _ in geometry.values()), n, sets, seed, True, "sphere"))
        return {
            **result,
            "metric": metric,
            "feed": None,
            "sanity_check": True,
            "basis": f"{text}; a scaling norm feeds every layer's attention: keys drawn on unit spheres, 0 by "
            "construction, a check of the geometry, not a chance level",
        }
    result = dict(_chance(free, n, sets, seed, True, "gaussian"))
    single = _chance(free[:1], n, sets, seed, True, "gaussian")
    note = (
        (f"; layers {', '.join(f'L{i}' for i in scaled)} are fed by a scaling norm (0 by construction) and left out")
        if scaled
        else ""
    )
    return {
        **result,
        "metric": metric,
        "feed": None,
        "sanity_check": False,
        "if_layers_identical": {"mean": single["mean"], "sem": single["sem"]},
        "basis": f"{text}; {len(free)} layers of keys drawn i.i.d. N(0, I_d), "
        f"d = {free[0] if len(set(free)) == 1 else list(free)}, independently per layer (a model's "
        f"layers share the residual stream: if_layers_identical is the chance value were every layer "
        f"to leave the same positions unselectable){note}",
    }


def _geometry(component: str | None, d: int) -> tuple[Keys, int, str]:
    """(key distribution, dimension the keys span, description) of keys a norm ``component`` outputs."""
    if component is None:
        return "gaussian", d, "no norm feeds these keys (the residual stream or the embedding)"
    if ":" in component:  # a plug-in: its geometry is not known here
        return "gaussian", d, f"a plug-in norm {component!r} feeds them, assumed to neither scale nor project"
    c = get_component(component)
    span = d - 1 if c.projects else d
    if span < 1:
        raise ValueError(f"model.arch.d_model: {d} leaves no dimension after the {component!r} norm's projection")
    projected = f", which projects them onto a hyperplane ({span} dimensions)" if c.projects else ""
    if c.scales:
        return "sphere", span, f"the {component!r} norm feeds them{projected}, every output on one sphere (ellipsoid)"
    return "gaussian", span, f"the {component!r} norm feeds them{projected}, not scaling"


class _Arch:
    """The architecture section of a resolved config, with the task's defaults for fields it leaves out."""

    def __init__(self, task: str, config: dict[str, Any]) -> None:
        self.cls = typing.get_type_hints(get_task(task).module.__init__)["arch"]
        try:
            self.raw = dict(config["model"]["init_args"]["arch"])
        except (KeyError, TypeError):
            raise ValueError("config: no model.arch section (a run's resolved config is needed)") from None

    def value(self, name: str) -> Any:
        if name in self.raw:
            return self.raw[name]
        default = getattr(self.cls, name, None)
        if default is None:
            raise ValueError(f"config: model.arch.{name} is missing")
        return default

    def component(self, name: str) -> str:
        spec = self.value(name)
        return spec["component"] if isinstance(spec, dict) else spec.component

    def eps(self, name: str) -> float:
        spec = self.value(name)
        return float((spec.get("eps") if isinstance(spec, dict) else spec.eps) or 0.0)

    def feed(self, layer: int, where: str) -> str | None:
        """The norm (``attn_norm``, ...) whose output is layer ``layer``'s attention input (``after``) or block
        input (``before``); ``None`` where no norm's output is."""
        placement = self.value("placement")
        roles = getattr(self.cls, "NORM_ROLES", {})
        present = {name: roles[name] for name in present_norms(placement, roles)}
        components = {name: self.component(name) for name in present}
        identity = {name for name, c in components.items() if ":" not in c and get_component(c).identity}
        if where == "before" and placement in ("pre", "peri"):  # the residual stream; layer 1's: the embedding
            embedding = next((n for n, r in present.items() if r == "embedding" and n not in identity), None)
            name = embedding if layer == 1 else None
        else:  # post / none: the block input is the attention input
            name = attention_input_norm(placement, layer, present, identity)
        return name

    def geometry(self, layer: int, where: str, d: int) -> tuple[Keys, int, str, str | None]:
        """:func:`_geometry` of the keys :meth:`feed` names, with the norm's eps noted; and its component."""
        name = self.feed(layer, where)
        component = None if name is None else self.component(name)
        keys, span, text = _geometry(component, d)
        if keys == "sphere" and name is not None and component is not None:  # keys a built-in norm feeds
            if self.eps(name) > 0 and get_component(component).uses_eps:
                text += (
                    f" (its eps = {self.eps(name):g} > 0 shortens keys of tiny variance: exactly so only at eps = 0)"
                )
        return keys, span, text, component


def _task_name(config: dict[str, Any]) -> str:
    """The task of a resolved config: its ``task`` entry, else the task whose module its model names."""
    if config.get("task"):
        return str(config["task"])
    class_path = ((config.get("model") or {}).get("class_path")) or ""
    for name in task_names():
        module = get_task(name).module
        if class_path == f"{module.__module__}.{module.__qualname__}":
            return name
    raise ValueError(f"config: cannot tell its task (no `task` entry, model class {class_path!r} is no task's)")


def _set_sizes(task: str, config: dict[str, Any], given: Sequence[int] | None) -> int | list[int]:
    """The key-set sizes of a task's analysis: given, the LM's analysis length, or the data module's."""
    if given is not None:
        return list(given)
    data = (config.get("data") or {}).get("init_args") or {}
    if size := get_task(task).analysis_set_size:
        if size not in data:
            raise ValueError(f"config: data.{size} is missing (task {task}'s keys per set)")
        return int(data[size])
    return set_sizes_from_data(config)


def _sizes_text(task: str, sizes: list[int]) -> str:
    s = sorted(sizes)
    what = get_task(task).analysis_sets
    return (
        f"n = the token count of each of {len(s)} {what} ([CLS] and [SEP] included): {s[0]}..{s[-1]}, "
        f"median {s[len(s) // 2]}, {sum(s)} keys"
    )


def set_sizes_from_data(config: dict[str, Any]) -> list[int]:
    """The number of keys in every set of a run's test stage: the unpadded length of each sequence its
    data module's ``test_dataloader`` yields (built from the config's ``data`` section as the run was).

    A fact of the run archive by the ``data`` section (:func:`normbench.archive.facts.data_fact`: read from there
    where the data are not on this machine; building the module can train a tokenizer).
    """
    data = config.get("data") or {}

    def compute() -> list[list[int]]:
        from normbench.training.run.loading import build_datamodule  # loads the training stack: only when needed

        sizes: list[int] = []
        for batch in build_datamodule(config, "test").test_dataloader():
            padding = batch.get("padding_mask") if isinstance(batch, dict) else None
            if padding is None:
                tokens = batch["input_ids"] if isinstance(batch, dict) else batch[0]
                sizes += [int(tokens.shape[1])] * int(tokens.shape[0])
            else:
                sizes += [int(v) for v in (~padding).sum(dim=1).tolist()]
        if not sizes:
            raise ValueError("config: its test data yielded no key sets")
        return run_lengths(sizes)

    return from_run_lengths(data_fact("set_sizes", data, compute, version=VERSION))


def run_lengths(values: list[int]) -> list[list[int]]:
    """``[[value, count], ...]`` of consecutive equal values, in order (a fact's compact form: 20,000 majority
    sequences of one length are one pair)."""
    out: list[list[int]] = []
    for value in values:
        if out and out[-1][0] == value:
            out[-1][1] += 1
        else:
            out.append([value, 1])
    return out


def from_run_lengths(pairs: list[list[int]]) -> list[int]:
    """The values :func:`run_lengths` encodes, in order."""
    return [int(value) for value, count in pairs for _ in range(int(count))]


def matched_null(
    keys: np.ndarray, n: int, sets: int = DEFAULT_SETS, seed: int = 0, rank_tol: float = 1e-9
) -> dict[str, Any]:
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
    out: dict[str, Any] = {"rank": rank, "d": int(keys.shape[1]), "n": n, "sets": sets}
    for name, x in (("matched", matched), ("iid", z)):
        fractions = _mask(x).mean(axis=1)
        sem = float(fractions.std(ddof=1) / math.sqrt(sets)) if sets > 1 else None
        out[name] = {"mean": float(fractions.mean()), "sem": sem}
    return out


def sets_for(pilot: dict[str, Any], target_sem: float | None) -> tuple[int, bool]:
    """(sets to draw, whether they meet ``target_sem``) for a null whose ``pilot`` draw gave ``sem`` over ``sets``:
    sem falls as 1 / sqrt(sets), so sets = pilot sets x (pilot sem / target)^2, capped by ``WORK_BUDGET``."""
    sets, sem = int(pilot["sets"]), pilot.get("sem")
    if not target_sem or target_sem <= 0 or sem is None or sem <= target_sem:
        return sets, sem is not None and bool(target_sem) and sem <= target_sem
    needed = math.ceil(sets * (sem / target_sem) ** 2)
    n = pilot["n"]
    keys_per_set = n if isinstance(n, int) else int(n["keys"])
    dims = pilot["d"] if isinstance(pilot["d"], int) else sum(pilot["d"])
    cap = max(sets, WORK_BUDGET // max(1, keys_per_set * dims * int(pilot.get("layers") or 1)))
    return min(needed, cap), needed <= cap


def redraw(metric: str, config: dict[str, Any], *, sets: int) -> dict[str, Any]:
    """:func:`chance_for_metric` over ``sets`` sets, for a column that has a chance value (its pilot was drawn)."""
    value = chance_for_metric(metric, config, sets=sets)
    assert value is not None  # the same column and config as the pilot, which had one
    return value


def draw_to_target(
    value: dict[str, Any], target: float | None, draw: typing.Callable[..., dict[str, Any]], rounds: int = 3
) -> dict[str, Any]:
    """``value`` (a pilot null) drawn again, over as many sets as :func:`sets_for` asks, until its own standard error
    is at most ``target``, the work budget is spent or ``rounds`` draws are made: the sets needed are predicted from
    a standard error that is itself an estimate, so one draw can fall just short. Whether the target is met is read
    off the returned value's standard error, never off the prediction."""
    for _ in range(rounds):
        sets, _ = sets_for(value, target)
        if sets <= value["sets"]:
            break
        value = draw(sets=sets)
    return value


def seed_sd(agg: dict[str, Any]) -> float | None:
    """The standard deviation over seeds of a leaderboard metric (``None`` with fewer than 2 finite values)."""
    values = values_of(agg.get("per_seed"))
    return float(np.std(values, ddof=1)) if len(values) > 1 else None


def with_chance(variants: list[dict[str, Any]], configs: dict[str, dict[str, Any]]) -> None:
    """Put the chance value (:func:`chance_for_metric`) beside every unselectable fraction of each leaderboard
    variant, in place: ``metrics[<column>]["chance"] = {mean, sem, sets, target_sem, target_met, sanity_check,
    basis}``, drawn until its standard error is below ``SE_SHARE`` of the seed standard deviation of every column that
    shares that null (same dimension, key-set sizes and key distribution: one draw for all of them; where every such
    column's seeds agree exactly, below ``SE_SHARE`` of the null's own value) or the work budget is spent.
    ``configs``: a resolved run config per variant name (a variant without one gets none)."""
    pilots: dict[str, list[tuple[dict[str, Any], dict[str, Any], str, dict[str, Any]]]] = {}
    for variant in variants:
        config = configs.get(variant["name"])
        if config is None:
            continue
        for metric, agg in (variant.get("metrics") or {}).items():
            value = chance_for_metric(metric, config)
            if value is not None and isinstance(agg, dict):
                key = json.dumps([value["d"], value["n"], value["keys"], value["layers"], value["skip_ends"]])
                pilots.setdefault(key, []).append((agg, value, metric, config))
    for cells in pilots.values():
        _, value, metric, config = cells[0]
        spreads = [seed_sd(agg) for agg, *_ in cells]
        positive = [sd for sd in spreads if sd]
        # seeds that agree exactly (often all 0) give no spread: the null is then held to a tenth of its own value
        scale = min(positive) if positive else (value["mean"] if 0.0 in spreads else None)
        target = SE_SHARE * scale if scale and not value["sanity_check"] else None
        value = draw_to_target(value, target, functools.partial(redraw, metric, config))
        met = target is not None and value["sem"] is not None and value["sem"] <= target
        for agg, pilot, *_ in cells:
            agg["chance"] = {
                "mean": value["mean"],
                "sem": value["sem"],
                "sets": value["sets"],
                "target_sem": target,
                "target_met": met if target else None,
                "sanity_check": pilot["sanity_check"],
                "basis": pilot["basis"],
            }


def chance_text(chance: dict[str, Any] | None, scale: float = 1.0, digits: int = 3) -> str:
    """`` (chance 0.963)`` beside a measured fraction, `` (0 by construction)`` for keys on a sphere (a sanity
    check)."""
    if not chance:
        return ""
    if chance.get("sanity_check"):
        return " (0 by construction)"
    return f" (chance {chance['mean'] * scale:.{digits}f})"
