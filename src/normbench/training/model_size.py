"""The size of the network a run config builds: its trainable parameters, counted on the meta device.

n = sum over the module's parameters p with ``requires_grad`` of numel(p). The network is built from the config's
``model`` section alone (no data module, no checkpoint, no memory: tensors on ``torch.device("meta")``); a config from
a run record may name registered classes and norms only (:mod:`normbench.tasks.trust`).
"""

from __future__ import annotations

import typing

from normbench.io import Config
from normbench.tasks.trust import record_class, untrusted_norms
from normbench.training.run.rundir import build_dataclass


def parameter_count(config: Config) -> int:
    """The trainable parameters of the module ``config['model']`` builds; a one-line ``ValueError`` when it does not
    build (or names a class or norm that is not registered, unless records are trusted)."""
    import torch

    model = config.get("model") if isinstance(config, dict) else None
    if not isinstance(model, dict) or not isinstance(model.get("class_path"), str):
        raise ValueError("config: model.class_path is missing")
    cls = record_class(model["class_path"], "model")
    init = dict(model.get("init_args") or {})
    arch_type = typing.get_type_hints(cls.__init__).get("arch")
    with untrusted_norms():
        kwargs = {"arch": build_dataclass(arch_type, init.get("arch") or {}, "model.arch")} if arch_type else {}
        try:
            with torch.device("meta"):
                module = cls(**kwargs)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"config: model does not build ({exc})") from None
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
