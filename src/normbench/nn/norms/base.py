"""The base class of the normalization components, and the spec that names one.

:class:`NormSpec` is the configuration (component name, affine, eps, options) that run keys are made of.
:class:`Norm` is N(x) over the last dimension of size d, then the affine map y -> gain * y + bias: each component
is one subclass, built as ``Cls(d, *, eps, affine, **options)``, and ``Norm(d, spec)`` builds the component ``spec``
names (:func:`create_norm`); its facts are class attributes, its option rules :meth:`Norm.check_options`, its map
:meth:`Norm.normalize`. A component of the shift-and-scale form N(x) = s(x) (x - m(x)), a scalar s(x) > 0 per vector
and a shift m(x) along a fixed direction (the two quantities through which :mod:`normbench.analysis.decompose` reads
a norm), defines :meth:`Norm.shift_and_scale`; on any other it is ``None``, and an analysis that needs the form
refuses it in one line (:class:`NotShiftAndScale`).
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, NotRequired, TypedDict

import torch
import torch.nn.functional as F
from torch import nn


class Lookups:
    """What a spec asks of the modules built on this one, installed here by each of them when it is imported (the
    package imports every module before a spec is used), so that imports point downwards only.

    Attributes:
        get_component: the class a component name names (:func:`~normbench.nn.norms.registry.get_component`).
        source_identity: what a component's code adds to its runs' identity
            (:func:`~normbench.nn.norms.source.source_identity`).
    """

    get_component: Callable[[str], type[Norm]]
    source_identity: Callable[[type[Norm]], str | None]


LOOKUPS = Lookups()


class NotShiftAndScale(ValueError):
    """A norm is not N(x) = s(x) (x - m(x)): an analysis that reads it in that form does not apply."""


class NormSpecFields(TypedDict):
    """A :class:`NormSpec` as a document (:meth:`NormSpec.as_dict`, :meth:`NormSpec.identity`): a run's norm in its
    effective architecture and identity."""

    component: str
    """The component's name (or a plug-in's import path)."""
    affine: bool
    """Whether the norm has its affine map."""
    eps: float
    """The spec's eps."""
    options: NotRequired[dict[str, Any]]
    """The component's keyword options, only when set."""
    source: NotRequired[str]
    """A plug-in's source version (:meth:`NormSpec.identity` only, where the component's code adds to identity)."""


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
            component = LOOKUPS.get_component(self.component)
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
        component = LOOKUPS.get_component(self.component)
        return NormSpec(
            self.component,
            self.affine and not component.identity,
            float(self.eps) if component.uses_eps else 0.0,
            component.canonical_options(self.options or {}) or None,
        )

    def as_dict(self) -> NormSpecFields:
        """``{component, affine, eps}``, plus ``options`` only when set: specs without options keep their identity."""
        out: NormSpecFields = {"component": self.component, "affine": self.affine, "eps": self.eps}
        if self.options:
            out["options"] = dict(self.options)
        return out

    def identity(self) -> NormSpecFields:
        """:meth:`as_dict`, plus the ``source`` of a plug-in's code
        (:func:`~normbench.nn.norms.source.source_identity`): what a run is keyed by, so editing a plug-in norm's file
        (or upgrading its distribution) gives new runs, never an old checkpoint."""
        out = self.as_dict()
        source = LOOKUPS.source_identity(LOOKUPS.get_component(self.component))
        if source is not None:
            out["source"] = source
        return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _keyword_options(cls: type[Norm]) -> dict[str, object]:
    """The options of ``cls(d, *, eps, affine, **options)``, read from its constructor: keyword -> default."""
    parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]  # after self
    names = [p.name for p in parameters]
    if names[:1] != ["d"] or not {"eps", "affine"} <= set(names):
        raise TypeError(f"{cls.__qualname__}: a norm's constructor is (d, *, eps, affine, **options), not {names}")
    options: dict[str, object] = {}
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
    def canonical_options(cls, options: Mapping[str, Any]) -> dict[str, object]:
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
    norm = LOOKUPS.get_component(spec.component)(d, eps=spec.eps, affine=spec.affine, **(spec.options or {}))
    norm.spec = spec
    return norm
