"""One configuration dataclass per architecture: every hyperparameter of a network, declared once.

The task modules take these as their ``arch`` argument (``--model.arch.d_model 8`` on the command
line, ``model.init_args.arch`` in a task YAML), the networks are built from them, and a run is
keyed by :meth:`ArchConfig.effective`: two configs that build the same network share it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar

from normbench.nn.norms import NormSpec
from normbench.nn.placement import NormRole, Placement, check_placement, present_norms

Activation = str  # one of normbench.nn.blocks.ACTIVATIONS; checked when the network is built


def check_positive(config: Any, *names: str) -> None:
    """One-line error unless every field ``names`` of ``config`` is a positive integer."""
    for name in names:
        value = getattr(config, name)
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"model.arch.{name}: must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class ArchConfig:
    """Base of the architecture configs: ``placement`` plus norms named in ``NORM_ROLES``."""

    NORM_ROLES: ClassVar[dict[str, NormRole]] = {}
    OPTIONAL: ClassVar[dict[str, Any]] = {"qk_norm": False}
    """Fields left out of :meth:`effective` at these values (absent norms: whenever absent): fields added
    after runs were published, so a network without them keeps its identity (its config hash)."""
    placement: Placement = "pre"
    qk_norm: bool = False

    def __post_init__(self) -> None:
        check_placement(self.placement)
        check_positive(self, "d_model", "n_heads", "n_layers")
        if self.d_model % self.n_heads:  # type: ignore[attr-defined]
            raise ValueError(
                f"model.arch.d_model={self.d_model} is not divisible by "  # type: ignore[attr-defined]
                f"model.arch.n_heads={self.n_heads}"
            )  # type: ignore[attr-defined]
        for name in self.NORM_ROLES:
            spec = getattr(self, name)
            if not isinstance(spec, NormSpec):
                raise ValueError(f"model.arch.{name}: must be a norm spec {{component, affine, eps}}, got {spec!r}")
            spec.check(f"model.arch.{name}", self.d_model)  # type: ignore[attr-defined]
        if not isinstance(self.qk_norm, bool):
            raise ValueError(f"model.arch.qk_norm: must be true or false, got {self.qk_norm!r}")
        if not 0.0 <= self.dropout < 1.0:  # type: ignore[attr-defined]
            raise ValueError(f"model.arch.dropout: must be in [0, 1), got {self.dropout!r}")  # type: ignore[attr-defined]

    def norms(self) -> dict[str, NormSpec]:
        """The norms the network has under its placement, by name, with canonical specs."""
        return {name: getattr(self, name).canonical() for name in present_norms(self.placement, self.NORM_ROLES)}

    def effective(self) -> dict[str, Any]:
        """The config as the network sees it: absent norms ``None``, ignored norm settings reset.

        Optional fields (``OPTIONAL``, the ``output`` norms) are left out where they do not change the network.
        """
        present = self.norms()
        out = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if not (f.name in self.OPTIONAL and getattr(self, f.name) == self.OPTIONAL[f.name])
        }
        for name, role in self.NORM_ROLES.items():
            if name in present:
                out[name] = present[name].as_dict()
            elif role == "output":
                del out[name]
            else:
                out[name] = None
        return out
