"""SST-2's training phrases: the whole sentences among them, and a held-out split of sentences.

GLUE's SST-2 training file holds every phrase of the treebank's training parses: each whole sentence and its
sub-phrases (67,349 phrases of about 6,900 sentences). A split of it that a learning rate can be chosen on must hold
out whole sentences *and every phrase inside them*, or the training set would contain the held-out text piece by
piece. A *whole sentence* is a phrase that no other phrase contains as a contiguous run of words; the held-out
sentences are the ``count`` whole sentences first in the order of their sha256 (the same ones whatever the file's
order or the seed), and training keeps every phrase that is not a contiguous run of words of one of them.

Words are compared as the file spells them, after the data module's text normalization. The treebank's tokenizer
spells a few words two ways (``etc.`` in a sentence, ``etc .`` in a phrase of another parse), so a handful of training
phrases that differ from a held-out sentence's words only in such a spelling stay in training (3 of 57,571 with 872
sentences held out); a few such phrases also count as whole sentences, none of them among the 872.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def word_runs(words: list[str], proper: bool) -> Iterable[str]:
    """Every contiguous run of ``words``, joined by spaces (``proper``: all but the whole)."""
    n = len(words)
    for i in range(n):
        for j in range(i + 1, n + 1):
            if not (proper and j - i == n):
                yield " ".join(words[i:j])


def whole_sentences(phrases: list[str]) -> list[str]:
    """The distinct phrases that no other phrase contains as a contiguous run of words, in first-seen order."""
    distinct = list(dict.fromkeys(" ".join(p.split()) for p in phrases))
    known = set(distinct)
    inside = {run for p in distinct for run in word_runs(p.split(), proper=True) if run in known}
    return [p for p in distinct if p not in inside]


def hold_out(split: dict[str, list], count: int) -> tuple[dict[str, list], dict[str, list]]:
    """``(kept, held_out)`` of a labelled split ``{"sentence": [...], "label": [...]}``: ``count`` whole sentences
    held out (:func:`whole_sentences`, by sha256 order) with their labels, and every phrase kept that is not a
    contiguous run of words of a held-out sentence. A one-line ``ValueError`` when there are fewer whole sentences."""
    if count <= 0:
        return split, {"sentence": [], "label": []}
    sentences = whole_sentences(split["sentence"])
    if count >= len(sentences):
        raise ValueError(
            f"data.holdout: {count} held-out sentences leave nothing to train on: the training phrases hold "
            f"{len(sentences)} whole sentences; choose fewer"
        )
    chosen = sorted(sentences, key=lambda s: hashlib.sha256(s.encode()).hexdigest())[:count]
    covered = {run for s in chosen for run in word_runs(s.split(), proper=False)}
    label_of: dict[str, int] = {}
    kept: dict[str, list] = {"sentence": [], "label": []}
    for sentence, label in zip(split["sentence"], split["label"], strict=True):
        words = " ".join(sentence.split())
        if words in covered:
            label_of.setdefault(words, label)
        else:
            kept["sentence"].append(sentence)
            kept["label"].append(label)
    return kept, {"sentence": chosen, "label": [label_of[s] for s in chosen]}
