"""The null of a leaderboard column: which keys it counts, read from a run's resolved config.

:func:`chance_for_metric` maps a leaderboard column and a run's resolved config to the random-key
experiment (:func:`normbench.judge.chance.null.chance_fraction`): the width d the keys span and the
key-set sizes n (the LM's analysis sequences, the SST-2 dev sentences, the majority task's class
tokens). Where a scaling norm (``Component.scales``) feeds the keys, all of them lie on one sphere
(after an affine map, one ellipsoid) and none is unselectable by construction: the value returned is
the count on keys drawn on a sphere, 0, marked ``sanity_check: true``; such a column checks the
geometry, it is not evidence about training.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Sequence
from typing import Any

from normbench.archive._json import JsonDict
from normbench.archive.facts import data_fact
from normbench.judge.chance.null import VERSION, ChanceFraction, Keys, NullValue, chance_of_layers
from normbench.nn.norms import get_component
from normbench.nn.placement import attention_input_norm, present_norms
from normbench.tasks import get_task, task_names

INPUT = re.compile(r"unselectable_(?:(?P<where>after|before)_)?(?:k(?P<k>\d+)_)?L(?P<layer>\d+)")
HEADS = re.compile(r"unselectable_heads_L(?P<layer>\d+)")
TOKENS = "unselectable_tokens"
CLASS_KEYS, CLASS_KEYS_HEADS = "class_keys_unselectable", "class_keys_unselectable_heads"


class ColumnNull(ChanceFraction):
    """The null of one leaderboard column (:func:`chance_for_metric`): its :class:`ChanceFraction` and the column's
    ``metric``, the component of the norm that feeds its keys (``feed``, ``None``: none), whether the keys lie on a
    sphere by construction (``sanity_check``) and what n and d are in words (``basis``)."""

    metric: str
    feed: str | None
    sanity_check: bool
    basis: str


class TokensNull(ColumnNull, total=False):
    """The null of the any-layer token fraction (``unselectable_tokens``): a :class:`ColumnNull` and, where some
    layer's keys are not on a sphere, the one-layer value (``if_layers_identical``)."""

    if_layers_identical: NullValue


def chance_for_metric(
    metric: str,
    config: JsonDict,
    *,
    set_sizes: Sequence[int] | None = None,
    sets: int | None = None,
    seed: int = 0,
) -> ColumnNull | None:
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
    result = chance_of_layers((width,), n, sets, seed, False, keys).copy()
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
) -> TokensNull:
    """``unselectable_tokens``: any layer, sentence tokens only; layers fed by a scaling norm add nothing."""
    geometry = {i: arch.geometry(i, "after", d)[:3] for i in range(1, int(arch.value("n_layers")) + 1)}
    free = tuple(span for keys, span, _ in geometry.values() if keys == "gaussian")
    scaled = [i for i, (keys, _, _) in geometry.items() if keys == "sphere"]
    text = (
        f"{n_text}; input-space keys of every layer, the tokens between the first and the last ([CLS], [SEP]) counted"
    )
    if not free:
        result = chance_of_layers(tuple(span for _, span, _ in geometry.values()), n, sets, seed, True, "sphere").copy()
        return {
            **result,
            "metric": metric,
            "feed": None,
            "sanity_check": True,
            "basis": f"{text}; a scaling norm feeds every layer's attention: keys drawn on unit spheres, 0 by "
            "construction, a check of the geometry, not a chance level",
        }
    result = chance_of_layers(free, n, sets, seed, True, "gaussian").copy()
    single = chance_of_layers(free[:1], n, sets, seed, True, "gaussian")
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

    def __init__(self, task: str, config: JsonDict) -> None:
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


def _task_name(config: JsonDict) -> str:
    """The task of a resolved config: its ``task`` entry, else the task whose module its model names."""
    if config.get("task"):
        return str(config["task"])
    class_path = ((config.get("model") or {}).get("class_path")) or ""
    for name in task_names():
        module = get_task(name).module
        if class_path == f"{module.__module__}.{module.__qualname__}":
            return name
    raise ValueError(f"config: cannot tell its task (no `task` entry, model class {class_path!r} is no task's)")


def _set_sizes(task: str, config: JsonDict, given: Sequence[int] | None) -> int | list[int]:
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


def set_sizes_from_data(config: JsonDict) -> list[int]:
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
