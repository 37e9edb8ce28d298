"""The choice document in words: the grid's table with each value's flagged seeds, the value chosen or leading."""

from __future__ import annotations

from normbench.boards.build import build
from normbench.judge.choice import build_choice
from normbench.judge.choice_text import render_choice
from tests.judge.test_choice import METRICS, SPEC, grid_records


def test_collapsed_seeds_are_shown_beside_their_value() -> None:
    board = build("lm", "dyt-alpha", grid_records(), {"metrics": METRICS, "choice": SPEC})
    variants = board.to_json()["variants"]
    entry = next(v for v in variants if v["name"] == "pre/dyt,alpha0=0.5")
    entry["collapsed"] = ["0", "1"]
    choice = build_choice(SPEC, variants, METRICS)
    assert choice["groups"][0]["rows"][0]["collapsed"] == ["0", "1"]
    assert "| 0.5 | 2 | 6.440 ± 0.000 | 6.540 ± 0.000 | seeds 0, 1 collapsed or at chance |" in "\n".join(
        render_choice(choice)
    )


def test_an_unfinished_grid_chooses_nothing_yet_and_one_seed_shows_no_spread() -> None:
    """A grid board built while runs are missing marks the value leading so far, not a choice; a value measured on
    one seed shows its mean alone (a std of one seed is not a spread)."""
    records = [r for r in grid_records() if not (r["variant"].endswith("alpha0=10.0") and r["seed"] == 1)]
    records = [r for r in records if "alpha0=5.0" not in r["variant"]]  # 10.0 leads, on one seed
    board = build("lm", "dyt-alpha", records, {"metrics": METRICS, "choice": SPEC})
    unfinished = "\n".join(render_choice(board.choice, complete=False))
    assert "| `pre/dyt` | 10.0 | 1 | 6.050 | 6.150 | – | **leading** |" in unfinished
    assert "nothing is chosen yet" in unfinished and "**chosen**" not in unfinished
    assert "`alpha0` = 10.0 leads so far" in unfinished and "It is the largest value trained so far." in unfinished
    finished = "\n".join(render_choice(board.choice))
    assert "| 10.0 | 1 | 6.050 | 6.150 | – | **chosen** |" in finished and "nothing is chosen" not in finished
