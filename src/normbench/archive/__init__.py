"""The archive's typed documents: run records, boards and claims (below both training and the board pipeline).

Each is a frozen dataclass with ``from_json``/``to_json`` (nothing lost on a round trip) and a
``SCHEMA_VERSION``; :func:`load_record` and :func:`load_board` are the one reader of each file.
"""

from normbench.archive._json import SchemaError
from normbench.archive.board import Board, BoardError, Metric, VariantEntry, dumps_board, load_board, parse_board
from normbench.archive.claim import OWNERS, VERDICTS, ClaimSpec, JudgedClaim
from normbench.archive.record import FINISHED, RESUMABLE, STATUSES, RunRecord, load_record, wall_time_share_s

__all__ = [
    "FINISHED",
    "OWNERS",
    "RESUMABLE",
    "STATUSES",
    "VERDICTS",
    "Board",
    "BoardError",
    "ClaimSpec",
    "JudgedClaim",
    "Metric",
    "RunRecord",
    "SchemaError",
    "VariantEntry",
    "dumps_board",
    "load_board",
    "load_record",
    "wall_time_share_s",
    "parse_board",
]
