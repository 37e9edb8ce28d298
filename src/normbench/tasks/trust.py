"""What a run record, a checkpoint, a board or a bake queue's config may make normbench import: registered code only.

Run records and checkpoints travel between machines, and a bake queue (``queues/bake.yaml``) and the card configs
it names are files under ``queues/`` that anyone may send (a pull request), so all of them are untrusted input.
Reading one never imports a module it names: its ``model``/``data`` class is a registered task's module or data
module, or a class of that kind this process has already imported (from the config it was given, say), and its
norms are registered components or import paths already used here. A queue's config (:func:`check_config_code`,
checked before anything is planned) may also name the classes the registered tasks' shipped configs name (their
checkpoint callback) and the project's own example norms (:func:`project_example`: ``examples.<module>:<Class>``,
a file of the ``examples/`` folder of the checkout normbench runs from, which is code, reviewed as code). Anything
else is a one-line ``ValueError`` naming the field, unless the user trusts the files (:func:`trust_record_code`:
the ``--trust_record_code true`` option of every command, or ``NORMBENCH_TRUST_RECORD_CODE=1``: one switch for
records, checkpoints and queue configs alike).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from importlib.machinery import PathFinder
from pathlib import Path
from typing import Any

import lightning as L

from normbench.errors import short_key
from normbench.io import Config, load_yaml, read_yaml
from normbench.nn.norms import component_names, import_paths_refused
from normbench.tasks.registry import get_task, task_names

TRUST_ENV = "NORMBENCH_TRUST_RECORD_CODE"
TRUST_OPTION = "--trust_record_code"
HOW_TO_TRUST = f"a run record may not import code; pass {TRUST_OPTION} true only if you trust the record's source"
QUEUE_TRUST = f"a queue's config may not import code; pass {TRUST_OPTION} true only if you trust the queue's source"
KINDS: dict[str, type] = {"model": L.LightningModule, "data": L.LightningDataModule}
EXAMPLES = "examples"  # the project's own example norms: examples/<module>.py of its checkout


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


def record_class(class_path: object, section: str) -> type[Any]:
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
        cls = imported_class(class_path, base)
        if cls is None:
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


# a bake queue's configs


def check_config_code(config: Config, where: str) -> None:
    """One-line ``ValueError`` (``<where>: <field>: ... is not allowed ...``) for the first class or norm a queue's
    ``config`` names that planning it would import and that is not allowed (:func:`code_allowed`), unless the user
    trusts the queue (:func:`record_code_trusted`). Nothing is imported."""
    if record_code_trusted():
        return
    shipped = shipped_class_paths()
    for field, kind, value in config_code(config):
        if not code_allowed(value, kind, shipped):
            raise ValueError(
                f"{where}: {field}: {value!r} is not allowed: {allowed_code(kind, shipped)}; {QUEUE_TRUST}"
            )


def code_allowed(value: str, kind: str, shipped: set[str]) -> bool:
    """Whether a config may name ``value`` as ``kind`` (``model``/``data``: its class, ``class``: another class,
    ``norm``: a norm component) without importing anything it does not already hold."""
    if kind == "norm":
        return ":" not in value or value in component_names() or project_example(value.partition(":")[0])
    if kind in KINDS and (value in registered_classes() or imported_class(value, KINDS[kind]) is not None):
        return True
    return value in shipped


def imported_class(class_path: str, base: type) -> type | None:
    """The subclass of ``base`` at ``class_path`` (``package.module.Class``) when this process has already imported
    its module, else ``None`` (nothing is imported)."""
    module_name, _, name = class_path.rpartition(".")
    module = sys.modules.get(module_name)
    cls = getattr(module, name, None) if module is not None else None
    return cls if isinstance(cls, type) and issubclass(cls, base) else None


def allowed_code(kind: str, shipped: set[str]) -> str:
    """What a config may name as ``kind``, in words."""
    if kind == "norm":
        names = ", ".join(n for n in component_names() if ":" not in n)
        return f"choose a registered norm ({names}) or one of the project's own {EXAMPLES}.<module>:<Class>"
    if kind in KINDS:
        classes = sorted(p for p, cls in registered_classes().items() if issubclass(cls, KINDS[kind]))
        return f"choose a registered task's {kind} class ({', '.join(classes)})"
    return f"choose a class the registered tasks' configs name ({', '.join(sorted(shipped)) or 'none'})"


def shipped_class_paths() -> set[str]:
    """Every ``class_path`` the registered tasks' shipped configs name (their model, data and callbacks)."""
    out: set[str] = set()
    for name in task_names():
        doc = read_yaml(get_task(name).config_path)
        out |= {value for _, kind, value in config_code(doc) if kind != "norm"}
    return out


