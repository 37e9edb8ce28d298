"""Bold rendering of unselectable tokens (Tables 3-4) and the per-sentence counts."""

from __future__ import annotations

from normbench.reporting.tokens import render_bold, summarize, word_spans


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
