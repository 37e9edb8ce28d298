"""A claim as its claims file writes it (:class:`ClaimEntry`, :class:`normbench.archive.ClaimSpec`'s keys) and as a
board stores it judged (:class:`JudgedEntry`, :class:`normbench.archive.JudgedClaim`'s keys), with the parts of a
judged claim. The documents are :mod:`normbench.archive.claim`'s (the archive fixes their shape); the judge names
them from here, and :func:`judged_entry` reads a board's judged claim as one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from normbench.archive.claim import ChanceAt, ClaimEntry, ClaimHead, JudgedEntry, Reasons, Rule
from normbench.archive.documents.verdicts import (
    AgainstNull,
    Borderline,
    Censored,
    CensoredSeed,
    FailureCount,
    NullAtKeys,
    NullDraws,
    PaperChance,
    Power,
    ProtocolCheck,
    Provisional,
)

__all__ = [
    "Rule",
    "ChanceAt",
    "Reasons",
    "ClaimHead",
    "ClaimEntry",
    "ProtocolCheck",
    "Power",
    "Borderline",
    "Provisional",
    "NullAtKeys",
    "PaperChance",
    "NullDraws",
    "AgainstNull",
    "CensoredSeed",
    "Censored",
    "FailureCount",
    "JudgedEntry",
    "judged_entry",
]


def judged_entry(claim: Mapping[str, object]) -> JudgedEntry:
    """A judged claim as the boards pass it to be described: a :class:`JudgedEntry`, or the JSON object of a
    :class:`normbench.archive.JudgedClaim` (its ``to_json``: the same keys)."""
    return cast(JudgedEntry, claim)
