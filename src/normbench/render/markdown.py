"""The Markdown primitives every generated page uses."""

from __future__ import annotations

from typing import Any

Lines = list[str]


def cell(text: Any) -> str:
    """Escape a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")
