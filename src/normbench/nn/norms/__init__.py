"""Normalization components, LayerNorm split into projection and scaling, one small module each: the base class
:class:`~normbench.nn.norms.base.Norm` and the spec that names a component, :class:`~normbench.nn.norms.base.NormSpec`
(:mod:`~normbench.nn.norms.base`); the registry of component classes (:mod:`~normbench.nn.norms.registry`); plug-ins
written without ``Norm`` (:mod:`~normbench.nn.norms.plugin`) and their code as part of their runs' identity
(:mod:`~normbench.nn.norms.source`); and the built-ins, ``both``, ``project``, ``scale`` and ``none``
(:mod:`~normbench.nn.norms.layer_norm`), ``paper_no_projection`` (:mod:`~normbench.nn.norms.paper_no_projection`),
``learned`` (:mod:`~normbench.nn.norms.learned`), ``scalenorm`` (:mod:`~normbench.nn.norms.scale_norm`) and ``dyt``
(:mod:`~normbench.nn.norms.dyt`). Every component is a subclass of ``Norm`` built as ``Cls(d, *, eps, affine,
**options)``, N(x) followed by a learned affine map y -> gain * y + bias where ``affine`` is set; adding one is one
class, registered by :func:`~normbench.nn.norms.registry.register_component`. The names below are the package's API.
"""

from normbench.nn.norms.base import Norm, NormSpec, NotShiftAndScale, create_norm
from normbench.nn.norms.dyt import DyT
from normbench.nn.norms.layer_norm import LayerNorm, NoNorm, Projection, RMSNorm
from normbench.nn.norms.learned import LearnedNorm
from normbench.nn.norms.paper_no_projection import PaperNoProjection
from normbench.nn.norms.plugin import PLUGIN_RULE, PluginNorm, module_component
from normbench.nn.norms.registry import (
    COMPONENTS,
    component_names,
    get_component,
    import_component,
    import_paths_refused,
    register_component,
)
from normbench.nn.norms.scale_norm import ScaleNorm
from normbench.nn.norms.source import ARCHIVED_SOURCES, source_identity, source_version

__all__ = [
    "ARCHIVED_SOURCES",
    "COMPONENTS",
    "PLUGIN_RULE",
    "DyT",
    "LayerNorm",
    "LearnedNorm",
    "NoNorm",
    "Norm",
    "NormSpec",
    "NotShiftAndScale",
    "PaperNoProjection",
    "PluginNorm",
    "Projection",
    "RMSNorm",
    "ScaleNorm",
    "component_names",
    "create_norm",
    "get_component",
    "import_component",
    "import_paths_refused",
    "module_component",
    "register_component",
    "source_identity",
    "source_version",
]
