"""What a report card trains and reads on each task: the task config's ``bench.card`` (AlgoPerf-style, the task
declares its own targets), as a typed :class:`CardProtocol`; and the card's variant of a norm on that task."""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict

import yaml

from normbench.archive.board_keys import card_key
from normbench.nn.norms import Norm, PluginNorm, get_component
from normbench.tasks import registered_tasks
from normbench.training.config import load_config

#: one of a norm's options (``--options``): its constructor's keyword, a YAML scalar
OptionValue = str | int | float | bool | None

BLOCK_NORMS = ("attn_norm", "ffn_norm")  # the norms a card replaces: the attention and the FFN norm of every block
PLACEMENTS = ("pre", "post")  # where a card puts the norm (--placements): the task's protocol declares the first


def tasks_with_cards() -> tuple[str, ...]:
    """The tasks a report card runs on: every registered task that declares one (:attr:`Task.card
    <normbench.tasks.registry.Task>`), in registration order (majority, lm, sst2)."""
    return tuple(task.name for task in registered_tasks() if task.card)


@dataclass(frozen=True)
class CardProtocol:
    """One task's card protocol (``bench.card`` of its config).

    Attributes:
        task, preset, seeds: the runs (the baselines' preset and the seeds they have).
        layernorm, rmsnorm: the baseline variants; the card's own variant is ``layernorm`` with every block norm's
            component replaced by the new norm (:func:`card_variant`).
        metrics: the headline metrics, at each checkpoint then the final one; ``better``: ``higher`` or ``lower``;
            ``margin``: the equivalence margin of every headline claim (registered in ``margins.yaml``).
        thresholds: steps-to-loss metrics; ``angle``: the query angle to the ones vector; ``unselectable``: the
            per-layer unselectable fraction (``{layer}``) whose claims against chance the card shows.
        grid, tuned: the presets of the task's learning-rate grid and of its claims at each variant's tuned rate
            (``None``: the task tunes nothing); the card adds its norm to both, beside the baselines' runs.
        named: the cards of built-in norms that are more than a component (``peri``: a placement, ``qknorm``: a
            change of the attention), or that the task runs otherwise (``dyt`` as tuned): card name -> the task's
            variant that stands for it, and the component its probe measures.
        moved: the protocol at a placement the task does not declare (:meth:`at`): its claims' ids name the
            placement, and it has no learning-rate grid and no named cards.
    """

    task: str
    preset: str
    seeds: tuple[int, ...]
    layernorm: str
    rmsnorm: str
    metrics: tuple[str, ...]
    better: str
    margin: float
    thresholds: tuple[str, ...] = ()
    angle: str | None = None
    unselectable: str | None = None
    grid: str | None = None
    tuned: str | None = None
    named: dict[str, NamedCard] = field(default_factory=dict)
    moved: bool = False

    @property
    def placement(self) -> str:
        """Where the baselines (and the card's norm) sit: the placement of the ``layernorm`` variant."""
        return self.layernorm.split("/")[0]

    @property
    def claim_prefix(self) -> str:
        """The start of the card's claim ids here: ``normbench.card.<task>`` (``.<placement>`` when moved)."""
        return f"normbench.card.{self.task}" + (f".{self.placement}" if self.moved else "")

    def at(self, placement: str) -> CardProtocol:
        """The protocol with the baselines at ``placement`` (the task's ``<placement>/both`` and ``<placement>/scale``
        variants, or whatever the declared baselines are named after the placement), at the same preset, seeds and
        metrics, without a learning-rate grid; itself at its own placement. A one-line error when the task has no such
        variant."""
        if placement == self.placement:
            return self
        if placement not in PLACEMENTS:
            raise ValueError(f"placements: {placement!r} is not a card placement; choose from {', '.join(PLACEMENTS)}")
        variants = (load_config(self.task).get("bench") or {}).get("variants") or {}
        moved = {key: f"{placement}/{getattr(self, key).split('/', 1)[1]}" for key in ("layernorm", "rmsnorm")}
        missing = [v for v in moved.values() if v not in variants]
        if missing:
            raise ValueError(
                f"placements: task {self.task} has no {missing[0]} variant to compare a {placement} card with"
            )
        return replace(
            self, layernorm=moved["layernorm"], rmsnorm=moved["rmsnorm"], grid=None, tuned=None, named={}, moved=True
        )

    def new_norm_runs(self) -> dict[str, int]:
        """The runs of the new norm a whole card trains on this task: ``headline`` (one per seed), ``grid`` (every
        point of the learning-rate grid, times its tuning seeds) and ``tuned`` (the seeds again at the chosen rate: at
        most, none where it chooses the shared rate)."""
        runs = {"headline": len(self.seeds), "grid": 0, "tuned": 0}
        if self.grid and self.tuned:
            bench = load_config(self.task, self.grid)["bench"]
            points = math.prod(len(values) for values in (bench.get("grid") or {}).values())
            runs.update(grid=points * len(bench["seeds"]), tuned=len(self.seeds))
        return runs

    @classmethod
    def of(cls, task: str) -> CardProtocol:
        """The protocol ``tasks/<task>.yaml`` declares; a one-line error naming the field when it is not one."""
        spec = (load_config(task).get("bench") or {}).get("card")
        if not isinstance(spec, dict):
            raise ValueError(f"bench.card: task {task} declares no report card protocol")
        known = {"preset", "seeds", "layernorm", "rmsnorm", "metrics", "better", "margin", "thresholds", "angle",
                 "unselectable", "tuning", "named"}  # fmt: skip
        unknown = sorted(set(spec) - known)
        if unknown:
            raise ValueError(f"bench.card.{unknown[0]}: not a setting of task {task}'s card; allowed: {sorted(known)}")
        if spec.get("better") not in ("higher", "lower"):
            raise ValueError(f"bench.card.better: must be higher or lower, got {spec.get('better')!r}")
        return cls(
            task=task,
            preset=str(spec["preset"]),
            seeds=tuple(int(s) for s in spec["seeds"]),
            layernorm=str(spec["layernorm"]),
            rmsnorm=str(spec["rmsnorm"]),
            metrics=tuple(spec["metrics"]),
            better=spec["better"],
            margin=float(spec["margin"]),
            thresholds=tuple(spec.get("thresholds") or ()),
            angle=spec.get("angle"),
            unselectable=spec.get("unselectable"),
            **tuning_presets(task, spec.get("tuning")),
            named={name: NamedCard.of(task, name, entry) for name, entry in (spec.get("named") or {}).items()},
        )


