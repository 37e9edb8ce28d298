"""A board's claims in Markdown: a summary narrow enough for a documentation column, then every claim's details."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from normbench.archive import load_board
from normbench.render.claims_view import SHARED, anchor, claims_table, verdict_label

RESULTS = Path(__file__).resolve().parents[2] / "results"
BOARDS = [
    p
    for p in sorted(RESULTS.rglob("leaderboard.json"))
    if "archive" not in p.parts and p.parent.name != "unselectable" and load_board(p).claims
]


@pytest.mark.parametrize("path", BOARDS, ids=lambda p: str(p.parent.relative_to(RESULTS)))
def test_every_claim_has_a_summary_row_and_a_details_block(path: Path) -> None:
    board = load_board(path)
    rate = SHARED if board.tuned else ""  # a board judged at two learning rates: these are the shared rate's
    lines = claims_table(board)
    header = lines.index("| claim | whose | verdict | key numbers | chance |")
    rows = [line for line in lines[header + 2 :] if line.startswith("| ")]
    assert len(rows) == len(board.claims)
    for claim, row in zip(board.claims, rows, strict=True):
        assert len(re.split(r"(?<!\\)\|", row)) == 7, row  # five cells: nothing squeezed beside them
        assert f"(#{anchor(claim, rate)})" in row and f"**{verdict_label(claim)}**" in row
    text = "\n".join(lines)
    assert text.count('<details markdown="1"') == len(board.claims) == text.count("</details>")
    for claim in board.claims:
        block = text[text.index(f'id="{anchor(claim, rate)}"') :].split("</details>")[0]
        measured = "(failed runs)" if claim.failures else "(per seed)"  # a stability claim counts runs, not seeds
        assert f"- **rule**: {claim.rule}" in block and f"- **measured {measured}**:" in block
        at = f" at the {rate} rate" if rate else ""
        assert f"<summary><code>{claim.id}</code>{at}: {verdict_label(claim)}</summary>" in block
