"""Normalization components: LayerNorm split into projection and scaling.

For x in R^d with mean mu and ones vector 1:

* ``project``: P(x) = x - mu * 1, the orthogonal projection onto the hyperplane 1^T y = 0.
* ``scale``: S(x) = x * sqrt(d) / sqrt(||x||^2 + d * eps), norm sqrt(d) (= RMSNorm).
* ``both``: S(P(x)) = (x - mu) / sqrt(var(x) + eps) (= LayerNorm).
* ``none``: identity.
* ``paper_no_projection``: the "without projection" norm of Brody et al. (2023) exactly as
  their code computes it, ``F.normalize(x, dim=-1) / sqrt(d)``: norm 1/sqrt(d), not sqrt(d).
* ``learned``: S(P_u(x)) with P_u(x) = x - (u^T x) u, the projection onto the hyperplane
  orthogonal to a learned unit vector u = v / ||v|| (v initialised to 1, so it starts as
  LayerNorm): the open question of Brody et al. (2023), Section 5.
* ``scalenorm`` (Nguyen & Salazar 2019): g x / sqrt(||x||^2 + eps), one learned scalar g
  initialised to sqrt(d) (option ``g``); every output has norm g (eps = 0).
* ``dyt``, Dynamic Tanh (Zhu et al. 2025): tanh(alpha x) elementwise, one learned scalar alpha
  (initial value: option ``alpha``, default 0.5); no statistic over the features.

Each may be followed by a learned affine map y -> gain * y + bias.

Every component is a small ``nn.Module``, a subclass of :class:`Norm` built as
``Cls(d, *, eps, affine, **options)``: the width ``d``, the spec's ``eps``, whether the affine map follows,
and the component's own keyword options with their defaults (``DyT(d, eps=..., affine=..., alpha=0.5)``).
What a component is (its ``name``, whether it ``projects`` or ``scales``, ...) are class attributes, its own
option rules its :meth:`Norm.check_options` (``scalenorm``: g > 0), and its map :meth:`Norm.normalize`.
Adding one is one class, registered by the :func:`register_component` decorator.

One registry holds the classes: the built-ins, then the plug-ins of other packages, loaded on first need
from the ``normbench.norms`` entry-point group, and any class given by import path
(``NormSpec(component="package.module:ClassName")``). A plug-in written as the built-ins are (a
:class:`Norm` subclass) is used as it is; any other ``nn.Module`` class built as ``Cls(d, **options)`` that
maps (..., d) to (..., d) is wrapped (:func:`module_component`): it computes N(x) as a submodule ``plugin``,
and normbench's affine map follows it.

:class:`NormSpec` is the configuration (component name, affine, eps, options) that run keys are made
of; ``Norm(d, spec)`` builds the component it names (:func:`create_norm`).

The statistics-based components are N(x) = s(x) * (x - m(x)) with a scalar s(x) > 0 per vector
and a shift m(x) along a fixed direction (:meth:`Norm.shift_and_scale`): the embedding
decomposition of :mod:`normbench.analysis.decompose` reads a norm through exactly these two
quantities. ``dyt`` and wrapped plug-ins are not of that form (``Cls.shift_and_scale`` is ``None``):
analyses that need it refuse them in one line (:class:`NotShiftAndScale`).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import inspect
import json
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch import nn

from normbench.plugins import Registry

# why an import path may not be imported now (:func:`import_paths_refused`); ``None``: it may
_IMPORTS_REFUSED: ContextVar[str | None] = ContextVar("normbench_norm_imports_refused", default=None)
PAPER_NORMALIZE_EPS = 1e-12  # F.normalize's default clamp, as in the authors' code
ENTRY_POINT_GROUP = "normbench.norms"


class NotShiftAndScale(ValueError):
    """A norm is not N(x) = s(x) (x - m(x)): an analysis that reads it in that form does not apply."""


@dataclass(frozen=True)
class NormSpec:
    """Which parts of LayerNorm to apply, and how.

    Args:
        component: ``both`` (LayerNorm), ``project`` (subtract the mean), ``scale`` (RMSNorm),
            ``none`` (identity), ``paper_no_projection`` (``F.normalize(x)/sqrt(d)``),
            ``learned`` (LayerNorm with the ones vector replaced by a learned unit vector),
            ``scalenorm``, ``dyt``, a registered plug-in component, or an import path
            ``package.module:ClassName`` of a :class:`Norm` subclass or of an ``nn.Module`` taking d.
        affine: learn a per-feature gain and bias after the normalization (DyT's gamma and beta).
        eps: added to the variance (``both``, ``learned``), mean square (``scale``) or squared norm
            (``scalenorm``); unused otherwise.
        options: the component's keyword options (``dyt``: ``alpha``, the initial alpha, default
            0.5; ``scalenorm``: ``g``, the initial g, default sqrt(d); a plug-in: its keyword arguments).
    """

    component: str = "both"
    affine: bool = True
    eps: float = 1e-5
    options: dict[str, Any] | None = None

    def __hash__(self) -> int:
        return hash((self.component, self.affine, self.eps, json.dumps(self.options, sort_keys=True, default=str)))

    def check(self, field: str = "", d: int | None = None) -> None:
        """One-line error naming ``field`` (e.g. ``model.arch.attn_norm``) unless the spec is valid.

        Architecture configs check their specs (they know the field names and the width ``d``, with
        which a wrapped plug-in is built once to check it); :func:`create_norm` checks its own.
        """
        prefix = f"{field}." if field else ""
        try:
            component = get_component(self.component)
            if self.options is not None and not isinstance(self.options, Mapping):
                raise ValueError(f"options: must be a mapping of keyword options, got {self.options!r}")
            component.check_options(self.options or {}, d)
        except ValueError as exc:
            raise ValueError(f"{prefix}{exc}") from None
        if not (isinstance(self.eps, (int, float)) and self.eps >= 0 and math.isfinite(self.eps)):
            raise ValueError(f"{prefix}eps: must be a finite number >= 0, got {self.eps!r}")

    def canonical(self) -> NormSpec:
        """The spec with the settings its component ignores reset (identical maps, identical specs).

        Options at their defaults are dropped (``options: None``), so ``{alpha: 0.5}`` and no
        options name the same DyT (:meth:`Norm.canonical_options`).
        """
        component = get_component(self.component)
        return NormSpec(
            self.component,
            self.affine and not component.identity,
            float(self.eps) if component.uses_eps else 0.0,
            component.canonical_options(self.options or {}) or None,
        )

    def as_dict(self) -> dict[str, Any]:
        """``{component, affine, eps}``, plus ``options`` only when set: specs without options keep their identity."""
        out: dict[str, Any] = {"component": self.component, "affine": self.affine, "eps": self.eps}
        if self.options:
            out["options"] = dict(self.options)
        return out

    def identity(self) -> dict[str, Any]:
        """:meth:`as_dict`, plus the ``source`` of a plug-in's code (:func:`source_identity`): what a run is keyed by,
        so editing a plug-in norm's file (or upgrading its distribution) gives new runs, never an old checkpoint."""
        out = self.as_dict()
        source = source_identity(get_component(self.component))
        if source is not None:
            out["source"] = source
        return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _keyword_options(cls: type[Norm]) -> dict[str, Any]:
    """The options of ``cls(d, *, eps, affine, **options)``, read from its constructor: keyword -> default."""
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]  # after self
    names = [p.name for p in parameters]
    if names[:1] != ["d"] or not {"eps", "affine"} <= set(names):
        raise TypeError(f"{cls.__qualname__}: a norm's constructor is (d, *, eps, affine, **options), not {names}")
    options = {}
    for p in parameters[1:]:
        if p.kind is p.VAR_KEYWORD or p.name in ("eps", "affine"):
            continue
        if p.kind is not p.KEYWORD_ONLY or p.default is p.empty:
            raise TypeError(f"{cls.__qualname__}: option {p.name!r} must be a keyword-only argument with a default")
        options[p.name] = p.default
    return options


