"""What a run record, a checkpoint or a board may make normbench import: registered code only.

Run records and checkpoints travel between machines, so they are untrusted input. Reading one never
imports a module it names: its ``model``/``data`` class is a registered task's module or data module,
or a class of that kind this process has already imported (from the config it was given, say), and its
norms are registered components or import paths already used here. Anything else is a one-line
``ValueError`` naming the field, unless the user trusts the records (:func:`trust_record_code`: the
``--trust_record_code true`` option of every command, or ``NORMBENCH_TRUST_RECORD_CODE=1``).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

import lightning as L

from normbench.nn.norms import import_paths_refused
from normbench.tasks.registry import get_task, task_names

TRUST_ENV = "NORMBENCH_TRUST_RECORD_CODE"
TRUST_OPTION = "--trust_record_code"
HOW_TO_TRUST = f"a run record may not import code; pass {TRUST_OPTION} true only if you trust the record's source"
KINDS: dict[str, type] = {"model": L.LightningModule, "data": L.LightningDataModule}


def trust_record_code(enabled: bool = True) -> None:
    """Let the records and checkpoints this process (and its subprocesses) reads import the classes they name."""
    if enabled:
        os.environ[TRUST_ENV] = "1"
    else:
        os.environ.pop(TRUST_ENV, None)


def record_code_trusted() -> bool:
    """Whether records may import what they name (:func:`trust_record_code`)."""
    return os.environ.get(TRUST_ENV) == "1"


def qualified_name(cls: type) -> str:
    """``package.module.Class``: how a config's ``class_path`` names ``cls``."""
    return f"{cls.__module__}.{cls.__qualname__}"


def registered_classes() -> dict[str, type]:
    """The model and data module classes of every registered task, by class path."""
    out: dict[str, type] = {}
    for name in task_names():
        task = get_task(name)
        out[qualified_name(task.module)] = task.module
        out[qualified_name(task.datamodule)] = task.datamodule
    return out


def record_class(class_path: object, section: str) -> type:
    """The class a record's ``<section>.class_path`` names (``section``: ``model`` or ``data``).

    Allowed without importing anything: a registered task's class, or a subclass of LightningModule
    (model) / LightningDataModule (data) in a module this process has already imported. Anything
    else is a one-line ``ValueError`` naming the field, unless records are trusted (then it is imported).
    """
    field = f"{section}.class_path"
    if not isinstance(class_path, str) or "." not in class_path:
        raise ValueError(f"{field}: {class_path!r} is not a class path package.module.Class")
    known = registered_classes().get(class_path)
    if known is not None:
        return known
    module_name, _, name = class_path.rpartition(".")
    base = KINDS[section]
    if record_code_trusted():
        try:
            cls = getattr(importlib.import_module(module_name), name)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"{field}: {class_path!r} cannot be imported ({type(exc).__name__}: {exc})") from None
    else:
        module = sys.modules.get(module_name)
        cls = getattr(module, name, None) if module is not None else None
        if not (isinstance(cls, type) and issubclass(cls, base)):
            raise ValueError(f"{field}: {class_path!r} is not a registered task's {section} class; {HOW_TO_TRUST}")
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise ValueError(f"{field}: {class_path!r} is not a {base.__name__} class")
    return cls


@contextmanager
def untrusted_norms() -> Iterator[None]:
    """Inside, a norm named by an import path not used by this process yet is refused (unless records
    are trusted): wrap the reading of a record's architecture or a checkpoint's hyperparameters."""
    with nullcontext() if record_code_trusted() else import_paths_refused(HOW_TO_TRUST):
        yield
