"""One run's unselectable tokens on the SST-2 dev sentences (Brody et al. 2023, Tables 3-4), computed once from its
final checkpoint and kept beside its record (``sentence_tokens.json``; in the run archive too, which keeps no
weights), so that the token report can be rebuilt from the archive alone.

A token is unselectable in a layer when its key (its row of that layer's attention input) lies in the convex hull
of the other keys of its sentence. Per sentence the file holds counts: the sentence's tokens (``[CLS]``/``[SEP]``
left out), how many are unselectable in each layer and in any layer, and which of its whitespace words hold one
(the words the report prints in bold). It names the sentences by their digest: reading it needs the dev sentences.
The archive never replaces an analysis, so a change to what this file holds is a new ``SENTENCE_TOKENS_VERSION``
and a new file name (with its entry in :data:`normbench.archive.replicate.ANALYSES`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

import torch

from normbench.analysis.model_keys import unselectable_per_layer
from normbench.data.tokenizer import load_tokenizer
from normbench.run_analyses.run_cache import cached_analysis
from normbench.tasks import get_task
from normbench.training.run.loading import load_run
from normbench.training.run.rundir import run_of_checkpoint, tokenizer_path

SENTENCE_TOKENS = "sentence_tokens.json"  # beside a run's record (normbench.archive.replicate.ANALYSES)
SENTENCE_TOKENS_VERSION = 1
SST2_TRUNCATION = 128  # tokens of an SST-2 sentence the encoder reads (its longest dev sentence has 66 words)


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the whitespace-separated words of ``text``."""
    spans, start = [], None
    for i, ch in enumerate(text + " "):
        if ch.isspace():
            if start is not None:
                spans.append((start, i))
                start = None
        elif start is None:
            start = i
    return spans


def bold_words(text: str, offsets: Sequence[tuple[int, int]], marked: Sequence[bool]) -> list[int]:
    """The indices of the words of ``text`` that overlap a marked token's character span (empty spans: none)."""
    hits = [span for span, m in zip(offsets, marked, strict=False) if m and span[1] > span[0]]
    return [i for i, (a, b) in enumerate(word_spans(text)) if any(s < b and e > a for s, e in hits)]


def render_words(text: str, bold: Sequence[int]) -> str:
    """``text``'s words, single-spaced, with the words at ``bold`` in **bold**."""
    chosen = set(bold)
    return " ".join(f"**{text[a:b]}**" if i in chosen else text[a:b] for i, (a, b) in enumerate(word_spans(text)))


class SentenceUnselectable(TypedDict):
    """One sentence's tokens as :func:`analyse_sentences` finds them, each list in token order."""

    per_layer: list[list[bool]]
    """Per layer, whether each token is unselectable there."""
    content: list[bool]
    """Whether each token is the sentence's own (not [CLS]/[SEP]/EOS)."""


def analyse_sentences(
    model: torch.nn.Module,
    encodings: list[Any],
    content: Callable[[Any], list[bool]],
    forward_args: Callable[[torch.Tensor, torch.Tensor], tuple],
    batch_size: int = 64,
) -> list[SentenceUnselectable]:
    """Per sentence: which tokens are unselectable in which layer (``per_layer``), and which are the sentence's
    (``content``: not [CLS]/[SEP]/EOS). ``forward_args(ids, padding_mask)`` are the model's inputs for a padded
    batch."""
    out: list[SentenceUnselectable] = []
    device = next(model.parameters()).device
    for start in range(0, len(encodings), batch_size):
        chunk = encodings[start : start + batch_size]
        longest = max(len(e.ids) for e in chunk)
        ids = torch.zeros(len(chunk), longest, dtype=torch.long, device=device)
        pad = torch.ones(len(chunk), longest, dtype=torch.bool, device=device)
        for row, e in enumerate(chunk):
            ids[row, : len(e.ids)] = torch.as_tensor(e.ids, device=device)
            pad[row, : len(e.ids)] = False
        layers = unselectable_per_layer(model, *forward_args(ids, pad), key_padding_mask=pad, heads=False)
        for row, e in enumerate(chunk):
            n = len(e.ids)
            out.append(
                {"per_layer": [layer["positions_after"][row, :n].tolist() for layer in layers], "content": content(e)}
            )
    return out


