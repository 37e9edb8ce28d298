"""What the new norm learned: each of its own trained parameters per slot, its final value over the card's seeds, read
from the archived records (DyT's alpha on its published majority card)."""

from __future__ import annotations

import statistics
from pathlib import Path

from normbench.archive import load_board
from normbench.archive.store import Archive
from normbench.cards.models import learned_values
from normbench.cards.render import learned_lines

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_a_card_reads_the_final_learned_value_of_each_slot_over_its_seeds_from_the_archive() -> None:
    board = load_board(RESULTS / "cards" / "dyt" / "majority")
    archive = Archive(RESULTS)
    learned = learned_values(board, "pre/dyt", archive)
    assert [(v["slot"], v["parameter"]) for v in learned] == [("L1.attn_norm", "alpha"), ("L1.ffn_norm", "alpha")]
    row = board.by_name["pre/dyt"]
    assert learned[0]["seeds"] == list(row.seeds)
    finals = [
        archive.canonical("majority", row.config_hash, s).record()["series"]["geometry/L1.attn_norm/alpha"][-1][1]  # type: ignore[union-attr]
        for s in row.seeds
    ]
    assert abs(learned[0]["mean"] - statistics.fmean(finals)) <= 1e-5 * abs(learned[0]["mean"])
    assert abs(learned[0]["std"] - statistics.stdev(finals)) <= 1e-4 * learned[0]["std"]  # type: ignore[operator]
    assert learned_values(board, "pre/both", archive) == []  # LayerNorm has no parameter of its own
    table = learned_lines(learned)
    assert table[2] == "| slot | parameter | final value | seeds |" and table[4].startswith(
        "| `L1.attn_norm` | `alpha` | "
    )
    assert "no parameter of its own is recorded" in learned_lines([])[0]