class _BuiltFromSpec(type):
    """Calling :class:`Norm` itself, ``Norm(d, spec)``, builds the component ``spec`` names (:func:`create_norm`)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is Norm:
            return create_norm(*args, **kwargs)
        return super().__call__(*args, **kwargs)

    @property
    def __signature__(cls) -> inspect.Signature:
        """What ``inspect.signature`` reports: the constructor's parameters (``Norm`` itself: ``(d, spec)``)."""
        if cls is Norm:
            return inspect.signature(create_norm)
        return inspect.Signature(list(inspect.signature(cls.__init__).parameters.values())[1:])


class _NoShiftAndScale:
    """``shift_and_scale`` of a component not of that form: ``None`` on the class, so ``Cls.shift_and_scale is None``
    tells such components apart; on a module, a method that raises :class:`NotShiftAndScale`."""

    def __get__(self, norm: Norm | None, owner: type | None = None) -> Callable[[torch.Tensor], Any] | None:
        if norm is None:
            return None

        def refuse(x: torch.Tensor) -> Any:
            raise NotShiftAndScale(
                f"component: {norm.name} is not of the shift-and-scale form "
                f"N(x) = s(x) (x - m(x)); this analysis does not apply to it"
            )

        return refuse


class Norm(nn.Module, metaclass=_BuiltFromSpec):
    """Base of the normalization components: N(x) over the last dimension of size ``d``, then the affine map.

    A subclass is one component, built as ``Cls(d, *, eps=1e-5, affine=True, **options)``: its options are
    keyword-only arguments of its constructor with their defaults, passed on to ``super().__init__``.
    ``Norm(d, spec)``, the base class called with a :class:`NormSpec`, builds the component the spec names.

    Class attributes (the component's facts):
        name: the value of ``NormSpec.component`` that selects it (default: its import path
            ``module:ClassName``).
        options: its keyword options and their defaults, read from its constructor.
        projects: N(x) is orthogonal to ``unit_direction()`` (its keys lie on a hyperplane).
        scales: with eps = 0 every N(x) has the same norm (after the affine map: lies on one ellipsoid),
            so every distinct key it outputs is a vertex of their hull and none is unselectable (Brody
            et al. 2023, Section 3.2); inputs it maps to the same point (x and 2x; for LayerNorm also
            x + c1) give duplicate keys, and eps > 0 shortens vectors whose mean square is comparable to eps.
        uses_eps: ``eps`` changes the map (otherwise the spec's eps is canonicalised to 0).
        identity: N(x) = x; such a norm has no affine map either.
        learned_direction: the norm owns a learned normal ``direction`` v (u = v / ||v||, see ``learned``).
        own_parameters: the names of its own learned scalars (``dyt``: alpha, ``scalenorm``: g).

    A component of the shift-and-scale form defines :meth:`shift_and_scale`; on one that does not,
    ``Cls.shift_and_scale`` is ``None``.

    Attributes of a module: ``d``, ``shape`` (``(d,)``), ``eps``, ``spec`` (the :class:`NormSpec` it was
    built from), ``weight`` and ``bias`` (the affine map; ``None`` without it), ``direction`` (``None``
    unless learned) and the buffer ``ones_normal`` = 1/sqrt(d) 1, LayerNorm's normal.
    """

    name: ClassVar[str] = "norm"
    options: ClassVar[Mapping[str, Any]] = MappingProxyType({})
    projects: ClassVar[bool] = False
    scales: ClassVar[bool] = False
    uses_eps: ClassVar[bool] = False
    identity: ClassVar[bool] = False
    learned_direction: ClassVar[bool] = False
    own_parameters: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = f"{cls.__module__}:{cls.__qualname__}"
        cls.options = MappingProxyType(_keyword_options(cls))

    def __init__(self, d: int, *, eps: float = 1e-5, affine: bool = True, **options: Any) -> None:
        super().__init__()
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            raise TypeError(f"{type(self).__name__}: unexpected options {', '.join(unknown)}")
        self.d, self.shape, self.eps = d, (d,), eps
        given = {k: v for k, v in options.items() if v != self.options[k]}
        self.spec = NormSpec(self.name, affine, eps, given or None)
        with_affine = affine and not self.identity
        self.weight = nn.Parameter(torch.ones(d)) if with_affine else None
        self.bias = nn.Parameter(torch.zeros(d)) if with_affine else None
        # learned: the normal v of the projection hyperplane (unnormalised; u = v / ||v||)
        self.direction = nn.Parameter(torch.ones(d)) if self.learned_direction else None
        # 1/sqrt(d) 1, LayerNorm's normal; a buffer, so it follows the module to its device and dtype
        self.register_buffer("ones_normal", torch.full((d,), d**-0.5), persistent=False)

    @classmethod
    def check_options(cls, options: Mapping[str, Any], d: int | None = None) -> None:
        """One-line error (without the field prefix) unless ``options`` fit the component.

        Every option must be one of ``options``; one whose default is a number (or ``None``) must be a
        finite number (or ``None`` where that is the default), any other of its default's type. A
        component with rules of its own extends this; ``d`` is the width where the caller knows it.
        """
        unknown = sorted(set(options) - set(cls.options))
        if unknown:
            allowed = ", ".join(cls.options) or "none"
            raise ValueError(
                f"options: {', '.join(map(repr, unknown))} not allowed for component {cls.name}; allowed: {allowed}"
            )
        for key, value in options.items():
            default = cls.options[key]
            if value is None and default is None:  # the declared default
                continue
            if default is None or _is_number(default):
                if not (_is_number(value) and math.isfinite(value)):
                    raise ValueError(f"options.{key}: must be a finite number, got {value!r}")
            elif not isinstance(value, type(default)):
                raise ValueError(f"options.{key}: must be a {type(default).__name__}, got {value!r}")

    @classmethod
    def canonical_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
        """``options`` as they name the map: numeric options as floats, options at their defaults left out."""
        out = {}
        for key, value in options.items():
            default = cls.options.get(key)
            if value is not None and (default is None or _is_number(default)):
                value = float(value)
            if value != default:
                out[key] = value
        return out

    @property
    def component(self) -> type[Norm]:
        """The component's class, whose attributes are its facts (``name``, ``projects``, ...)."""
        return type(self)

    def extra_repr(self) -> str:
        spec = self.spec
        options = f", options={spec.options}" if spec.options else ""
        return f"d={self.d}, component={spec.component}, affine={self.weight is not None}, eps={spec.eps}{options}"

    def unit_direction(self) -> torch.Tensor:
        """The normal u of the projection hyperplane: 1/sqrt(d) for LayerNorm's projection, v/||v|| when learned."""
        if self.direction is not None:
            return F.normalize(self.direction, dim=0)
        return self.ones_normal

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        """N(x) over the last dimension, without the affine map."""
        raise NotImplementedError(f"{type(self).__name__} does not define normalize")

    shift_and_scale: Any = _NoShiftAndScale()
    """``shift_and_scale(x)``: (m, s) with normalize(x) = s * (x - m), the shift m (..., d) and the scalar scale
    s (..., 1), for a component of that form; here, where it is not, ``None`` (a module raises NotShiftAndScale)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.normalize(x)
        return y if self.weight is None else torch.addcmul(self.bias, y, self.weight)


def create_norm(d: int, spec: NormSpec | None = None) -> Norm:
    """The component ``spec`` names (default: LayerNorm) for width ``d``, or a one-line error for a bad spec.

    ``get_component(spec.component)(d, eps=spec.eps, affine=spec.affine, **spec.options)``; the module keeps
    ``spec`` as its ``spec``.
    """
    spec = spec if spec is not None else NormSpec()
    spec.check()
    norm = get_component(spec.component)(d, eps=spec.eps, affine=spec.affine, **(spec.options or {}))
    norm.spec = spec
    return norm


# the registry of component classes


def _flat(exc: BaseException) -> str:
    """An exception's message with its line breaks folded (a plug-in's own message, kept whole)."""
    return " ".join(str(exc).split()) or type(exc).__name__


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
    except Exception as exc:  # noqa: BLE001 - whatever the plug-in raises on import becomes one line
        raise ValueError(f"component: cannot import {path!r} ({type(exc).__name__}: {_flat(exc)})") from None
    if not (isinstance(obj, type) and issubclass(obj, nn.Module)):
        raise ValueError(f"component: {path!r} is {type(obj).__name__} {obj!r}, not an nn.Module class taking d")
    return _COMPONENTS.register(path, _as_component(path, obj))


# a plug-in's code as part of its identity

# The plug-in norms whose runs were archived before a plug-in's source was part of its runs' identity, with the
# sources they were trained with (every archived record of theirs names a clean commit holding exactly these bytes).
# With these very bytes such a norm keeps the identity its archived runs have (no ``source`` key); any edit gives it
# a ``source`` key, so new runs.
ARCHIVED_SOURCES: Mapping[str, str] = MappingProxyType(
    {
        "examples.pnorm_example:PNorm": "sha256:c59b29ceb5a68bb2117f17c966c09efb25e79f2c6387670917e25a9ba3521420",
        "examples.broken_norms:RunawayNorm": "sha256:b683e9ecc70453dab4e66b41cf348d6bb51ff198f98cde8d4a1fa8e7d088f841",
        "examples.broken_norms:NaNNorm": "sha256:b683e9ecc70453dab4e66b41cf348d6bb51ff198f98cde8d4a1fa8e7d088f841",
    }
)
_DIGESTS: dict[tuple[str, int, int], str] = {}  # (file, mtime_ns, size) -> its digest


def defining_class(component: type[Norm]) -> type[nn.Module]:
    """The class whose code computes a component: a wrapped plug-in's module, else the component itself."""
    return component.module if issubclass(component, PluginNorm) else component


