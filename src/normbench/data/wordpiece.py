"""BERT-style uncased WordPiece trained with HF ``tokenizers``: encodings are ``[CLS] tokens [SEP]``, and the same
sentences always give the same vocabulary (:func:`subword_alphabet`).
"""

from __future__ import annotations

import json

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")  # [PAD] = 0


def train_wordpiece(sentences: list[str], vocab_size: int) -> Tokenizer:
    """BERT-style uncased WordPiece; encodings are ``[CLS] tokens [SEP]``. The same sentences always give
    the same vocabulary (:func:`subword_alphabet`)."""
    if vocab_size < 100:
        raise ValueError(f"data.vocab_size: must be >= 100, got {vocab_size}")
    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    seeded = subword_alphabet(tokenizer, sentences)
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=[*SPECIALS, *seeded], show_progress=False)
    tokenizer.train_from_iterator(sentences, trainer=trainer)
    doc = json.loads(tokenizer.to_str())  # the seeded pieces are ordinary vocabulary, not special tokens
    doc["added_tokens"] = [t for t in doc["added_tokens"] if t["content"] in SPECIALS]
    tokenizer = Tokenizer.from_str(json.dumps(doc))
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    return tokenizer


def subword_alphabet(tokenizer: Tokenizer, sentences: list[str]) -> list[str]:
    """Every word-internal character of ``sentences`` as a ``##c`` piece, sorted.

    HF ``tokenizers``' WordPiece trainer creates these pieces while iterating over a hash map of the
    word counts, so their ids, and through the ids the order in which merges of equal count are made,
    change from one training to the next (huggingface/tokenizers#1794): the same sentences gave
    another vocabulary each time. Handed to the trainer first, in sorted order, they get fixed ids.
    """
    pieces: set[str] = set()
    for sentence in sentences:
        for word, _ in tokenizer.pre_tokenizer.pre_tokenize_str(tokenizer.normalizer.normalize_str(sentence)):
            pieces.update(f"##{c}" for c in word[1:])
    return sorted(pieces)
