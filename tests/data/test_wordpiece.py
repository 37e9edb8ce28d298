"""The SST-2 WordPiece tokenizer: known words round-trip, ``[CLS] ... [SEP]``, the same vocabulary every time."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.data.sst2_files import load_local
from normbench.data.wordpiece import train_wordpiece
from tests.sst2_corpus import FILLER, NEGATIVE, POSITIVE, write_sst2


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    folder = write_sst2(tmp_path_factory.mktemp("sst2"))
    return train_wordpiece(load_local(folder)["train"]["sentence"], 200)


WORDS = FILLER + POSITIVE + NEGATIVE


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(WORDS), st.booleans(), st.sampled_from([" ", "  ", "\t", ", ", " ' "])), max_size=20
    )
)
def test_wordpiece_round_trip(tokenizer, parts: list[tuple[str, bool, str]]) -> None:  # noqa: ANN001
    """Text made of known words re-encodes to the same ids (decoding loses only case and spacing)."""
    text = "".join((w.upper() if up else w) + sep for w, up, sep in parts)
    ids = tokenizer.encode(text).ids
    assert 1 not in ids  # no [UNK]
    assert tokenizer.encode(tokenizer.decode(ids)).ids == ids


def test_wordpiece_wraps_in_cls_sep_and_lower_cases(tokenizer) -> None:  # noqa: ANN001
    enc = tokenizer.encode("The Film is GREAT")
    assert enc.tokens[0] == "[CLS]" and enc.tokens[-1] == "[SEP]"
    assert tokenizer.decode(enc.ids) == "the film is great"
    assert [tokenizer.token_to_id(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")] == [0, 1, 2, 3, 4]


def test_wordpiece_training_gives_the_same_vocabulary_every_time() -> None:
    """The trainer's own ``##`` pieces got ids in hash-map order, so ties between merges went either way
    (4 trainings on SST-2's sentences gave 4 vocabularies); with them seeded in sorted order, never."""
    words = ["rebus", "bursa", "subra", "ubers", "serub", "abuse", "tubas", "brest", "strub", "burst"]
    sentences = [" ".join(words[i:] + words[:i]) for i in range(len(words))] * 3
    vocabularies = {json.dumps(sorted(train_wordpiece(sentences, 120).get_vocab().items())) for _ in range(6)}
    assert len(vocabularies) == 1
    tokenizer = train_wordpiece(sentences, 120)
    assert not {t.content for t in tokenizer.get_added_tokens_decoder().values()} - {
        "[PAD]",
        "[UNK]",
        "[CLS]",
        "[SEP]",
        "[MASK]",
    }
    assert "##u" in tokenizer.get_vocab() and tokenizer.encode("##u").tokens != ["[CLS]", "##u", "[SEP]"]
