"""Every ``normbench.analysis`` name the README uses can be imported as written."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
NAME = re.compile(r"normbench\.analysis((?:\.\w+)+)(\()?")


def readme_names() -> list[tuple[str, bool]]:
    """(dotted path after ``normbench.analysis.``, written as a call) for each mention in the README."""
    found = {(m.group(1)[1:], bool(m.group(2))) for m in NAME.finditer(README.read_text(encoding="utf-8"))}
    return sorted(found)


def test_the_readme_names_some() -> None:
    assert ("unselectable_mask", True) in readme_names()


@pytest.mark.parametrize(("dotted", "called"), readme_names())
def test_every_readme_name_imports(dotted: str, called: bool) -> None:
    first, *rest = dotted.split(".")
    namespace = {}
    exec(f"from normbench.analysis import {first}", namespace)  # the README's spelling, as a user types it
    obj = namespace[first]
    for part in rest:
        obj = getattr(obj, part) if hasattr(obj, part) else importlib.import_module(f"{obj.__name__}.{part}")
    if called:
        assert callable(obj), f"normbench.analysis.{dotted} is written as a call but is {obj!r}"


def test_all_lists_only_importable_names() -> None:
    import normbench.analysis as analysis

    for name in analysis.__all__:
        assert getattr(analysis, name) is not None
