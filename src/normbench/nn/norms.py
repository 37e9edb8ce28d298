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
* a plug-in: ``package.module:ClassName``, any ``nn.Module`` built as ``ClassName(d, **options)``
  that maps (..., d) to (..., d) (:func:`module_component`).

Each may be followed by a learned affine map y -> gain * y + bias. Components are registered
(:func:`register_component`); other packages add theirs through the ``normbench.norms``
entry-point group, each entry point naming a :class:`Component`.

The statistics-based components are N(x) = s(x) * (x - m(x)) with a scalar s(x) > 0 per vector
and a shift m(x) along a fixed direction (:meth:`Norm.shift_and_scale`): the embedding
decomposition of :mod:`normbench.analysis.decompose` reads a norm through exactly these two
quantities. ``dyt`` and plug-ins are not of that form (``Component.shift_and_scale`` is ``None``):
analyses that need it refuse them in one line (:class:`NotShiftAndScale`).
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from normbench.plugins import Registry

PAPER_NORMALIZE_EPS = 1e-12  # F.normalize's default clamp, as in the authors' code
ENTRY_POINT_GROUP = "normbench.norms"


class NotShiftAndScale(ValueError):
    """A norm is not N(x) = s(x) (x - m(x)): an analysis that reads it in that form does not apply."""


