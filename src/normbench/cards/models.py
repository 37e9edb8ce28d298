"""What each variant of a card's section trained, read from the model itself: the card's variants planned as its bake
plans them (:func:`normbench.sweep.plan.plan_runs`), each network built from its resolved config, and its norms'
actual eps, affine map and learned parameters read off the modules. The protocol table is this, so it cannot say
other than what trained (a plug-in that ignores the slot's eps, a gain of its own, a learned temperature).

What the new norm learned (:func:`learned_values`): the final value of each of its own trained parameters (DyT's
alpha, ScaleNorm's g, a plug-in's learned scalar), per slot, as mean and spread over the card's seeds, read from the
series training logs at every evaluation (``geometry/<slot>/<parameter>``, :data:`normbench.tasks.series.NORM_SCALAR`:
a scalar's value, a larger parameter's mean) in each seed's canonical archived record. A run trained before its
norm's parameters were logged has none."""

from __future__ import annotations

import copy
import functools
import re
import statistics
import tempfile
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import yaml
from torch import nn

from normbench.archive.board import Board
from normbench.archive.board_keys import card_queue_folder
from normbench.archive.store import Archive
from normbench.cards.protocol import CardProtocol, OptionValue, card_variant, slug
from normbench.nn.norms import Norm, PluginNorm, get_component, source_version
from normbench.tasks.series import NORM_INPUT_MEAN, NORM_INPUT_STD, NORMAL_ANGLE_TO_ONES
from normbench.tasks.trust import record_class
from normbench.training.run.rundir import build_dataclass

if TYPE_CHECKING:  # Python 3.11's; the annotations are never evaluated (``from __future__ import annotations``)
    from typing import NotRequired


class NormModuleFacts(TypedDict):
    """One norm module as built (:func:`norm_facts`; ``card.json``: ``tasks[].norms[role].norms[norm role]``).

    ``component``; ``affine``: an affine map follows it; ``eps``: the eps its map uses (``None``: its map takes none);
    ``parameters``: its trained values, ``learned``: their names; ``frozen``: a plug-in's per-feature parameters kept
    at their initial values; ``options``: its constructor's keywords; ``source``: its code's version; ``layers``: how
    many such modules the network has.
    """

    component: str
    affine: bool
    eps: float | None
    parameters: int
    learned: list[str]
    frozen: NotRequired[list[str]]
    options: NotRequired[dict[str, OptionValue]]
    source: NotRequired[str]
    layers: NotRequired[int]


class ModelFacts(TypedDict):
    """The network a variant builds (:func:`model_facts`; ``card.json``: ``tasks[].norms[role]``): its ``placement``,
    its trainable ``parameters`` and those of its norms (``norm_parameters``), each norm role's module (``norms``) and
    its runs' ``config_hash``."""

    placement: str | None
    parameters: int
    norm_parameters: int
    norms: dict[str, NormModuleFacts]
    config_hash: NotRequired[str | None]


class ExtraParameters(TypedDict):
    """Parameters the new norm trains that no baseline has at a norm role (:func:`extra_parameters`): the ``norm``
    role, the ``parameters``' names (relative to the norm) and in how many ``layers``."""

    norm: str
    parameters: list[str]
    layers: int


def section_models(
    norm: str,
    protocol: CardProtocol,
    variants: dict[str, str],
    results_dir: str | Path,
    options: dict[str, OptionValue] | None = None,
) -> dict[str, ModelFacts]:
    """The networks of a card's section (:func:`built_variants`), under the card's task config where it is written
    (``queues/cards/<slug>/<task>.yaml``: the card's variant defined there), else the task's with the card's variant
    added (:func:`~normbench.cards.protocol.card_variant`, with the norm's ``options``)."""
    config = card_queue_folder(results_dir, slug(norm, options)) / f"{protocol.task}.yaml"
    if config.is_file():
        text = config.read_text(encoding="utf-8")
    else:
        name, definition = card_variant(norm, protocol, options)
        # a card's task config, its presets left out (cards.document.CardConfig's keys; that module imports this one)
        doc: dict[str, object] = {"extends": protocol.task}
        if definition is not None:
            doc["bench"] = {"variants": {name: definition}}
        text = yaml.safe_dump(doc, sort_keys=False)
    models = _built(protocol.task, protocol.preset, tuple(variants.items()), text, str(results_dir), _sources(norm))
    return copy.deepcopy(models)


def _sources(norm: str) -> str | None:
    """The version of the card's norm's code (``None``: a built-in, or a named card): a card built again after the
    norm's file is edited builds its networks again."""
    try:
        return source_version(get_component(norm))
    except ValueError:
        return None


@functools.lru_cache(maxsize=64)
def _built(task: str, preset: str, roles: tuple[tuple[str, str], ...], config: str, results_dir: str,
           sources: str | None) -> dict[str, ModelFacts]:  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="normbench-card-") as tmp:
        path = Path(tmp) / f"{task}.yaml"
        path.write_text(config, encoding="utf-8")
        return built_variants(task, preset, dict(roles), path, results_dir)


