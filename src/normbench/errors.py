"""One-line error messages: ``field: what is allowed``, from (possibly nested) parser errors."""

from __future__ import annotations

import re

ALLOWED = re.compile(r"Expected a typing\.Literal\[(?P<allowed>[^\]]*)\]\. Got value: (?P<got>.*)")
KEY = re.compile(r'Parser key "(?P<key>[^"]+)"')
CLASS_PATH = re.compile(r"class_path '(?P<cls>[^']+)'")
UNRECOGNIZED = re.compile(r"unrecognized arguments: --(?P<arg>[^=\s]+)|Option '(?P<option>[^']+)' is not accepted")


def one_line(message: str) -> str:
    """Condense a (possibly nested, multi-line) parser error into ``field: problem``."""
    keys = [k for k in KEY.findall(message)]
    field = ".".join(dict.fromkeys(keys))
    if m := ALLOWED.search(message):
        allowed = ", ".join(a.strip(" '\"") for a in m["allowed"].split(","))
        return f"{field}: {m['got'].strip()!r} is not allowed; choose one of {allowed}"
    if (m := UNRECOGNIZED.search(message)) and field:
        owner = CLASS_PATH.search(message)
        return (f"{field}.init_args.{m['arg'] or m['option']}: not an option"
                + (f" of {owner['cls']}" if owner else "") + " (`--print_config` lists the options)")
    errors = [ln.strip()[2:] for ln in message.splitlines()
              if ln.strip().startswith("- ") and "NoneType" not in ln and "Problem with given class_path" not in ln]
    if errors:
        return errors[0] if not field or errors[0].startswith(field.split(".")[0]) else f"{field}: {errors[0]}"
    lines = [ln.strip() for ln in message.splitlines() if ln.strip()]
    detail = next((ln for ln in lines[1:] if "Expected" in ln or "Got value" in ln), "")
    return " ".join(filter(None, [lines[0] if lines else message, detail]))