def _no_parameters(d: int, options: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    return {}


@dataclass(frozen=True)
class Component:
    """One way of normalizing x in R^d, usually written N(x) = s(x) (x - m(x)).

    Attributes:
        name: the value of ``NormSpec.component`` that selects it.
        normalize: ``(norm, x) -> N(x)`` over the last dimension (no affine map).
        shift_and_scale: ``(norm, x) -> (m (..., d), s (..., 1))``, the same map in shift/scale form;
            ``None`` for a map not of that form (``dyt``, plug-ins).
        options: the keyword options ``NormSpec.options`` may set, with their defaults.
        parameters: ``(d, options) -> {name: initial value}``, the component's own learned tensors
            (``dyt``: alpha, ``scalenorm``: g), registered on the :class:`Norm` under these names.
        module: a plug-in's ``nn.Module`` class, built as ``module(d, **options)``; ``normalize`` calls it.
        projects: N(x) is orthogonal to ``norm.unit_direction()`` (its keys lie on a hyperplane).
        uses_eps: ``NormSpec.eps`` changes the map (otherwise it is canonicalised to 0).
        learned_direction: the norm owns a learned normal ``direction`` (see ``learned``).
        identity: N(x) = x; such a norm has no affine map either.
        scales: with eps = 0 every N(x) has the same norm (after the affine map: lies on one ellipsoid),
            so every distinct key it outputs is a vertex of their hull and none is unselectable (Brody
            et al. 2023, Section 3.2); inputs it maps to the same point (x and 2x; for LayerNorm also
            x + c1) give duplicate keys, and eps > 0 shortens vectors whose mean square is comparable to eps.
    """

    name: str
    normalize: Callable[[Norm, torch.Tensor], torch.Tensor]
    shift_and_scale: Callable[[Norm, torch.Tensor], tuple[torch.Tensor, torch.Tensor]] | None
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    parameters: Callable[[int, Mapping[str, Any]], dict[str, torch.Tensor]] = _no_parameters
    module: type[nn.Module] | None = None
    projects: bool = False
    uses_eps: bool = False
    learned_direction: bool = False
    identity: bool = False
    scales: bool = False


def _plugin_entry(name: str, entry: Any) -> Component:
    """An entry point's object as a component: a :class:`Component`, or an ``nn.Module`` class taking d."""
    if isinstance(entry, Component):
        return entry
    if isinstance(entry, type) and issubclass(entry, nn.Module):
        return module_component(name, entry)
    raise TypeError(
        f"entry point {name!r} of {ENTRY_POINT_GROUP}: {entry!r} is neither a normbench Component "
        f"nor an nn.Module class taking d"
    )


_COMPONENTS: Registry[Component] = Registry("component", ENTRY_POINT_GROUP, Component, convert=_plugin_entry)


def module_component(name: str, module: type[nn.Module]) -> Component:
    """A plug-in component: ``module(d, **options)`` computes N(x); it has no shift-and-scale form.

    The class must accept ``d`` as its first argument; ``NormSpec.options`` are passed as keywords
    (checked against its signature when a spec is checked). Any gain it needs is its own business:
    ``NormSpec.affine`` adds normbench's per-feature affine map after it.
    """
    return Component(name, lambda n, x: n.plugin(x), None, module=module)


def import_component(path: str) -> Component:
    """The component of an import path ``package.module:ClassName`` (registered under that path), or a one-line error."""
    module_name, _, attr = path.partition(":")
    if not module_name or not attr:
        raise ValueError(
            f"component: {path!r} is not allowed; give a registered name or an import path package.module:ClassName"
        )
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception as exc:  # noqa: BLE001 - whatever the plug-in raises on import becomes one line
        raise ValueError(f"component: cannot import {path!r} ({type(exc).__name__}: {_flat(exc)})") from None
    if not (isinstance(obj, type) and issubclass(obj, nn.Module)):
        raise ValueError(f"component: {path!r} is {type(obj).__name__} {obj!r}, not an nn.Module class taking d")
    return _COMPONENTS.register(path, module_component(path, obj))


def _flat(exc: BaseException) -> str:
    """An exception's message with its line breaks folded (a plug-in's own message, kept whole)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def check_options(component: Component, options: Mapping[str, Any], d: int | None = None) -> None:
    """One-line error (without the field prefix) unless ``options`` fit the component.

    Built-in components accept the options they declare (finite numbers; ``g`` > 0); a plug-in
    class must accept ``(d, **options)`` by its signature and, given the width ``d``, build.
    """
    if component.module is not None:
        try:
            inspect.signature(component.module).bind(d or 1, **options)
        except TypeError as exc:
            raise ValueError(
                f"component: {component.name} must accept (d, **options) with options {dict(options)}: {exc}"
            ) from None
        if d is not None:
            build_plugin(component, d, options)
        return
    unknown = sorted(set(options) - set(component.options))
    if unknown:
        allowed = ", ".join(component.options) or "none"
        raise ValueError(
            f"options: {', '.join(map(repr, unknown))} not allowed for component {component.name}; allowed: {allowed}"
        )
    for key, value in options.items():
        if value is None and component.options[key] is None:  # the declared default
            continue
        if not (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)):
            raise ValueError(f"options.{key}: must be a finite number, got {value!r}")
        if key == "g" and value <= 0:
            raise ValueError(f"options.g: must be > 0, got {value!r}")


def build_plugin(component: Component, d: int, options: Mapping[str, Any]) -> nn.Module:
    """``component.module(d, **options)``, or a one-line error saying why it did not build."""
    try:
        module = component.module(d, **options)  # type: ignore[misc]
    except Exception as exc:  # noqa: BLE001 - the plug-in's own checks become one line
        raise ValueError(
            f"component: {component.name}(d={d}, **{dict(options)}) failed: {type(exc).__name__}: {_flat(exc)}"
        ) from None
    if not isinstance(module, nn.Module):
        raise ValueError(
            f"component: {component.name}(d, **options) returned {type(module).__name__}, not an nn.Module"
        )
    return module


def register_component(component: Component) -> Component:
    """Make ``component`` available as ``NormSpec(component=component.name)``."""
    return _COMPONENTS.register(component.name, component)


def get_component(name: str) -> Component:
    """The registered component ``name``, or a one-line error listing the allowed ones.

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
        raise ValueError(
            f"component: {name!r} is not allowed; choose one of {', '.join(component_names())}, "
            f"or an import path package.module:ClassName"
        )
    return component


def component_names() -> tuple[str, ...]:
    """Names of every registered component (built-in first, then plug-ins)."""
    return tuple(_COMPONENTS.names())


@dataclass(frozen=True)
class NormSpec:
    """Which parts of LayerNorm to apply, and how.

    Args:
        component: ``both`` (LayerNorm), ``project`` (subtract the mean), ``scale`` (RMSNorm),
            ``none`` (identity), ``paper_no_projection`` (``F.normalize(x)/sqrt(d)``),
            ``learned`` (LayerNorm with the ones vector replaced by a learned unit vector), or a
            registered plug-in component, ``scalenorm``, ``dyt``, or an import path
            ``package.module:ClassName`` of an ``nn.Module`` taking d.
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
        which a plug-in is built once to check it); :class:`Norm` checks its own.
        """
        prefix = f"{field}." if field else ""
        try:
            component = get_component(self.component)
            if self.options is not None and not isinstance(self.options, Mapping):
                raise ValueError(f"options: must be a mapping of keyword options, got {self.options!r}")
            check_options(component, self.options or {}, d)
        except ValueError as exc:
            raise ValueError(f"{prefix}{exc}") from None
        if not (isinstance(self.eps, (int, float)) and self.eps >= 0 and math.isfinite(self.eps)):
            raise ValueError(f"{prefix}eps: must be a finite number >= 0, got {self.eps!r}")

    def canonical(self) -> NormSpec:
        """The spec with the settings its component ignores reset (identical maps, identical specs).

        Options at their defaults are dropped (``options: None``), so ``{alpha: 0.5}`` and no
        options name the same DyT.
        """
        component = get_component(self.component)
        options = {
            k: (float(v) if component.module is None and v is not None else v) for k, v in (self.options or {}).items()
        }
        options = {k: v for k, v in options.items() if component.module is not None or v != component.options.get(k)}
        return NormSpec(
            self.component,
            self.affine and not component.identity,
            float(self.eps) if component.uses_eps else 0.0,
            options or None,
        )

    def as_dict(self) -> dict[str, Any]:
        """``{component, affine, eps}``, plus ``options`` only when set (so specs without options keep their identity)."""
        out: dict[str, Any] = {"component": self.component, "affine": self.affine, "eps": self.eps}
        if self.options:
            out["options"] = dict(self.options)
        return out


class Norm(nn.Module):
    """The normalization described by a :class:`NormSpec` over the last dimension of size ``d``.

    ``both`` and ``scale`` dispatch to the fused ``F.layer_norm`` / ``F.rms_norm`` kernels, which
    compute exactly S(P(x)) and S(x); the tests check them against the definitions.
    """

    def __init__(self, d: int, spec: NormSpec | None = None) -> None:
        super().__init__()
        self.spec = spec if spec is not None else NormSpec()
        self.spec.check()
        self.component = get_component(self.spec.component)
        self.d = d
        self.shape = (d,)
        options = dict(self.spec.options or {})
        self.plugin = build_plugin(self.component, d, options) if self.component.module is not None else None
        affine = self.spec.affine and not self.component.identity
        self.weight = nn.Parameter(torch.ones(d)) if affine else None
        self.bias = nn.Parameter(torch.zeros(d)) if affine else None
        # learned: the normal v of the projection hyperplane (unnormalised; u = v / ||v||)
        self.direction = nn.Parameter(torch.ones(d)) if self.component.learned_direction else None
        # the component's own scalars (dyt: alpha; scalenorm: g)
        own = self.component.parameters(d, {**self.component.options, **options})
        for name, value in own.items():
            self.register_parameter(name, nn.Parameter(value))
        self.own_parameters: tuple[str, ...] = tuple(own)
        # 1/sqrt(d) 1, LayerNorm's normal; a buffer, so it follows the module to its device and dtype
        self.register_buffer("ones_normal", torch.full((d,), d**-0.5), persistent=False)

    def extra_repr(self) -> str:
        options = f", options={self.spec.options}" if self.spec.options else ""
        return f"d={self.d}, component={self.spec.component}, affine={self.weight is not None}, eps={self.spec.eps}{options}"

    def unit_direction(self) -> torch.Tensor:
        """The normal u of the projection hyperplane: 1/sqrt(d) for LayerNorm's projection, v/||v|| when learned."""
        if self.direction is not None:
            return F.normalize(self.direction, dim=0)
        return self.ones_normal

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(m, s) with normalize(x) = s * (x - m): the shift m (..., d) and scalar scale s (..., 1).

        both: m = mean(x) 1, s = 1/sqrt(var + eps); project: m = mean(x) 1, s = 1; scale:
        m = 0, s = sqrt(d / (||x||^2 + d eps)); paper_no_projection: m = 0, s = 1/(sqrt(d) ||x||);
        learned: m = (u^T x) u, s = sqrt(d / (||x - m||^2 + d eps)); none: m = 0, s = 1;
        scalenorm: m = 0, s = g / sqrt(||x||^2 + eps). Raises :class:`NotShiftAndScale` for ``dyt``
        and plug-ins.
        """
        if self.component.shift_and_scale is None:
            raise NotShiftAndScale(
                f"component: {self.component.name} is not of the shift-and-scale form "
                f"N(x) = s(x) (x - m(x)); this analysis does not apply to it"
            )
        return self.component.shift_and_scale(self, x)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        """The normalization without the affine map."""
        return self.component.normalize(self, x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.weight is None:
            return self.normalize(x)
        if self.spec.component == "both":  # fused affine
            return F.layer_norm(x, self.shape, self.weight, self.bias, eps=self.spec.eps)
        return torch.addcmul(self.bias, self.normalize(x), self.weight)


def _mean_shift(norm: Norm, x: torch.Tensor) -> torch.Tensor:
    return x.mean(dim=-1, keepdim=True).expand_as(x)


def _rsqrt_mean_square(x: torch.Tensor, eps: float) -> torch.Tensor:
    return torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + eps)


def _paper_norm(norm: Norm, x: torch.Tensor) -> torch.Tensor:
    """sqrt(d) ||x||, the per-row divisor of ``F.normalize(x) / sqrt(d)``."""
    return torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(PAPER_NORMALIZE_EPS) * math.sqrt(norm.d)


def _learned_shift(norm: Norm, x: torch.Tensor) -> torch.Tensor:
    u = norm.unit_direction().to(x.dtype)
    return (x @ u)[..., None] * u


def _learned_normalize(norm: Norm, x: torch.Tensor) -> torch.Tensor:
    # projected in at least float32: a bfloat16 x @ u leaves ~1e-2 of x along u
    xf = x if x.dtype in (torch.float32, torch.float64) else x.float()
    return F.rms_norm(xf - _learned_shift(norm, xf), norm.shape, eps=norm.spec.eps).to(x.dtype)


def _both_shift_and_scale(norm: Norm, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    shift = _mean_shift(norm, x)
    return shift, _rsqrt_mean_square(x - shift, norm.spec.eps)


def _learned_shift_and_scale(norm: Norm, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    shift = _learned_shift(norm, x)
    return shift, _rsqrt_mean_square(x - shift, norm.spec.eps)


def _no_shift(x: torch.Tensor, scale: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.zeros_like(x), scale


def _scalenorm_scale(norm: Norm, x: torch.Tensor) -> torch.Tensor:
    """g / sqrt(||x||^2 + eps), per row (..., 1)."""
    return norm.g.to(x.dtype) * torch.rsqrt(x.pow(2).sum(dim=-1, keepdim=True) + norm.spec.eps)


def _scalar(value: float) -> torch.Tensor:
    return torch.tensor(float(value))


for _component in (
    Component(
        "both",
        lambda n, x: F.layer_norm(x, n.shape, eps=n.spec.eps),
        _both_shift_and_scale,
        projects=True,
        uses_eps=True,
        scales=True,
    ),
    Component(
        "project",
        lambda n, x: x - x.mean(dim=-1, keepdim=True),
        lambda n, x: (_mean_shift(n, x), torch.ones_like(x[..., :1])),
        projects=True,
    ),
    Component(
        "scale",
        lambda n, x: F.rms_norm(x, n.shape, eps=n.spec.eps),
        lambda n, x: _no_shift(x, _rsqrt_mean_square(x, n.spec.eps)),
        uses_eps=True,
        scales=True,
    ),
    Component("none", lambda n, x: x, lambda n, x: _no_shift(x, torch.ones_like(x[..., :1])), identity=True),
    # = F.normalize(x, dim=-1) / sqrt(d), with the 1/sqrt(d) folded into the per-row divisor
    Component(
        "paper_no_projection",
        lambda n, x: x / _paper_norm(n, x),
        lambda n, x: _no_shift(x, 1.0 / _paper_norm(n, x)),
        scales=True,
    ),
    Component(
        "learned",
        _learned_normalize,
        _learned_shift_and_scale,
        projects=True,
        uses_eps=True,
        learned_direction=True,
        scales=True,
    ),
    # Nguyen & Salazar (2019): g x / ||x||, one learned g per norm initialised to sqrt(d)
    Component(
        "scalenorm",
        lambda n, x: x * _scalenorm_scale(n, x),
        lambda n, x: _no_shift(x, _scalenorm_scale(n, x)),
        options=MappingProxyType({"g": None}),
        parameters=lambda d, o: {"g": _scalar(math.sqrt(d) if o.get("g") is None else o["g"])},
        uses_eps=True,
        scales=True,
    ),
    # Zhu et al. (2025): tanh(alpha x), one learned alpha per norm (initial value: option alpha)
    Component(
        "dyt",
        lambda n, x: torch.tanh(n.alpha.to(x.dtype) * x),
        None,
        options=MappingProxyType({"alpha": 0.5}),
        parameters=lambda d, o: {"alpha": _scalar(o["alpha"])},
    ),
):
    register_component(_component)
COMPONENTS: tuple[str, ...] = tuple(_COMPONENTS.entries)  # the built-in components
