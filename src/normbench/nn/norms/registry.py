"""The registry of component classes: name -> :class:`~normbench.nn.norms.base.Norm` subclass.

The built-ins first, in their order (:data:`COMPONENTS`), then the plug-ins of other packages, loaded on first need
from the ``normbench.norms`` entry-point group, and any class given by import path
(``NormSpec(component="package.module:ClassName")``), registered under that path when first used. A plug-in written
as the built-ins are (a ``Norm`` subclass) is used as it is; any other ``nn.Module`` class is wrapped
(:func:`~normbench.nn.norms.plugin.module_component`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from torch import nn

from normbench.nn.norms.base import LOOKUPS, Norm
from normbench.nn.norms.dyt import DyT
from normbench.nn.norms.layer_norm import LayerNorm, NoNorm, Projection, RMSNorm
from normbench.nn.norms.learned import LearnedNorm
from normbench.nn.norms.paper_no_projection import PaperNoProjection
from normbench.nn.norms.plugin import PLUGIN_FAILURES, folded_message, module_component
from normbench.nn.norms.scale_norm import ScaleNorm
from normbench.plugins import Registry

# why an import path may not be imported now (:func:`import_paths_refused`); ``None``: it may
_IMPORTS_REFUSED: ContextVar[str | None] = ContextVar("normbench_norm_imports_refused", default=None)
ENTRY_POINT_GROUP = "normbench.norms"
# the built-in components, in the order they register (the order of component_names())
BUILT_IN: tuple[type[Norm], ...] = (
    LayerNorm,
    Projection,
    RMSNorm,
    NoNorm,
    PaperNoProjection,
    LearnedNorm,
    ScaleNorm,
    DyT,
)


def _as_component(name: str, obj: Any) -> type[Norm]:
    """``obj`` as the component ``name``: a :class:`Norm` subclass as it is (a subclass named ``name`` where its own
    ``name`` differs), any other ``nn.Module`` class wrapped by :func:`module_component`; ``TypeError`` otherwise."""
    if isinstance(obj, type) and issubclass(obj, Norm):
        if obj.name == name:
            return obj
        return type(
            obj.__name__, (obj,), {"name": name, "__module__": obj.__module__, "__qualname__": obj.__qualname__}
        )
    if isinstance(obj, type) and issubclass(obj, nn.Module):
        return module_component(name, obj)
    raise TypeError(f"{obj!r} is neither a normbench Norm class nor an nn.Module class taking d")


def _plugin_entry(name: str, entry: Any) -> type[Norm]:
    """An entry point's object as a component class."""
    try:
        return _as_component(name, entry)
    except TypeError as exc:
        raise TypeError(f"entry point {name!r} of {ENTRY_POINT_GROUP}: {exc}") from None


_COMPONENTS: Registry[type[Norm]] = Registry("component", ENTRY_POINT_GROUP, type, convert=_plugin_entry)


def register_component(component: type[nn.Module], name: str | None = None) -> type[Norm]:
    """Make a component class available as ``NormSpec(component=name)`` (default: its ``name``); a class decorator.

    A :class:`Norm` subclass is registered as it is; another ``nn.Module`` class, built as ``Cls(d, **options)``,
    is wrapped (:func:`module_component`) and needs ``name``.
    """
    name = name if name is not None else getattr(component, "name", None)
    if not isinstance(name, str):
        raise ValueError(f"component: {component!r} has no name; register it with one")
    return _COMPONENTS.register(name, _as_component(name, component))


def get_component(name: str) -> type[Norm]:
    """The registered component class ``name``, or a one-line error listing the allowed names (those
    registered by name; an import path already used is one of the import paths the message allows).

    Plug-ins are loaded only for a name that is not built in: the built-in specs made while
    normbench itself is being imported never import a plug-in (which imports normbench). A name
    with a colon is an import path (:func:`import_component`).
    """
    if not isinstance(name, str):
        raise ValueError(f"component: must be a name, got {name!r}")
    if ":" in name and name not in _COMPONENTS.entries:
        return import_component(name)
    component = _COMPONENTS.get(name)
    if component is None:
        named = ", ".join(n for n in component_names() if ":" not in n)
        raise ValueError(
            f"component: {name!r} is not allowed; choose one of {named}, or an import path package.module:ClassName"
        )
    return component


def component_names() -> tuple[str, ...]:
    """Names of every registered component (built-in first, then plug-ins)."""
    return tuple(_COMPONENTS.names())


@contextmanager
def import_paths_refused(why: str) -> Iterator[None]:
    """Inside, a component named by an import path that this process has not imported yet is refused with
    a one-line error ending in ``why`` (how to allow it): a norm named by a file from elsewhere (a run
    record, a checkpoint) never imports code. Registered components, and import paths already used
    (e.g. by the config this process was given), stay allowed."""
    token = _IMPORTS_REFUSED.set(why)
    try:
        yield
    finally:
        _IMPORTS_REFUSED.reset(token)


def import_component(path: str) -> type[Norm]:
    """The component of an import path ``package.module:ClassName``, registered under that path; or a one-line error."""
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise ValueError(
            f"component: {path!r} is not allowed; give a registered name or an import path package.module:ClassName"
        )
    refused = _IMPORTS_REFUSED.get()
    if refused is not None:
        raise ValueError(f"component: {path!r} is an import path, not a registered norm; {refused}")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except PLUGIN_FAILURES as exc:  # whatever the plug-in raises on import becomes one line
        raise ValueError(f"component: cannot import {path!r} ({type(exc).__name__}: {folded_message(exc)})") from None
    if not (isinstance(obj, type) and issubclass(obj, nn.Module)):
        raise ValueError(f"component: {path!r} is {type(obj).__name__} {obj!r}, not an nn.Module class taking d")
    return _COMPONENTS.register(path, _as_component(path, obj))


for _built_in in BUILT_IN:
    register_component(_built_in)
COMPONENTS: tuple[str, ...] = tuple(_COMPONENTS.entries)  # the built-in components
LOOKUPS.get_component = get_component  # how a spec resolves its component name (base.Lookups)