def is_built_in(component: type[Norm]) -> bool:
    """The component's code is normbench's own (its numbers are versioned by the training code's numerics version)."""
    module = defining_class(component).__module__
    return module == "normbench" or module.startswith("normbench.")


def source_version(component: type[Norm]) -> str | None:
    """The version of a plug-in component's code: ``sha256:<64 hex>`` of the bytes of the module file that defines
    it, or ``<distribution>==<version>`` of the installed distribution that ships it where that file cannot be read;
    ``None`` for a built-in. A ``ValueError`` where neither can be had (a class defined in no file)."""
    if is_built_in(component):
        return None
    cls = defining_class(component)
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if isinstance(path, str) and path.endswith(".py"):
        try:
            stat = os.stat(path)
            key = (path, stat.st_mtime_ns, stat.st_size)
            if key not in _DIGESTS:
                with open(path, "rb") as fh:
                    _DIGESTS[key] = "sha256:" + hashlib.sha256(fh.read()).hexdigest()
            return _DIGESTS[key]
        except OSError:
            pass
    top = cls.__module__.partition(".")[0]
    for dist in importlib.metadata.packages_distributions().get(top, []):
        return f"{dist}=={importlib.metadata.version(dist)}"
    raise ValueError(
        f"component: {component.name} is defined in no readable module file and no installed distribution, so its "
        f"runs cannot be keyed by its code; define it in a module file"
    )


