"""One-line error messages: ``field: what is allowed``, from (possibly nested) parser errors."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
import typing

ALLOWED = re.compile(r"Expected a typing\.Literal\[(?P<allowed>[^\]]*)\]\. Got value: (?P<got>.*)")
KEY = re.compile(r'Parser key "(?P<key>[^"]+)"')
CLASS_PATH = re.compile(r"class_path '(?P<cls>[^']+)'")
WRONG_TYPE = re.compile(r"Expected a <class '(?!NoneType)(?P<type>\w+)'>\. Got value: (?P<got>.*)")
UNRECOGNIZED = re.compile(r"unrecognized arguments: --(?P<arg>[^=\s]+)|Option '(?P<option>[^']+)' is not accepted")


def class_at(class_path: str) -> type | None:
    """The class at ``class_path`` (``pkg.module.Class``), ``None`` if it cannot be imported."""
    module, _, name = class_path.rpartition(".")
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError, ValueError):
        return None
    return found if isinstance(found, type) else None


def init_parameters(cls: type) -> set[str] | None:
    """The ``__init__`` parameter names of ``cls``; ``None`` if its signature cannot be read."""
    try:
        return set(inspect.signature(cls.__init__).parameters)
    except (TypeError, ValueError):
        return None


def arch_fields(cls: type) -> set[str]:
    """The fields of the architecture config ``cls`` takes as ``arch`` (a dataclass), else none."""
    try:
        arch = typing.get_type_hints(cls.__init__).get("arch")
    except (NameError, TypeError):
        return set()
    return {f.name for f in dataclasses.fields(arch)} if dataclasses.is_dataclass(arch) else set()


INIT_ARGS = re.compile(r"(?<=[\w\]])\.init_args\.")


def short_key(key: str) -> str:
    """A config key as users write it: ``model.init_args.arch.d_model`` -> ``model.arch.d_model``.

    Every command line accepts both spellings (jsonargparse resolves ``init_args``); messages, run labels
    and grid axes use this one, so the spelling is normalised here and nowhere else.
    """
    return INIT_ARGS.sub(".", key)


def one_line(message: str) -> str:
    """Condense a (possibly nested, multi-line) parser error into ``field: problem`` (keys as :func:`short_key`)."""
    return short_key(_condense(message))


def _condense(message: str) -> str:
    keys = [k for k in KEY.findall(message)]
    field = ".".join(dict.fromkeys(keys))
    if m := ALLOWED.search(message):
        allowed = ", ".join(a.strip(" '\"") for a in m["allowed"].split(","))
        return f"{field}: {m['got'].strip()!r} is not allowed; choose one of {allowed}"
    owner = CLASS_PATH.search(message)
    if m := UNRECOGNIZED.search(message):
        arg = m["arg"] or m["option"]
        if not field:
            return f"{arg}: not an option (`--print_config` lists the options)"
        cls = class_at(owner["cls"]) if owner else None
        params = init_parameters(cls) if cls else None
        first = arg.split(".")[0]
        named = params is not None and first not in params  # else a deeper part is the unknown one
        line = (
            f"{field}.init_args.{arg}: not an option"
            + (f" of {owner['cls']}" if named else "")
            + " (`--print_config` lists the options)"
        )
        if named and first in arch_fields(cls):  # an architecture field given to the model itself
            line += f"; the architecture's options are under {field}.init_args.arch: --{field}.init_args.arch.{arg}"
        return line
    if (m := WRONG_TYPE.search(message)) and keys:
        nested = ".".join(keys[1:])
        where = f"{keys[0]}.init_args.{nested}" if owner and nested else field
        return f"{where}: expected {m['type']}, got {m['got'].strip()!r}"
    errors = [
        ln.strip()[2:]
        for ln in message.splitlines()
        if ln.strip().startswith("- ") and "NoneType" not in ln and "Problem with given class_path" not in ln
    ]
    if errors:
        return errors[0] if not field or errors[0].startswith(field.split(".")[0]) else f"{field}: {errors[0]}"
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    detail = next((ln for ln in lines[1:] if "Expected" in ln or "Got value" in ln), "")
    return " ".join(filter(None, [lines[0] if lines else message, detail]))
