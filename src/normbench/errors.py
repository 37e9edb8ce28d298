"""One-line error messages: ``field: what is allowed``, from (possibly nested) parser errors."""

from __future__ import annotations

import importlib
import inspect
import re

ALLOWED = re.compile(r"Expected a typing\.Literal\[(?P<allowed>[^\]]*)\]\. Got value: (?P<got>.*)")
KEY = re.compile(r'Parser key "(?P<key>[^"]+)"')
CLASS_PATH = re.compile(r"class_path '(?P<cls>[^']+)'")
WRONG_TYPE = re.compile(r"Expected a <class '(?!NoneType)(?P<type>\w+)'>\. Got value: (?P<got>.*)")
UNRECOGNIZED = re.compile(r"unrecognized arguments: --(?P<arg>[^=\s]+)|Option '(?P<option>[^']+)' is not accepted")


def init_parameters(class_path: str) -> set[str] | None:
    """The ``__init__`` parameter names of the class at ``class_path`` (``pkg.module.Class``); ``None`` if unknown."""
    module, _, name = class_path.rpartition(".")
    try:
        return set(inspect.signature(getattr(importlib.import_module(module), name).__init__).parameters)
    except (ImportError, AttributeError, TypeError, ValueError):
        return None


def one_line(message: str) -> str:
    """Condense a (possibly nested, multi-line) parser error into ``field: problem``."""
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
        params = init_parameters(owner["cls"]) if owner else None
        named = params is not None and arg.split(".")[0] not in params  # else a deeper part is the unknown one
        return (f"{field}.init_args.{arg}: not an option" + (f" of {owner['cls']}" if named else "")
                + " (`--print_config` lists the options)")
    if (m := WRONG_TYPE.search(message)) and keys:
        nested = ".".join(keys[1:])
        where = f"{keys[0]}.init_args.{nested}" if owner and nested else field
        return f"{where}: expected {m['type']}, got {m['got'].strip()!r}"
    errors = [ln.strip()[2:] for ln in message.splitlines()
              if ln.strip().startswith("- ") and "NoneType" not in ln and "Problem with given class_path" not in ln]
    if errors:
        return errors[0] if not field or errors[0].startswith(field.split(".")[0]) else f"{field}: {errors[0]}"
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    detail = next((ln for ln in lines[1:] if "Expected" in ln or "Got value" in ln), "")
    return " ".join(filter(None, [lines[0] if lines else message, detail]))
