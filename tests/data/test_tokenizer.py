"""Byte-level BPE: exact round trip, vocabulary bound, the end-of-text token."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.data.text import load_articles
from normbench.data.tokenizer import EOS, load_tokenizer, save_tokenizer, train_bpe
from tests.lm_corpus import write_corpus

_TOKENIZER = None


def tokenizer(tmp_path_factory: pytest.TempPathFactory | None = None):  # noqa: ANN201
    global _TOKENIZER
    if _TOKENIZER is None:
        import tempfile

        folder = Path(tempfile.mkdtemp()) / "wt"
        write_corpus(folder)
        _TOKENIZER = train_bpe(load_articles("local", folder, "", None, [], "wikitext"), 400)
    return _TOKENIZER


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_round_trip_of_any_text(text: str) -> None:
    tok = tokenizer()
    assert tok.decode(tok.encode(text).ids) == text


def test_vocabulary_bound_and_eos() -> None:
    tok = tokenizer()
    assert 257 < tok.get_vocab_size() <= 400
    assert tok.token_to_id(EOS) == 0
    assert len(tok.encode("the album of the river").ids) < len("the album of the river")  # merges learned


def test_save_and_load(tmp_path: Path) -> None:
    tok = tokenizer()
    path = save_tokenizer(tok, tmp_path / "tokenizer.json")
    assert load_tokenizer(path).encode("the war film").ids == tok.encode("the war film").ids


def test_too_small_vocabulary_names_the_field() -> None:
    with pytest.raises(ValueError, match="data.vocab_size"):
        train_bpe(["abc"], 100)
