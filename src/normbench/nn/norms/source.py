"""A plug-in's code as part of its runs' identity: the sha256 of the module file that defines it (or the version of
the distribution that ships it), so editing a plug-in norm gives new runs; a built-in is covered by the training
code's numerics version, and a plug-in with the very source its archived runs were trained with keeps their identity.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import sys
from collections.abc import Mapping
from types import MappingProxyType

from torch import nn

from normbench.nn.norms.base import LOOKUPS, Norm
from normbench.nn.norms.plugin import PluginNorm

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


LOOKUPS.source_identity = source_identity  # how a spec keys a plug-in by its code (base.Lookups)
