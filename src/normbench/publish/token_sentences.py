"""The SST-2 dev sentences a token report is on (:class:`DevSentences`): their digest and count, which name a run's
token analysis, and the first of them, which the report prints. These are a fact of the run archive, so a clone
without the corpus rebuilds the report; the corpus is read only to compute an analysis, and must then give that
digest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

from normbench.archive.facts import data_fact
from normbench.io import params_digest
from normbench.publish.settings import Config
from normbench.tasks.trust import record_class


def sentences_digest(sentences: list[str]) -> str:
    """What names a set of dev sentences (the token analyses' ``sentences`` parameter)."""
    return params_digest({"sentences": sentences})


def dev_sentences(run_config: Config) -> list[str]:
    """The dev sentences of the data module of a resolved ``sst2`` config (its ``raw()`` test split)."""
    data = run_config["data"]
    cls = record_class(data.get("class_path"), "data")  # a record's config: registered classes only
    init_args = {**getattr(cls, "LEGACY_INIT_ARGS", {}), **(data.get("init_args") or {})}  # as the run trained
    return cls(**init_args).raw()["test"]["sentence"]


def shown_count(config: Config) -> int:
    """How many dev sentences a token report prints per table (``bench.token_report.sentences``, default 40)."""
    return int(((config.get("bench") or {}).get("token_report") or {}).get("sentences", 40))


@dataclass(frozen=True)
class DevSentences:
    """The dev sentences a token report is on: their digest and count (what names a run's analysis), the first
    ``shown`` of them (what the report prints), and all of them (``texts()``: read from the corpus, needed only to
    compute an analysis from a checkpoint)."""

    digest: str
    n: int
    shown: list[str]
    texts: Callable[[], list[str]]


DEV_SENTENCES_VERSION = 1  # of the dev_sentences data fact's value


class DevSentencesFact(TypedDict):
    """The ``dev_sentences`` data fact's value: the sentences' ``digest`` (:func:`sentences_digest`), their number
    ``n`` and the first ``shown`` of them, in file order."""

    digest: str
    n: int
    shown: list[str]


def dev_sentence_facts(
    run_config: Config, shown: int, load_sentences: Callable[[Config], list[str]] = dev_sentences
) -> DevSentences:
    """The :class:`DevSentences` of a resolved ``sst2`` config. The digest, count and printed sentences are a fact of
    the run archive (:func:`normbench.archive.facts.data_fact`), so a clone without the SST-2 corpus rebuilds the
    report from the archived analyses; the corpus is read only to compute one, and then must give that digest."""
    loaded: list[list[str]] = []

    def texts() -> list[str]:
        if not loaded:
            loaded.append(load_sentences(run_config))
        return loaded[0]

    def compute() -> DevSentencesFact:
        return {"digest": sentences_digest(texts()), "n": len(texts()), "shown": texts()[:shown]}

    data = run_config.get("data") or {}
    fact = data_fact("dev_sentences", data, compute, shown=shown, version=DEV_SENTENCES_VERSION)

    def checked() -> list[str]:
        if (here := sentences_digest(texts())) != fact["digest"]:
            raise ValueError(
                f"data.data_dir: its SST-2 dev sentences (digest {here}) are not those the run archive's analyses "
                f"are on ({fact['digest']}); point it at GLUE's SST-2"
            )
        return texts()

    return DevSentences(str(fact["digest"]), int(fact["n"]), list(fact["shown"]), checked)