def built_variants(
    task: str, preset: str, variants: dict[str, str], config: str | Path, results_dir: str | Path
) -> dict[str, ModelFacts]:
    """Role -> the network its variant builds (:func:`model_facts`), for the roles of ``variants`` (role ->
    variant name) on ``task`` at ``preset`` under the card's task ``config``. Two roles of one variant (the card of
    ``scale`` is the RMSNorm baseline) share its facts."""
    from normbench.sweep.plan import plan_runs  # the sweep layer plans; imported where it is needed

    names = list(dict.fromkeys(variants.values()))
    with tempfile.TemporaryDirectory(prefix="normbench-card-") as tmp:
        _, runs = plan_runs(
            task, preset, seeds=[0], variants=names, runs_dir=tmp, config_path=str(config), results_dir=results_dir
        )
    built = {run.variant: model_facts(run.config) for run in runs}
    hashes = {run.variant: run.config_hash for run in runs}
    out: dict[str, ModelFacts] = {}
    for role, name in variants.items():
        if name in built:
            out[role] = {**built[name], "config_hash": hashes[name]}
    return out


def model_facts(config: Mapping[str, Any]) -> ModelFacts:
    """The network a resolved run config builds: its placement, its trainable parameter count, and per norm role
    (``attn``, ``ffn``, ``final``, ...) what the modules are (:func:`norm_facts` of the first layer's; ``layers``:
    how many there are)."""
    model = config["model"]
    cls = record_class(model["class_path"], "model")
    arch_type = typing.get_type_hints(cls.__init__)["arch"]
    arch = build_dataclass(arch_type, (model.get("init_args") or {}).get("arch") or {}, "model.arch")
    module = cls(arch=arch)
    norms: dict[str, NormModuleFacts] = {}
    for path, m in module.named_modules():
        if isinstance(m, Norm) and path.rpartition(".")[2].endswith("_norm"):
            role = path.rpartition(".")[2].removesuffix("_norm")
            if role in norms:
                norms[role]["layers"] += 1
            else:
                norms[role] = {**norm_facts(m), "layers": 1}
    return {
        "placement": getattr(arch, "placement", None),
        "parameters": trainable(module),
        "norm_parameters": sum(n["parameters"] * n["layers"] for n in norms.values()),
        "norms": norms,
    }


def trainable(module: nn.Module) -> int:
    """The number of trained values of ``module`` (parameters that require a gradient)."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def norm_facts(norm: Norm) -> NormModuleFacts:
    """One norm module as built: its component, whether an affine map follows it (normbench's: the slot's only one),
    the eps its map uses (``None`` where its map takes none), its trained values and their names, and a plug-in's
    per-feature parameters frozen at their initial values and its code's version."""
    out: NormModuleFacts = {
        "component": norm.spec.component,
        "affine": norm.weight is not None,
        "eps": float(norm.eps) if type(norm).uses_eps else None,
        "parameters": trainable(norm),
        "learned": sorted(n for n, p in norm.named_parameters() if p.requires_grad),
    }
    if isinstance(norm, PluginNorm) and norm.frozen:
        out["frozen"] = [f"plugin.{n}" for n in norm.frozen]
    if norm.spec.options:
        out["options"] = dict(norm.spec.options)
    source = source_version(type(norm))
    if source is not None:
        out["source"] = source
    return out


AFFINE = ("weight", "bias")


def extra_parameters(models: dict[str, ModelFacts], new: str = "new") -> list[ExtraParameters]:
    """Where the ``new`` role's network trains parameters that no other role's has at the same norm role: per norm
    role, the parameter names (relative to the norm) and how many values they are over its layers."""
    mine = models[new]["norms"] if new in models else {}
    out: list[ExtraParameters] = []
    for role, facts in mine.items():
        others = [m["norms"][role] for r, m in models.items() if r != new and role in m["norms"]]
        held = {name for o in others for name in o["learned"]}
        extra = [name for name in facts["learned"] if name not in held]
        if extra:
            out.append({"norm": role, "parameters": extra, "layers": facts["layers"]})
    return out


SERIES = re.compile(r"^geometry/(?P<slot>[^/]*norm[^/]*)/(?P<parameter>[^/]+)$")
NOT_PARAMETERS = {t.rsplit("/", 1)[-1] for t in (NORM_INPUT_MEAN, NORM_INPUT_STD, NORMAL_ANGLE_TO_ONES)}


class LearnedValue(TypedDict):
    """One learned parameter of one slot: its final value over the seeds that logged it."""

    slot: str
    parameter: str
    mean: float
    std: float | None  # the sample standard deviation over seeds (``None`` for one seed)
    seeds: list[int]


def learned_values(board: Board, variant: str, archive: Archive) -> list[LearnedValue]:
    """The final value of each learned parameter of ``variant``'s norm, per slot, over its seeds on ``board`` (read
    from each seed's canonical archived record; sorted by slot, then parameter)."""
    row = board.by_name.get(variant)
    if row is None or not row.config_hash:
        return []
    finals: dict[tuple[str, str], dict[int, float]] = {}
    for seed in row.seeds:
        replicate = archive.canonical(board.task, row.config_hash, seed)
        if replicate is None:
            continue
        for name, points in (replicate.record().get("series") or {}).items():
            found = SERIES.match(name)
            if found and found["parameter"] not in NOT_PARAMETERS and points:
                finals.setdefault((found["slot"], found["parameter"]), {})[seed] = float(points[-1][1])
    out: list[LearnedValue] = []
    for (slot, parameter), by_seed in sorted(finals.items()):
        values = list(by_seed.values())
        std = statistics.stdev(values) if len(values) > 1 else None
        out.append({"slot": slot, "parameter": parameter, "mean": round_to(statistics.fmean(values)),
                    "std": None if std is None else round_to(std), "seeds": sorted(by_seed)})  # fmt: skip
    return out


def round_to(x: float, digits: int = 6) -> float:
    """``x`` to ``digits`` significant digits (a card keeps what a reader can use, compactly)."""
    return float(f"{x:.{digits}g}")