def config_code(doc: Any, at: tuple[str, ...] = ()) -> Iterator[tuple[str, str, str]]:
    """Every ``(field, kind, value)`` of a config that names code to import: a ``class_path`` (kind ``model``,
    ``data`` or ``class``), a ``model``/``data`` section given as a class path, and a norm's ``component`` (kind
    ``norm``), found in nested mappings, dotted keys (a variant's ``model.arch.attn_norm.component``), grid values
    and mappings written inline as YAML text (``'{component: pkg.mod:Cls}'``)."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            keys = [k.strip() for k in str(key).split(",")]  # a grid axis of several keys joined by commas
            together = len(keys) > 1 and isinstance(value, list) and all(isinstance(v, list) for v in value)
            for j, part in enumerate(keys):
                values = [v[j] for v in value if len(v) > j] if together else value  # each key's own values
                yield from keyed_code((*at, *part.split(".")), values)
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from config_code(value, (*at, str(i)))
    elif isinstance(doc, str) and doc.lstrip().startswith("{"):
        try:
            inline = load_yaml(doc)
        except Exception:  # noqa: BLE001 - not YAML: a plain string, which names no code
            return
        yield from config_code(inline, at)


def keyed_code(parts: tuple[str, ...], value: Any) -> Iterator[tuple[str, str, str]]:
    """What the value of the config key ``parts`` names (:func:`config_code`)."""
    kind = code_kind(parts, value)
    if kind is None:
        yield from config_code(value, parts)
    else:
        yield from ((short_key(".".join(parts)), kind, s) for s in strings(value))


def code_kind(parts: tuple[str, ...], value: Any) -> str | None:
    """What the config key ``parts`` names when it names code (see :func:`config_code`), else ``None``."""
    last, parent = parts[-1], parts[-2] if len(parts) > 1 else ""
    if last == "class_path":
        return parent if parent in KINDS else "class"
    if last == "component":
        return "norm"
    if last in KINDS and isinstance(value, str) and "." in value and not value.lstrip().startswith("{"):
        return last  # ``data: pkg.module.Class``: a class path as the section's value
    return None


def strings(value: Any) -> Iterator[str]:
    """Every string in ``value`` (a string, or lists of them: a grid axis' values)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def project_root() -> Path | None:
    """The checkout normbench runs from (``pyproject.toml`` beside ``src/normbench``); ``None`` when installed."""
    root = Path(__file__).resolve().parents[3]
    return root if (root / "pyproject.toml").is_file() and (root / "src" / "normbench").is_dir() else None


def project_example(module: str) -> bool:
    """Whether ``module`` is one of the project's own examples: ``examples.<name>``, the file
    ``examples/<name>.py`` of the checkout normbench runs from (no link), and the one an import would load here
    (found without running any code). A file under ``results/`` can name one; it cannot make another module one."""
    package, dot, name = module.partition(".")
    root = project_root()
    if package != EXAMPLES or not dot or not name.isidentifier() or root is None:
        return False
    folder = root / EXAMPLES
    source = folder / f"{name}.py"
    if folder.is_symlink() or source.is_symlink() or not source.is_file():
        return False
    return import_origin(package, name) == source.resolve()


def import_origin(package: str, name: str) -> Path | None:
    """The file ``import package.name`` would load, found as the import system finds it but running nothing; ``None``
    when it is not found, or when the package is a regular one whose ``__init__`` would run first."""
    loaded = sys.modules.get(package)
    if loaded is not None:
        locations = list(getattr(loaded, "__path__", None) or [])
    else:
        spec = PathFinder.find_spec(package, sys.path)
        if spec is None or spec.submodule_search_locations is None or spec.origin not in (None, "namespace"):
            return None
        locations = list(spec.submodule_search_locations)
    found = PathFinder.find_spec(name, locations) if locations else None
    return Path(found.origin).resolve() if found is not None and found.origin else None
