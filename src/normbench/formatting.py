"""The one number formatter of the boards, cards, pages and terminal tables.

``number(x)`` is ``x`` to ``digits`` decimals (``significant``: to ``digits`` significant digits), in whole units from
``|x| >= whole_from``, and ``missing`` where there is no value (``None``).
"""

from __future__ import annotations

import math


def number(
    x: float | None, digits: int = 3, *, significant: bool = False, whole_from: float | None = None, missing: str = "–"
) -> str:
    """``x`` as text: ``f"{x:.{digits}f}"`` (``significant``: ``f"{x:.{digits}g}"``), ``f"{x:.0f}"`` where
    ``whole_from`` is given and ``|x| >= whole_from``; ``missing`` for ``None``."""
    if x is None:
        return missing
    if whole_from is not None and math.isfinite(x) and abs(x) >= whole_from:
        return f"{x:.0f}"
    return f"{x:.{digits}g}" if significant else f"{x:.{digits}f}"


def percent(x: float | None, digits: int = 1) -> str:
    """A fraction as a percentage: ``number(100 * x, digits)``."""
    return number(None if x is None else 100 * x, digits)


def significant(x: float | None, digits: int = 3, missing: str = "–") -> str:
    """``x`` to ``digits`` significant digits: ``number(x, digits, significant=True)``."""
    return number(x, digits, significant=True, missing=missing)