def source_identity(component: type[Norm]) -> str | None:
    """What a component's code adds to its runs' identity: :func:`source_version`, except for a built-in (``None``:
    the training code's numerics version covers it) and for a plug-in whose source is the one its archived runs were
    trained with (:data:`ARCHIVED_SOURCES`: those runs keep their identity)."""
    version = source_version(component)
    if version is None or ARCHIVED_SOURCES.get(component.name) == version:
        return None
    return version


# the built-in components


def _mean_shift(x: torch.Tensor) -> torch.Tensor:
    return x.mean(dim=-1, keepdim=True).expand_as(x)


def _rsqrt_mean_square(x: torch.Tensor, eps: float) -> torch.Tensor:
    return torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)


def _no_shift(x: torch.Tensor, scale: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.zeros_like(x), scale


@register_component
class LayerNorm(Norm):
    """``both``: S(P(x)) = (x - mu) / sqrt(var(x) + eps); m = mean(x) 1, s = 1/sqrt(var + eps).

    The fused ``F.layer_norm`` computes it, with the affine map.
    """

    name = "both"
    projects = uses_eps = scales = True

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, self.shape, eps=self.eps)

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shift = _mean_shift(x)
        return shift, _rsqrt_mean_square(x - shift, self.eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, self.shape, self.weight, self.bias, eps=self.eps)


