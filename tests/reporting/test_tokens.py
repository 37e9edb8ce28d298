"""Bold rendering of unselectable tokens (Tables 3-4) and the per-sentence counts."""

from __future__ import annotations

from pathlib import Path

from normbench.reporting.tokens import finish, lm_seeds, render_bold, seed_table, summarize, word_spans
from normbench.sweep.run import planner


def test_word_spans() -> None:
    assert word_spans(" it 's  fun ") == [(1, 3), (4, 6), (8, 11)]


def test_a_word_is_bold_when_any_piece_is_marked() -> None:
    text = "a roaring success , really"
    # WordPiece-like pieces: "roar" + "##ing" share the word "roaring"
    offsets = [(0, 0), (0, 1), (2, 6), (6, 9), (10, 17), (18, 19), (20, 26), (0, 0)]
    marked = [False, False, False, True, True, False, False, False]
    assert render_bold(text, offsets, marked) == "a **roaring** **success** , really"


def test_empty_spans_are_ignored() -> None:
    assert render_bold("fun", [(0, 0), (0, 3)], [True, False]) == "fun"


def test_summarize_counts_sentence_tokens_only() -> None:
    results = [
        {"per_layer": [[True, True, False], [False, False, True]], "content": [False, True, True]},
        {"per_layer": [[False, False], [False, False]], "content": [True, True]},
    ]
    s = summarize(results)
    assert s["tokens"] == 4 and s["per_layer"] == [1, 1] and s["any_layer"] == 2
    assert s["fraction_any_layer"] == 0.5 and s["sentences_with_unselectable"] == 1


def summary(bad: int, tokens: int = 100) -> dict:
    return {
        "sentences": 10,
        "tokens": tokens,
        "per_layer": [bad, 0],
        "any_layer": bad,
        "fraction_any_layer": bad / tokens,
        "sentences_with_unselectable": min(bad, 10),
    }


def test_table3_is_judged_over_every_lm_seed(tmp_path: Path) -> None:
    summaries = {
        "pre/project": {0: summary(3), 1: summary(4), 2: summary(3)},
        "pre/both": {0: summary(0), 1: summary(0), 2: summary(0)},
    }
    doc = finish({"sections": {}}, [], summaries, tmp_path)
    (claim,) = doc["claims"]
    assert claim["per_seed"] == {"without_scaling": [0.03, 0.04, 0.03], "with_scaling": [0.0, 0.0, 0.0]}
    assert claim["verdict"] == "reproduced"
    md = (tmp_path / "unselectable_tokens.md").read_text()
    assert "0.03 / 0.04 / 0.03" in md and "| normbench |" not in md and "| paper |" in md


def test_one_lm_seed_is_inconclusive(tmp_path: Path) -> None:
    doc = finish({"sections": {}}, [], {"pre/project": {0: summary(3)}, "pre/both": {0: summary(0)}}, tmp_path)
    assert doc["claims"][0]["verdict"] == "inconclusive"


def test_table3_lists_each_seed_and_marks_missing_ones() -> None:
    lines = seed_table("Table 3 over every seed", "lm", {"pre/project": {0: summary(3), 2: summary(1)}}, [0, 1, 2])
    assert "| `pre/project` | 3 / 100 (3.00%) | – | 1 / 100 (1.00%) |" in lines


def test_table3_reads_every_seed_of_the_lm_bench(tmp_path: Path) -> None:
    assert lm_seeds({"preset": "quick", "variant": "pre/project"}, planner(str(tmp_path))) == [0, 1, 2]
    assert lm_seeds({"preset": "quick", "variant": "pre/project", "seeds": [4]}, planner(str(tmp_path))) == [4]
