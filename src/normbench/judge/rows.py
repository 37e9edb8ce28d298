"""A leaderboard's rows as the judge reads and completes them, keyed as the board file keys them: a variant's row
(:class:`VariantRow`, the JSON of :class:`normbench.archive.VariantEntry`), one of its metrics aggregated over seeds
(:class:`MetricRow`, the JSON of :class:`normbench.archive.Metric`: :func:`normbench.judge.stats.aggregate` builds it)
and the random-key null beside an unselectable fraction (:class:`NullBlock`:
:func:`normbench.judge.chance.board.with_chance` puts it there).

The documents are :mod:`normbench.archive.documents`' (the archive fixes their shape); the judge names them from here. A
row is built key by key and a board written before a key existed lacks it, so every key of a row is optional. The
board pipeline hands its rows to the judge as JSON objects (:func:`normbench.boards.variants.variant_entry`'s, or
a board's variants read back): :func:`variant_rows` and :func:`rows_by_name` take them as rows of this shape.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from normbench.archive.documents.rows import MetricRow as MetricRow
from normbench.archive.documents.rows import NullBlock as NullBlock
from normbench.archive.documents.rows import RowProvenance as RowProvenance
from normbench.archive.documents.rows import VariantRow


def variant_rows(rows: Sequence[Mapping[str, object]]) -> Sequence[VariantRow]:
    """A board's variant rows as the board pipeline passes them (JSON objects of :class:`VariantRow`'s shape, the
    same objects: a row the judge completes, e.g. with its nulls, is the caller's)."""
    return cast("Sequence[VariantRow]", rows)


def variant_row(row: Mapping[str, object]) -> VariantRow:
    """One of :func:`variant_rows`."""
    return cast(VariantRow, row)


def rows_by_name(rows: Mapping[str, Mapping[str, object]]) -> Mapping[str, VariantRow]:
    """:func:`variant_rows` of rows by variant name."""
    return cast("Mapping[str, VariantRow]", rows)