@register_component
class Projection(Norm):
    """``project``: P(x) = x - mean(x) 1; m = mean(x) 1, s = 1."""

    name = "project"
    projects = True

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x - x.mean(dim=-1, keepdim=True)

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return _mean_shift(x), torch.ones_like(x[..., :1])


@register_component
class RMSNorm(Norm):
    """``scale``: S(x) = x sqrt(d) / sqrt(||x||^2 + d eps) (``F.rms_norm``); m = 0, s = sqrt(d / (||x||^2 + d eps))."""

    name = "scale"
    uses_eps = scales = True

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return F.rms_norm(x, self.shape, eps=self.eps)

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return _no_shift(x, _rsqrt_mean_square(x, self.eps))


@register_component
class NoNorm(Norm):
    """``none``: N(x) = x, without an affine map; m = 0, s = 1."""

    name = "none"
    identity = True

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return _no_shift(x, torch.ones_like(x[..., :1]))


@register_component
class PaperNoProjection(Norm):
    """``paper_no_projection``: ``F.normalize(x, dim=-1) / sqrt(d)``; m = 0, s = 1/(sqrt(d) ||x||).

    The 1/sqrt(d) is folded into the per-row divisor.
    """

    name = "paper_no_projection"
    scales = True

    def divisor(self, x: torch.Tensor) -> torch.Tensor:
        """sqrt(d) ||x||, the per-row divisor of ``F.normalize(x) / sqrt(d)``."""
        return torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(PAPER_NORMALIZE_EPS) * math.sqrt(self.d)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x / self.divisor(x)

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return _no_shift(x, 1.0 / self.divisor(x))


