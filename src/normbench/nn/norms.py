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

Each may be followed by a learned affine map y -> gain * y + bias. Components are registered
(:func:`register_component`); other packages add theirs through the ``normbench.norms``
entry-point group, each entry point naming a :class:`Component`.

Every component is N(x) = s(x) * (x - m(x)) with a scalar s(x) > 0 per vector and a shift
m(x) along a fixed direction (:meth:`Norm.shift_and_scale`): the embedding decomposition of
:mod:`normbench.analysis.decompose` reads a norm through exactly these two quantities.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from normbench.plugins import Registry

PAPER_NORMALIZE_EPS = 1e-12  # F.normalize's default clamp, as in the authors' code
ENTRY_POINT_GROUP = "normbench.norms"


@dataclass(frozen=True)
class Component:
    """One way of normalizing x in R^d, written N(x) = s(x) (x - m(x)).

    Attributes:
        name: the value of ``NormSpec.component`` that selects it.
        normalize: ``(norm, x) -> N(x)`` over the last dimension (no affine map).
        shift_and_scale: ``(norm, x) -> (m (..., d), s (..., 1))``, the same map in shift/scale form.
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
    shift_and_scale: Callable[[Norm, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
    projects: bool = False
    uses_eps: bool = False
    learned_direction: bool = False
    identity: bool = False
    scales: bool = False


_COMPONENTS: Registry[Component] = Registry("component", ENTRY_POINT_GROUP, Component)


def register_component(component: Component) -> Component:
    """Make ``component`` available as ``NormSpec(component=component.name)``."""
    return _COMPONENTS.register(component.name, component)


def get_component(name: str) -> Component:
    """The registered component ``name``, or a one-line error listing the allowed ones.

    Plug-ins are loaded only for a name that is not built in: the built-in specs made while
    normbench itself is being imported never import a plug-in (which imports normbench).
    """
    component = _COMPONENTS.get(name)
    if component is None:
        raise ValueError(f"component: {name!r} is not allowed; choose one of {', '.join(component_names())}")
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
            registered plug-in component.
        affine: learn a per-feature gain and bias after the normalization.
        eps: added to the variance (``both``, ``learned``) or mean square (``scale``); unused otherwise.
    """

    component: str = "both"
    affine: bool = True
    eps: float = 1e-5

    def check(self, field: str = "") -> None:
        """One-line error naming ``field`` (e.g. ``model.arch.attn_norm``) unless the spec is valid.

        Architecture configs check their specs (they know the field names); :class:`Norm` checks its own.
        """
        prefix = f"{field}." if field else ""
        try:
            get_component(self.component)
        except ValueError as exc:
            raise ValueError(f"{prefix}{exc}") from None
        if not (isinstance(self.eps, (int, float)) and self.eps >= 0 and math.isfinite(self.eps)):
            raise ValueError(f"{prefix}eps: must be a finite number >= 0, got {self.eps!r}")

    def canonical(self) -> NormSpec:
        """The spec with the settings its component ignores reset (identical maps, identical specs)."""
        component = get_component(self.component)
        return NormSpec(self.component, self.affine and not component.identity,
                        float(self.eps) if component.uses_eps else 0.0)


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
        affine = self.spec.affine and not self.component.identity
        self.weight = nn.Parameter(torch.ones(d)) if affine else None
        self.bias = nn.Parameter(torch.zeros(d)) if affine else None
        # learned: the normal v of the projection hyperplane (unnormalised; u = v / ||v||)
        self.direction = nn.Parameter(torch.ones(d)) if self.component.learned_direction else None
        # 1/sqrt(d) 1, LayerNorm's normal; a buffer, so it follows the module to its device and dtype
        self.register_buffer("ones_normal", torch.full((d,), d**-0.5), persistent=False)

    def extra_repr(self) -> str:
        return f"d={self.d}, component={self.spec.component}, affine={self.weight is not None}, eps={self.spec.eps}"

    def unit_direction(self) -> torch.Tensor:
        """The normal u of the projection hyperplane: 1/sqrt(d) for LayerNorm's projection, v/||v|| when learned."""
        if self.direction is not None:
            return F.normalize(self.direction, dim=0)
        return self.ones_normal

    def shift_and_scale(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(m, s) with normalize(x) = s * (x - m): the shift m (..., d) and scalar scale s (..., 1).

        both: m = mean(x) 1, s = 1/sqrt(var + eps); project: m = mean(x) 1, s = 1; scale:
        m = 0, s = sqrt(d / (||x||^2 + d eps)); paper_no_projection: m = 0, s = 1/(sqrt(d) ||x||);
        learned: m = (u^T x) u, s = sqrt(d / (||x - m||^2 + d eps)); none: m = 0, s = 1.
        """
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


for _component in (
    Component("both", lambda n, x: F.layer_norm(x, n.shape, eps=n.spec.eps), _both_shift_and_scale,
              projects=True, uses_eps=True, scales=True),
    Component("project", lambda n, x: x - x.mean(dim=-1, keepdim=True),
              lambda n, x: (_mean_shift(n, x), torch.ones_like(x[..., :1])), projects=True),
    Component("scale", lambda n, x: F.rms_norm(x, n.shape, eps=n.spec.eps),
              lambda n, x: _no_shift(x, _rsqrt_mean_square(x, n.spec.eps)), uses_eps=True, scales=True),
    Component("none", lambda n, x: x, lambda n, x: _no_shift(x, torch.ones_like(x[..., :1])), identity=True),
    # = F.normalize(x, dim=-1) / sqrt(d), with the 1/sqrt(d) folded into the per-row divisor
    Component("paper_no_projection", lambda n, x: x / _paper_norm(n, x),
              lambda n, x: _no_shift(x, 1.0 / _paper_norm(n, x)), scales=True),
    Component("learned", _learned_normalize, _learned_shift_and_scale, projects=True, uses_eps=True,
              learned_direction=True, scales=True),
):
    register_component(_component)
COMPONENTS: tuple[str, ...] = tuple(_COMPONENTS.entries)  # the built-in components