class TokenAnalysis(TypedDict):
    """A run's ``sentence_tokens.json`` (:func:`per_sentence`; the cache adds the parameters it was computed with),
    each list in dev-sentence order.

    tokens: each sentence's content tokens; any_layer: those unselectable in at least one layer; per_layer: layer ->
        each sentence's unselectable tokens in it; bold_words: each sentence's words that hold an unselectable token.
    """

    tokens: list[int]
    any_layer: list[int]
    per_layer: list[list[int]]
    bold_words: list[Any]


class TokenSummary(TypedDict):
    """A run's counts over every dev sentence (:func:`summarize`).

    sentences: how many; tokens: their content tokens; per_layer: the unselectable tokens of each layer; any_layer:
    the tokens unselectable in at least one layer, fraction_any_layer their share of ``tokens`` (0.0 for none);
    sentences_with_unselectable: the sentences holding one.
    """

    sentences: int
    tokens: int
    per_layer: list[int]
    any_layer: int
    fraction_any_layer: float
    sentences_with_unselectable: int


def per_sentence(sentences: list[str], encodings: list[Any], results: list[SentenceUnselectable]) -> TokenAnalysis:
    """The file's content: per sentence its tokens, its unselectable ones per layer and in any layer, its bold words."""
    tokens, any_layer, bold = [], [], []
    n_layers = len(results[0]["per_layer"]) if results else 0
    per_layer: list[list[int]] = [[] for _ in range(n_layers)]
    for text, enc, res in zip(sentences, encodings, results, strict=True):
        content = res["content"]
        marked = [c and any(layer[j] for layer in res["per_layer"]) for j, c in enumerate(content)]
        tokens.append(sum(content))
        any_layer.append(sum(marked))
        for i, layer in enumerate(res["per_layer"]):
            per_layer[i].append(sum(u and c for u, c in zip(layer, content, strict=False)))
        bold.append(bold_words(text, enc.offsets, marked))
    return {"tokens": tokens, "any_layer": any_layer, "per_layer": per_layer, "bold_words": bold}


def summarize(analysis: TokenAnalysis) -> TokenSummary:
    """Counts over every sentence: tokens, unselectable ones per layer and in any layer, sentences holding one."""
    total, any_layer = sum(analysis["tokens"]), sum(analysis["any_layer"])
    return {
        "sentences": len(analysis["tokens"]),
        "tokens": total,
        "per_layer": [sum(layer) for layer in analysis["per_layer"]],
        "any_layer": any_layer,
        "fraction_any_layer": any_layer / total if total else 0.0,
        "sentences_with_unselectable": sum(1 for n in analysis["any_layer"] if n),
    }


def compute(ckpt: Path, sentences: list[str]) -> TokenAnalysis:
    """The analysis of the run whose final checkpoint is ``ckpt``, with the tokenizer it trained with: an ``sst2``
    encoder reads ``[CLS] sentence [SEP]``, an ``lm`` decoder the sentence alone."""
    record, module = load_run(ckpt)
    tokenizer = load_tokenizer(tokenizer_path(run_of_checkpoint(ckpt)))
    sst2 = get_task(record["task"]).sentence_encoder
    tokenizer.enable_truncation(min(module.arch.max_positions, SST2_TRUNCATION) if sst2 else module.arch.max_positions)
    encodings = tokenizer.encode_batch(sentences)
    if sst2:
        results = analyse_sentences(
            module.model, encodings, lambda e: [m == 0 for m in e.special_tokens_mask], lambda ids, pad: (ids, pad)
        )
    else:
        results = analyse_sentences(module.model, encodings, lambda e: [True] * len(e.ids), lambda ids, pad: (ids,))
    return per_sentence(sentences, encodings, results)


def sentence_tokens(
    record: Mapping[str, Any], digest: str, n: int, sentences: Callable[[], list[str]]
) -> TokenAnalysis | None:
    """A finished run's analysis on the ``n`` dev sentences named by ``digest``: computed from its final checkpoint
    on ``sentences()`` (and cached beside it), or read from the run archive; ``None`` for an archived run whose
    analysis was never computed where its weights were."""
    params = {"version": SENTENCE_TOKENS_VERSION, "sentences": digest, "n_sentences": n}
    return cached_analysis(record, SENTENCE_TOKENS, params, lambda ckpt: compute(ckpt, sentences()))