@register_component
class LearnedNorm(Norm):
    """``learned``: S(P_u(x)), P_u(x) = x - (u^T x) u with u = v / ||v|| learned (``direction`` v, initialised to 1).

    m = (u^T x) u, s = sqrt(d / (||x - m||^2 + d eps)).
    """

    name = "learned"
    projects = uses_eps = learned_direction = scales = True

    def shift(self, x: torch.Tensor) -> torch.Tensor:
        u = self.unit_direction().to(x.dtype)
        return (x @ u)[..., None] * u

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        # projected in at least float32: a bfloat16 x @ u leaves ~1e-2 of x along u
        xf = x if x.dtype in (torch.float32, torch.float64) else x.float()
        return F.rms_norm(xf - self.shift(xf), self.shape, eps=self.eps).to(x.dtype)

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shift = self.shift(x)
        return shift, _rsqrt_mean_square(x - shift, self.eps)


@register_component
class ScaleNorm(Norm):
    """``scalenorm`` (Nguyen & Salazar 2019): g x / sqrt(||x||^2 + eps), one learned g per norm (initial value:
    option ``g``, default sqrt(d)); m = 0, s = g / sqrt(||x||^2 + eps)."""

    name = "scalenorm"
    uses_eps = scales = True
    own_parameters = ("g",)

    def __init__(self, d: int, *, eps: float = 1e-5, affine: bool = True, g: float | None = None) -> None:
        super().__init__(d, eps=eps, affine=affine, g=g)
        self.g = nn.Parameter(torch.tensor(float(math.sqrt(d) if g is None else g)))

    @classmethod
    def check_options(cls, options: Mapping[str, Any], d: int | None = None) -> None:
        super().check_options(options, d)
        g = options.get("g")
        if g is not None and g <= 0:
            raise ValueError(f"options.g: must be > 0, got {g!r}")

    def scale(self, x: torch.Tensor) -> torch.Tensor:
        """g / sqrt(||x||^2 + eps), per row (..., 1)."""
        return self.g.to(x.dtype) * torch.rsqrt(x.pow(2).sum(dim=-1, keepdim=True) + self.eps)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale(x)

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return _no_shift(x, self.scale(x))


@register_component
class DyT(Norm):
    """``dyt``, Dynamic Tanh (Zhu et al. 2025): tanh(alpha x), one learned alpha per norm (initial value: option
    ``alpha``); not of the shift-and-scale form."""

    name = "dyt"
    own_parameters = ("alpha",)

    def __init__(self, d: int, *, eps: float = 1e-5, affine: bool = True, alpha: float = 0.5) -> None:
        super().__init__(d, eps=eps, affine=affine, alpha=alpha)
        self.alpha = nn.Parameter(torch.tensor(float(alpha)))

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.alpha.to(x.dtype) * x)


COMPONENTS: tuple[str, ...] = tuple(_COMPONENTS.entries)  # the built-in components


# plug-ins written without Norm


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
    def slot_keywords(cls, eps: float) -> dict[str, Any]:
        """What the slot tells the module's constructor: its eps (where taken) and no affine map of its own."""
        out: dict[str, Any] = {"eps": eps} if cls.uses_eps else {}
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
    def canonical_options(cls, options: Mapping[str, Any]) -> dict[str, Any]:
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


def build_plugin(name: str, module: type[nn.Module], d: int, options: Mapping[str, Any]) -> nn.Module:
    """``module(d, **options)``, or a one-line error saying why it did not build."""
    try:
        built = module(d, **options)
    except Exception as exc:  # noqa: BLE001 - the plug-in's own checks become one line
        raise ValueError(
            f"component: {name}(d={d}, **{dict(options)}) failed: {type(exc).__name__}: {_flat(exc)}"
        ) from None
    if not isinstance(built, nn.Module):
        raise ValueError(f"component: {name}(d, **options) returned {type(built).__name__}, not an nn.Module")
    return built
