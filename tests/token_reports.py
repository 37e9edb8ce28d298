"""Token report runs for the tests of the sst2 token report (normbench.publish.tokens and its token_* modules):
counts, an analysis, dev sentences, planned and archived sst2 runs."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from normbench.io import params_digest
from normbench.publish.token_sentences import DevSentences, sentences_digest
from normbench.run_analyses.sentence_tokens import SENTENCE_TOKENS, SENTENCE_TOKENS_VERSION
from tests.factories import make_record


def summary(bad: int, tokens: int = 100) -> dict:
    return {
        "sentences": 10,
        "tokens": tokens,
        "per_layer": [bad, 0],
        "any_layer": bad,
        "fraction_any_layer": bad / tokens,
        "sentences_with_unselectable": min(bad, 10),
    }


SENTENCES = ["ab cd", "e f"]


ANALYSIS = {"tokens": [2, 2], "any_layer": [1, 0], "per_layer": [[1, 0], [0, 0]], "bold_words": [[1], []]}


def dev(sentences: list[str]) -> DevSentences:
    """Dev sentences as a report finds them, read from a corpus."""
    return DevSentences(sentences_digest(sentences), len(sentences), sentences[:1], lambda: sentences)


def no_corpus(config: dict[str, Any]) -> list[str]:
    raise AssertionError("the corpus was read")


@dataclass(frozen=True)
class Planned:
    variant: str
    seed: int
    record_path: Path | None
    config_hash: str | None
    config: dict[str, Any] = field(default_factory=dict)


def archive_run(root: Path, seed: int, analysis: dict[str, Any] | None, sentences: list[str] = SENTENCES) -> Path:
    """An archived finished sst2 run of none/none (hash h-none/none), with its token analysis kept beside it."""
    folder = root / "archive" / "sst2" / "h-none" / f"seed{seed}" / "cpu-x"
    folder.mkdir(parents=True)
    record = make_record("none/none", seed, task="sst2", config_hash="h-none", checkpoint="c.ckpt", log_dir="runs/x")
    (folder / "record.json.gz").write_bytes(gzip.compress(json.dumps(record).encode()))
    if analysis is not None:
        params = {"version": SENTENCE_TOKENS_VERSION, "sentences": params_digest({"sentences": sentences})}
        (folder / SENTENCE_TOKENS).write_text(json.dumps({**analysis, **params, "n_sentences": len(sentences)}))
    return folder / "record.json.gz"
