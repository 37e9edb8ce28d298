"""Data checked before training: a missing or malformed data folder is one line, found before any run starts.

:func:`check_data` prepares a data module for the fit stage: its own ``check_data()`` where it offers
a cheaper check, else ``prepare_data()`` and ``setup("fit")`` (what Lightning does first in
``Trainer.fit``; the modules keep what they built, so the run that follows does not build it
again). Data modules raise one-line ``ValueError`` s naming the field; anything else they raise is
turned into one. :func:`check_data_configs` does it once per distinct ``data`` section of a sweep.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable
from typing import Any

from normbench.io import Config


def build_datamodule(section: Config) -> Any:
    """The data module of a resolved config's ``data`` section (``class_path`` + ``init_args``), not set up."""
    class_path = str(section.get("class_path") or "")
    module_name, _, cls_name = class_path.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), cls_name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(f"data.class_path: {class_path!r} cannot be imported ({type(exc).__name__}: {exc})") from None
    return cls(**(section.get("init_args") or {}))


def check_data(datamodule: Any) -> None:
    """Prepare ``datamodule`` for the fit stage (or run its own ``check_data()``); one-line ``ValueError`` if the
    data is missing or malformed."""
    try:
        check = getattr(datamodule, "check_data", None)
        if callable(check):
            check()
        else:
            datamodule.prepare_data()
            datamodule.setup("fit")
    except ValueError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever a data module raises while loading: one line naming it
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ValueError(
            f"data: {type(datamodule).__name__} could not load its data ({type(exc).__name__}: {first})"
        ) from None


def check_data_configs(sections: Iterable[Config]) -> int:
    """:func:`check_data` once for each distinct ``data`` section; returns how many were checked."""
    seen: set[str] = set()
    for section in sections:
        key = json.dumps(section, sort_keys=True, default=str)
        if key in seen:
            continue
        seen.add(key)
        check_data(build_datamodule(section))
    return len(seen)
