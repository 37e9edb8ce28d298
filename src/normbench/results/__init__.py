"""Leaderboards as tables: load ``results/<key>/leaderboard.json`` into pandas, compare two variants, cite a board.

A leaderboard (the contract in the design notes) lists variants, each with its seeds, each seed's
run status, and per metric the per-seed values. :func:`load` turns one leaderboard into a long table,
one row per (variant, seed) (:mod:`~normbench.results.tables`); :func:`compare` puts two variants side by side per
metric with the difference of their means, its 95% Welch interval and p-value (the statistics the claims' verdicts
use, :func:`normbench.judge.stats.difference_interval`, over the same per-seed samples), and
:func:`format_comparison` renders that for a terminal (:mod:`~normbench.results.compare`); :func:`citation` is a
board's BibTeX entry at the commit that holds it (:mod:`~normbench.results.cite`).

    >>> from normbench import results
    >>> df = results.load("majority")                    # results/majority/leaderboard.json
    >>> df = results.load("majority", name="modern")     # results/majority/modern/leaderboard.json
    >>> df = results.load("cards/dyt/majority/lr")       # a report card's board: results/cards/dyt/majority/lr/
    >>> cmp = results.compare("majority", "pre/both", "pre/scale")
    >>> print(results.format_comparison(cmp, "pre/both", "pre/scale"))
"""

from normbench.results.cite import citation, containing_commit
from normbench.results.compare import COMPARE_COLUMNS, compare, format_comparison
from normbench.results.tables import FILENAME, ID_COLUMNS, leaderboards, load, resolve

__all__ = [
    "COMPARE_COLUMNS", "FILENAME", "ID_COLUMNS", "citation", "compare", "containing_commit", "format_comparison",
    "leaderboards", "load", "resolve",
]  # fmt: skip