class TuningPresets(TypedDict):
    """A card's ``bench.card.tuning``: the presets of the task's learning-rate ``grid`` and of its claims at the
    ``tuned`` rates (``None``: the task tunes nothing)."""

    grid: str | None
    tuned: str | None


def tuning_presets(task: str, spec: Any) -> TuningPresets:
    """``bench.card.tuning: {grid: <preset>, tuned: <preset>}`` as CardProtocol's ``grid`` and ``tuned``; one line
    naming the field when it is not two of the task's presets."""
    if spec is None:
        return {"grid": None, "tuned": None}
    presets = load_config(task).get("presets") or {}
    if not isinstance(spec, dict) or set(spec) != {"grid", "tuned"}:
        raise ValueError(f"bench.card.tuning: task {task} must give {{grid: <preset>, tuned: <preset>}}, got {spec!r}")
    for key in ("grid", "tuned"):
        if spec[key] not in presets:
            raise ValueError(f"bench.card.tuning.{key}: {spec[key]!r} is not a preset of task {task}")
    return {"grid": str(spec["grid"]), "tuned": str(spec["tuned"])}


@dataclass(frozen=True)
class NamedCard:
    """A named card's variant on one task (``bench.card.named.<name>``) and the component its probe measures
    (default: the card's name, a registered norm)."""

    variant: str
    probe: str

    @classmethod
    def of(cls, task: str, name: str, entry: Any) -> NamedCard:
        """From ``{variant: <the task's variant>, probe: <component>}``; a one-line error naming the field."""
        if not isinstance(entry, dict) or not isinstance(entry.get("variant"), str):
            raise ValueError(f"bench.card.named.{name}: task {task} must give {{variant: <one of its variants>}}")
        variants = (load_config(task).get("bench") or {}).get("variants") or {}
        if entry["variant"] not in variants:
            raise ValueError(f"bench.card.named.{name}.variant: {entry['variant']!r} is not a variant of task {task}")
        return cls(variant=entry["variant"], probe=str(entry.get("probe", name)))


