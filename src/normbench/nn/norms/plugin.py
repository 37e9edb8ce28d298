"""Plug-ins written without :class:`~normbench.nn.norms.base.Norm`: an ``nn.Module`` class built as
``Cls(d, **options)`` that maps (..., d) to (..., d), wrapped as a component (:func:`module_component`).

The module computes N(x) as the submodule ``plugin``; normbench's affine map follows it, the slot's only one
(:data:`PLUGIN_RULE`): the module gets the slot's eps and no affine map of its own, and its own per-feature gain or
bias is frozen (:func:`freeze_per_feature`).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, ClassVar

import torch
from torch import nn

from normbench.nn.norms.base import Norm, NormSpec


class PluginNorm(Norm):
    """A plug-in ``nn.Module`` class built as ``module(d, **options)``, as a component (:func:`module_component`).

    The module, registered as ``plugin``, computes N(x); normbench's affine map follows it, as it follows every
    component: the slot's affine map is the only one (:data:`PLUGIN_RULE`). So the module is told the slot's ``eps``
    where its constructor takes one (``uses_eps``), ``affine=False`` (or ``elementwise_affine=False``) where it takes
    that, and any per-feature parameter of its own (a gain or bias: a parameter of d elements along the last axis)
    is frozen at its initial value, a buffer of the same name (the state-dict keys stay). Its other parameters (a
    learned scalar such as a temperature) train, and a card counts them as parameters the baselines lack. Its
    options are whatever keywords the class takes, checked against its signature and by building it once, and kept as
    given. It has no shift-and-scale form.
    """

    module: ClassVar[type[nn.Module]]
    affine_keyword: ClassVar[str | None] = None  # ``affine`` or ``elementwise_affine`` where the constructor takes it
    frozen: tuple[str, ...]  # the module's own per-feature parameters, frozen (names under ``plugin``)

    def __init__(self, d: int, *, eps: float = 1e-5, affine: bool = True, **options: Any) -> None:
        super().__init__(d, eps=eps, affine=affine)
        self.spec = NormSpec(self.name, affine, eps, dict(options) or None)
        self.plugin = build_plugin(self.name, self.module, d, {**options, **self.slot_keywords(eps)})
        self.frozen = freeze_per_feature(self.plugin, d)

    @classmethod
    def slot_keywords(cls, eps: float) -> dict[str, float | bool]:
        """What the slot tells the module's constructor: its eps (where taken) and no affine map of its own."""
        out: dict[str, float | bool] = {"eps": eps} if cls.uses_eps else {}
        return {**out, cls.affine_keyword: False} if cls.affine_keyword else out

    @classmethod
    def check_options(cls, options: Mapping[str, Any], d: int | None = None) -> None:
        taken = sorted(set(options) & {"eps", "affine", "elementwise_affine"})
        if taken:
            raise ValueError(
                f"options.{taken[0]}: the slot's, not an option: set the spec's eps and affine (component {cls.name})"
            )
        keywords = {**options, **cls.slot_keywords(1e-5)}
        try:
            inspect.signature(cls.module).bind(d or 1, **keywords)
        except TypeError as exc:
            raise ValueError(
                f"component: {cls.name} must accept (d, **options) with options {dict(options)}: {exc}"
            ) from None
        if d is not None:
            build_plugin(cls.name, cls.module, d, keywords)

    @classmethod
    def canonical_options(cls, options: Mapping[str, Any]) -> dict[str, object]:
        return dict(options)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return self.plugin(x)


PLUGIN_RULE = (
    "One affine map per slot, normbench's: a plug-in nn.Module gets the slot's eps where its constructor takes eps, "
    "affine=False (elementwise_affine=False) where it takes that, and its own per-feature gain or bias frozen at its "
    "initial value; normbench's gain and bias follow it where the slot has an affine map, and nothing where it has none"
)


def freeze_per_feature(module: nn.Module, d: int) -> tuple[str, ...]:
    """Turn every parameter of ``module`` with ``d`` elements along its last axis (a per-feature gain or bias) into a
    buffer of the same name and value, so it no longer trains; the names frozen."""
    names = [n for n, p in module.named_parameters() if p.shape[-1:] == (d,) and p.numel() == d]
    for name in names:
        owner_name, _, leaf = name.rpartition(".")
        owner = module.get_submodule(owner_name) if owner_name else module
        value = owner._parameters.pop(leaf)
        owner.register_buffer(leaf, value.detach().clone())
    return tuple(names)


def module_component(name: str, module: type[nn.Module]) -> type[PluginNorm]:
    """The component ``name`` computed by ``module(d, **options)``: a :class:`PluginNorm` subclass.

    The class must accept ``d`` as its first argument; ``NormSpec.options`` are passed as keywords, and the slot's
    eps and ``affine=False`` where it takes them (:class:`PluginNorm`).
    """
    parameters: Mapping[str, Any]
    try:
        parameters = inspect.signature(module).parameters
    except (TypeError, ValueError):
        parameters = {}
    affine = next((k for k in ("affine", "elementwise_affine") if k in parameters), None)
    attrs = {"name": name, "module": module, "uses_eps": "eps" in parameters, "affine_keyword": affine}
    return type("PluginNorm", (PluginNorm,), attrs)


#: what a plug-in norm may raise that normbench reports in one line: any error, and ``SystemExit`` (a norm's
#: ``sys.exit`` would otherwise end the command with no line at all); Ctrl-C still stops the command
PLUGIN_FAILURES: tuple[type[BaseException], ...] = (Exception, SystemExit)


def build_plugin(name: str, module: type[nn.Module], d: int, options: Mapping[str, Any]) -> nn.Module:
    """``module(d, **options)``, or a one-line error saying why it did not build."""
    try:
        built = module(d, **options)
    except PLUGIN_FAILURES as exc:  # the plug-in's own checks become one line
        raise ValueError(
            f"component: {name}(d={d}, **{dict(options)}) failed: {type(exc).__name__}: {folded_message(exc)}"
        ) from None
    if not isinstance(built, nn.Module):
        raise ValueError(f"component: {name}(d, **options) returned {type(built).__name__}, not an nn.Module")
    return built


def folded_message(exc: BaseException) -> str:
    """An exception's message with its line breaks folded (a plug-in's own message, kept whole)."""
    return " ".join(str(exc).split()) or type(exc).__name__
