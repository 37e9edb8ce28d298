"""The dev sentences a token report is on: a data fact of the run archive, the corpus read only to compute."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from normbench.publish.token_sentences import dev_sentence_facts, sentences_digest
from normbench.training.config import load_config
from tests.token_reports import SENTENCES, no_corpus


def test_dev_sentences_are_read_from_the_corpus_once_then_from_their_data_fact(tmp_path: Path) -> None:
    """Their digest, count and printed sentences are a data fact (kept in the run archive with the report), so a
    clone without the corpus finds them; the corpus is read again only to compute an analysis, and must match."""
    config = {"data": {"class_path": "normbench.data.sst2.SST2DataModule", "init_args": {"case": str(tmp_path)}}}
    read: list[int] = []

    def corpus(c: dict[str, Any]) -> list[str]:
        read.append(1)
        return SENTENCES

    first = dev_sentence_facts(config, 1, corpus)
    assert (first.digest, first.n, first.shown, read) == (sentences_digest(SENTENCES), 2, ["ab cd"], [1])
    again = dev_sentence_facts(config, 1, no_corpus)  # no corpus here: the fact alone
    assert (again.digest, again.n, again.shown) == (first.digest, first.n, first.shown)
    other = dev_sentence_facts(config, 1, lambda c: ["other sentences"])
    with pytest.raises(ValueError, match=r"^data.data_dir: its SST-2 dev sentences \(digest .*\) are not those"):
        other.texts()  # an analysis computed on them would be named by the fact's digest: refused
    assert dev_sentence_facts(config, 1, corpus).texts() == SENTENCES


def test_the_committed_token_report_has_its_data_fact_in_the_archive() -> None:
    """The fact beside the archive names the report's sentences, and its printed sentences are the report's own (the
    slow rebuild test, tests/publish/test_rebuild.py, rebuilds the report from it with no corpus)."""
    from normbench.publish.token_sentences import shown_count
    from normbench.publish.tokens import TOKEN_REPORT

    results = Path(__file__).resolve().parents[2] / "results"
    report = json.loads((results / "sst2" / TOKEN_REPORT).read_text())
    facts = [json.loads(p.read_text()) for p in (results / "archive" / "data-facts").glob("dev_sentences-*.json")]
    (fact,) = [f for f in facts if f["value"]["digest"] == report["sentences"]["digest"]]
    assert fact["value"]["n"] == report["sentences"]["n"] and fact["params"]["shown"] == shown_count(
        load_config("sst2")
    )
    printed = [line.replace("**", "") for line in report["sections"]["table4"]["shown"]["lines"]]
    assert printed == [" ".join(text.split()) for text in fact["value"]["shown"][: len(printed)]]