def board_of(task: str, norm: str, kind: str = "", options: Mapping[str, OptionValue] | None = None) -> str:
    """A card's board on a task, as its key (:func:`normbench.archive.board_keys.card_key`): ``cards/<slug>/<task>``
    (its headline runs), ``cards/<slug>/<task>/lr`` (``kind`` lr: the learning-rate grid), ``.../tuned`` (the claims
    at each variant's tuned rate) or ``.../post`` (``kind`` post: the headline runs at a placement the task does not
    declare); the slug of the norm with its ``options`` (:func:`slug`)."""
    return card_key(slug(norm, options), task, kind)


def slug(norm: str, options: Mapping[str, OptionValue] | None = None) -> str:
    """The card's folder name of a norm: its registered name, or the class name of an import path, lower case
    (``examples.pnorm_example:PNorm`` -> ``pnorm``), then each of its ``options`` (``--options``), by name
    (``mypkg:MyNorm`` with ``alpha_init=0.0`` -> ``mynorm-alpha_init=0.0``): two option sets never share a card."""
    name = norm.rpartition(":")[2] if ":" in norm else norm
    head = re.sub(r"[^a-z0-9_.+-]+", "-", name.lower()).strip("-") or "norm"
    tail = [re.sub(r"[^a-z0-9_.+=-]+", "-", f"{k}={option_text(v)}".lower()).strip("-") for k, v in
            sorted((options or {}).items())]  # fmt: skip
    return "-".join([head, *tail])


def option_text(value: Any) -> str:
    """An option's value as it is given on the command line (YAML): ``0.0``, ``true``, ``null``, ``name``."""
    if isinstance(value, (bool, type(None))) or isinstance(value, (list, dict)):
        return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()
    return str(value)


def options_text(options: Mapping[str, OptionValue] | None) -> str:
    """``alpha_init=0.0,beta=2``: a card's options as ``--options`` takes them (``""`` without any)."""
    return ",".join(f"{k}={option_text(v)}" for k, v in sorted((options or {}).items()))


