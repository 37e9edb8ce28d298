"""Bold rendering of unselectable tokens (Tables 3-4) and the per-sentence counts; the report's claims judged over
every lm seed, and judged again from the counts a published report holds."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from normbench.publish.tokens import finish
from normbench.run_analyses.sentence_tokens import bold_words, per_sentence, render_words, summarize, word_spans
from tests.token_reports import summary


def render_bold(text: str, offsets: list[tuple[int, int]], marked: list[bool]) -> str:
    return render_words(text, bold_words(text, offsets, marked))


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


@dataclass
class Encoding:
    offsets: list[tuple[int, int]] = field(default_factory=list)


def test_summarize_counts_sentence_tokens_only() -> None:
    results = [
        {"per_layer": [[True, True, False], [False, False, True]], "content": [False, True, True]},
        {"per_layer": [[False, False], [False, False]], "content": [True, True]},
    ]
    encodings = [Encoding([(0, 0), (0, 2), (3, 5)]), Encoding([(0, 1), (2, 3)])]
    analysis = per_sentence(["ab cd", "e f"], encodings, results)
    assert analysis["bold_words"] == [[0, 1], []]  # the [CLS]-like first token is marked but not the sentence's
    s = summarize(analysis)
    assert s["tokens"] == 4 and s["per_layer"] == [1, 1] and s["any_layer"] == 2
    assert s["fraction_any_layer"] == 0.5 and s["sentences_with_unselectable"] == 1 and s["sentences"] == 2


def test_table3_is_judged_over_every_lm_seed(tmp_path: Path) -> None:
    summaries = {
        "pre/project": {0: summary(3), 1: summary(4), 2: summary(3)},
        "pre/both": {0: summary(0), 1: summary(0), 2: summary(0)},
    }
    doc = finish({"sections": {}}, [], summaries, tmp_path)
    (claim,) = doc["claims"]
    assert claim["per_seed"] == {"without_scaling": [0.03, 0.04, 0.03], "with_scaling": [0.0, 0.0, 0.0]}
    # positive and zero as the paper says, but no random-key null stands beside a token's any-layer fraction: an
    # existence claim is reproduced only above chance, so this one is at most inconclusive
    assert claim["verdict"] == "inconclusive" and claim["against_null"]["null"] is None
    md = (tmp_path / "unselectable_tokens.md").read_text()
    assert "0.03 / 0.04 / 0.03" in md and "| normbench |" not in md and "| paper |" in md


def test_one_lm_seed_is_inconclusive(tmp_path: Path) -> None:
    doc = finish({"sections": {}}, [], {"pre/project": {0: summary(3)}, "pre/both": {0: summary(0)}}, tmp_path)
    assert doc["claims"][0]["verdict"] == "inconclusive"


def test_the_committed_token_report_holds_todays_judgement_of_its_counts(tmp_path: Path) -> None:
    """`normbench rejudge results/sst2` judges Tables 3-4's claims again from the counts the report holds; on the
    committed report it changes nothing, and on one judged by an older rule it rewrites the claims section only."""
    import shutil

    from normbench.publish.tokens import TOKEN_REPORT, rejudge_token_report

    results = Path(__file__).resolve().parents[2] / "results" / "sst2"
    for name in (TOKEN_REPORT, "unselectable_tokens.md"):
        shutil.copy(results / name, tmp_path / name)
    assert rejudge_token_report(tmp_path) == []
    assert (tmp_path / TOKEN_REPORT).read_bytes() == (results / TOKEN_REPORT).read_bytes()
    doc = json.loads((results / TOKEN_REPORT).read_text())
    doc["claims"][0]["rule"] = "an older rule"
    (tmp_path / TOKEN_REPORT).write_text(json.dumps(doc))
    md = (results / "unselectable_tokens.md").read_text()
    assert rejudge_token_report(tmp_path) == []  # the same verdict, restated
    assert (tmp_path / "unselectable_tokens.md").read_text() == md
    assert (
        json.loads((tmp_path / TOKEN_REPORT).read_text())["claims"]
        == json.loads(results.joinpath(TOKEN_REPORT).read_text())["claims"]
    )
    assert rejudge_token_report(tmp_path / "absent") is None