def option_keywords(component: type[Norm]) -> list[str] | None:
    """The options a component takes by keyword: a :class:`~normbench.nn.norms.Norm` subclass's declared options, a
    wrapped ``nn.Module``'s constructor keywords after ``d`` but the slot's (``eps``, ``affine``,
    ``elementwise_affine``); ``None`` where it takes any (``**kwargs``)."""
    if not issubclass(component, PluginNorm):
        return list(component.options)
    try:
        parameters = list(inspect.signature(component.module).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return None
    slot = {"eps", "affine", "elementwise_affine"}
    return [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in slot]


def check_card_options(
    norm: str, options: Mapping[str, OptionValue] | None, d: int = 8
) -> dict[str, OptionValue] | None:
    """A card's ``options`` for ``norm``, checked: a one-line ``ValueError`` naming an option the norm's class does
    not take (and the keywords it does), a slot's setting given as an option, a value the norm refuses when built at
    width ``d``, or options for a named card (its task's variant); ``None`` without options."""
    if not options:
        return None
    if any(norm in CardProtocol.of(task).named for task in tasks_with_cards()):
        raise ValueError(f"options: {norm} is a named card, trained as each task's variant of it; it takes no options")
    component = get_component(norm)
    allowed = option_keywords(component)
    slot = {"eps", "affine", "elementwise_affine"}
    unknown = [k for k in options if allowed is not None and k not in allowed and k not in slot]
    if unknown:
        raise ValueError(
            f"options: {unknown[0]!r} is not an option of {norm}; allowed: {', '.join(allowed or ()) or 'none'}"
        )
    try:
        component.check_options(dict(options), d)
    except ValueError as exc:
        why = str(exc)
        raise ValueError(why if why.startswith("options") else f"options: {why}") from None
    return dict(options)


def probed_component(norm: str, tasks: list[str] | tuple[str, ...] | None = None) -> str:
    """The component a card's probe measures: a named card's ``probe`` (the first of ``tasks``, default every card
    task, that names it), else ``norm`` itself; a one-line ``ValueError`` when it cannot be imported or built."""
    names: set[str] = set()
    for task in tasks_with_cards() if tasks is None else tasks:
        protocol = CardProtocol.of(task)
        if norm in protocol.named:
            get_component(protocol.named[norm].probe)
            return protocol.named[norm].probe
        names |= set(protocol.named)
    try:
        get_component(norm)
    except ValueError as exc:
        why = str(exc).removeprefix("component: ")
        raise ValueError(f"norm: {why}" + (f"; or a named card: {', '.join(sorted(names))}" if names else "")) from None
    return norm


def card_variant(
    norm: str, protocol: CardProtocol, options: Mapping[str, OptionValue] | None = None
) -> tuple[str, dict[str, object] | None]:
    """The card's variant name on the task, and its definition (its overrides: config key -> value, as a task's
    ``bench.variants`` gives them; ``None``: the task defines that variant already, e.g.
    ``pre/dyt``, whose runs the published boards hold). A named card (:class:`NamedCard`) is the variant the task names
    for it (at the declared placement only); any other norm the ``layernorm`` variant (of the protocol's placement)
    with the component of every block norm replaced, each norm keeping its affine map and eps, and given ``options``
    (its constructor's keywords: ``{component: ..., options: {...}}`` in each slot; the variant's name has them)."""
    if norm in protocol.named and options:
        raise ValueError(f"options: {norm} is a named card, trained as each task's variant of it; it takes no options")
    if norm in protocol.named:
        return protocol.named[norm].variant, None
    placement = protocol.placement
    if protocol.moved and norm in CardProtocol.of(protocol.task).named:
        raise ValueError(f"placements: {norm} is a named card, trained as its own variant only; {placement} is not one")
    get_component(norm)  # one line when it cannot be imported or built
    named = (load_config(protocol.task).get("bench") or {}).get("variants") or {}
    base = dict(named.get(protocol.layernorm) or {})
    for role in BLOCK_NORMS:
        key = f"model.init_args.arch.{role}"
        whole = base.get(key)
        if isinstance(whole, str):  # the norm given whole, e.g. "{component: both, affine: false, eps: 1.0e-5}"
            spec = yaml.safe_load(whole)
            spec["component"] = norm
            spec.pop("options", None)  # the baseline's own options are not the new norm's
            if options:
                spec["options"] = dict(options)
            base[key] = yaml.safe_dump(spec, default_flow_style=True, width=10_000).strip()
        else:
            base[f"{key}.component"] = norm
            base.pop(f"{key}.options", None)
            if options:
                base[f"{key}.options"] = yaml.safe_dump(dict(options), default_flow_style=True, width=10_000).strip()
    name = f"{placement}/{slug(norm, options)}"
    same = [n for n, v in named.items() if same_variant(v, base)]
    if same:  # the task runs this very variant already (`scale`: pre/scale-blocks): its published runs
        return (name if name in same else same[0]), None
    while name in named:  # a variant of that name that is not this one (pre/scale: RMSNorm as the attention norm only)
        name += "-card"
    return name, base


def variant_settings(definition: Mapping[str, object] | None) -> dict[str, object]:
    """A variant's overrides (config key -> value) as the settings they make: a norm given whole (``"{component: both,
    eps: 1.0e-5}"``) or field by field (``...attn_norm.component: both``) as one mapping of its fields, every value as
    YAML reads it (``"false"`` and ``false`` alike)."""
    out: dict[str, object] = {}
    for key, value in (definition or {}).items():
        parsed = yaml.safe_load(value) if isinstance(value, str) else value
        head, _, field_name = key.rpartition(".")
        if head.rpartition(".")[2].endswith("_norm") and field_name in ("component", "affine", "eps", "options"):
            _norm_fields(out, head)[field_name] = parsed
        elif key.rpartition(".")[2].endswith("_norm") and isinstance(parsed, dict):
            _norm_fields(out, key).update(parsed)
        else:
            out[key] = parsed
    return _numbers_as_floats(out)


def _norm_fields(settings: dict[str, object], key: str) -> dict[str, object]:
    """The fields of the norm at ``key`` gathered in ``settings`` so far (an empty mapping put there the first
    time)."""
    fields = settings.setdefault(key, {})
    assert isinstance(fields, dict), f"{key}: {fields!r} is not a norm's fields"
    return fields


def _numbers_as_floats(value: Any) -> Any:
    """``value`` with every number a float (``0`` and ``0.0`` name one eps), mappings and lists alike."""
    if isinstance(value, dict):
        return {k: _numbers_as_floats(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers_as_floats(v) for v in value]
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def same_variant(a: Mapping[str, object] | None, b: Mapping[str, object] | None) -> bool:
    """Two variant definitions of one task make the same settings (:func:`variant_settings`): a card's variant that
    a task defines already, under whatever name and spelling (``normbench card scale`` is ``pre/scale-blocks``)."""
    return variant_settings(a) == variant_settings(b)
