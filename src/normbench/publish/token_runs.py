"""Which runs a token report reads (:class:`TokenRun`, :class:`TokenPlan`): Table 4's (the sst2 variant's, every
seed) and Table 3's (the lm task's own bench's), each through its analysis, computed from its final checkpoint where
that is here (then kept beside its replicate in the run archive) or read from the archive; a run published before
the archive stands in with the counts the published report gave it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypedDict, cast

from normbench.archive import load_record
from normbench.archive.record import RecordDocument
from normbench.archive.store import Archive
from normbench.boards.progress import PlannedRun, record_file
from normbench.boards.shown import keep_analyses, shown_runs
from normbench.publish.token_sentences import DevSentences, dev_sentence_facts, dev_sentences, shown_count
from normbench.run_analyses.sentence_tokens import (
    SENTENCE_TOKENS,
    TokenAnalysis,
    TokenSummary,
    sentence_tokens,
    summarize,
)
from normbench.training.run.rundir import checkpoint_of


class SentencesBlock(TypedDict, total=False):
    """The dev sentences a report's counts are on (its ``sentences``, and a stand-in's counted on other ones): their
    ``digest`` (``None``: not known), their number ``n`` (the report's own only) and what they are (``text``)."""

    digest: str | None
    n: int
    text: str | None


class RunSentences(TypedDict):
    """:class:`TokenRun`'s ``sentences`` (the digest) and ``sentences_text`` of a :class:`SentencesBlock`."""

    sentences: str | None
    sentences_text: str | None


@dataclass(frozen=True)
class TokenRun:
    """One run a token report reads: its counts over every dev sentence (``summary``) and, where its analysis is at
    hand, the analysis itself; ``record`` is ``None`` for a run published before the archive, whose counts are the
    published report's. ``source``: the record it was read from (for a stand-in, the published report's)."""

    task: str
    variant: str
    seed: int
    config_hash: str | None
    summary: TokenSummary
    record: dict[str, Any] | None = None
    analysis: TokenAnalysis | None = None
    source: str | None = None
    sentences: str | None = None  # the digest of the dev sentences its counts are on (None: not known)
    sentences_text: str | None = None  # what those sentences are, where they are not the report's own

    @property
    def label(self) -> tuple[str, int]:
        return f"{self.task} {self.variant}", self.seed


Missing = tuple[tuple[str, int], str]  # a finished run the report could not read, and why


def published_counts(old: dict[str, Any] | None, sst2_variant: str) -> dict[tuple[str, str, int], TokenRun]:
    """The runs a published report read, as stand-ins: ``(task, variant, seed) -> TokenRun`` with its counts and the
    config hash of its run (from the report, else from its run folder's name)."""
    if not old:
        return {}
    out: dict[tuple[str, str, int], TokenRun] = {}
    sections = old.get("sections") or {}
    report_sentences: SentencesBlock = old.get("sentences") or SentencesBlock()
    table4 = sections.get("table4") or {}
    own = table4.get("sentences") or {}  # seed -> the sentences of a stand-in counted on other ones
    digest = table4.get("config_hash") or hash_of(table4.get("record"))
    sources = table4.get("records") or {}
    for seed, summary in (table4.get("per_seed") or {}).items():
        source = sources.get(seed) or (table4.get("record") if hash_of(table4.get("record"), int(seed)) else None)
        on = own.get(str(seed)) or report_sentences
        out[("sst2", sst2_variant, int(seed))] = TokenRun(
            "sst2", sst2_variant, int(seed), digest, summary, source=source, **sentences_of(on)
        )
    for key, section in sections.items():
        if m := re.fullmatch(r"table3:(.+):seed(\d+)", key):
            digest = section.get("config_hash") or hash_of(section.get("record"))
            on = section.get("sentences") or report_sentences
            out[("lm", m[1], int(m[2]))] = TokenRun(
                "lm", m[1], int(m[2]), digest, section["summary"], source=section.get("record"), **sentences_of(on)
            )
    return out


def hash_of(record_path: str | None, seed: int | None = None) -> str | None:
    """The config hash a run folder's name ends with (``runs/<task>/<name>-<hash>/seed<k>/record.json``; of seed
    ``seed`` only, when given)."""
    m = re.search(r"-([0-9a-f]{12})/seed(\d+)/record\.json$", record_path or "")
    return m[1] if m and (seed is None or int(m[2]) == seed) else None


def token_runs(
    task: str,
    runs: Sequence[PlannedRun],
    archive: Archive | None,
    published: dict[tuple[str, str, int], TokenRun],
    sentences: Callable[[], DevSentences],
) -> tuple[list[TokenRun], list[Missing]]:
    """The runs of ``runs`` (one task's) the report reads, in seed order, and the finished ones it cannot read with
    why. A run published before the archive stands in with its published counts; another finished run is read
    through its analysis, computed from its final checkpoint (then kept beside its replicate in the archive) or
    read from the archive."""
    out: list[TokenRun] = []
    missing: list[Missing] = []
    for run in shown_runs(task, runs, archive):
        label = (f"{task} {run.variant}", run.seed)
        before_archive = (
            archive is not None
            and run.config_hash is not None
            and archive.published_elsewhere(task, run.config_hash, run.seed)
            and archive.canonical(task, run.config_hash, run.seed) is None
        )
        if before_archive:  # its published counts are canonical, as its board's values are
            stand_in = published.get((task, run.variant, run.seed))
            if stand_in is not None and stand_in.config_hash == run.config_hash:
                out.append(replace(stand_in, variant=run.variant))
            else:
                missing.append(
                    (label, "published before the run archive, and the published report has no counts of it")
                )
            continue
        if not finished(run.record_path):
            continue
        read, why = read_run(task, run, archive, sentences)
        if read is None:
            missing.append((label, why))
        else:
            out.append(read)
    return sorted(out, key=lambda t: t.seed), missing


def read_run(
    task: str, run: PlannedRun, archive: Archive | None, sentences: Callable[[], DevSentences]
) -> tuple[TokenRun | None, str]:
    """A finished run's counts: from its final checkpoint where it is here (the analysis then goes beside its
    replicate in the archive), else from the analysis the archive keeps; ``(None, why)`` with neither."""
    path = record_file(run)
    record = {**load_record(path).to_json(), "record_path": str(path)}
    local = not record.get("archived")
    ckpt = checkpoint_of(cast(RecordDocument, record), path.parent) if local else None
    if local and (ckpt is None or not ckpt.is_file()):
        rep = archive.canonical(task, run.config_hash, run.seed) if archive is not None and run.config_hash else None
        if rep is None:
            return None, (
                "its record names no final checkpoint" if ckpt is None else f"its final checkpoint {ckpt} is missing"
            )
        record, local = {**load_record(rep.record_path).to_json(), "record_path": str(rep.record_path)}, False
    on = sentences()
    analysis = sentence_tokens(record, on.digest, on.n, on.texts)
    if analysis is None and (Path(record["record_path"]).parent / SENTENCE_TOKENS).is_file():
        return None, "its archived token analysis was computed on other dev sentences or by another version"
    if analysis is None:
        return None, "the run archive keeps no token analysis of it (one is computed only where its checkpoint is)"
    if local:
        keep_analyses(task, [run], archive)
    summary = summarize(analysis)
    return TokenRun(
        task, run.variant, run.seed, run.config_hash, summary, record, analysis, record["record_path"], on.digest
    ), ""


def finished(path: Path | None) -> bool:
    """Whether ``path`` is the record of a run that is done."""
    return path is not None and Path(path).is_file() and load_record(path).status == "done"


@dataclass(frozen=True)
class TokenPlan:
    """What a token report reads: Table 4's runs (the sst2 variant's) and Table 3's (per lm variant), the lm seeds
    Table 3 spans, the finished runs it cannot read (with why), and the dev sentences (loaded once, when a run's
    analysis needs them)."""

    table4: list[TokenRun]
    table3: dict[str, list[TokenRun]]
    lm_seeds: list[int]
    sentences: Callable[[], DevSentences]
    missing: list[Missing]

    def labels(self) -> dict[tuple[str, int], str | None]:
        """The runs read with their config hashes, named as :func:`published_runs` names them."""
        every = [*self.table4, *(t for runs in self.table3.values() for t in runs)]
        return {t.label: t.config_hash for t in every}


def sentence_loader(
    config: dict[str, Any],
    runs: Sequence[PlannedRun],
    archive: Archive | None,
    load_sentences: Callable[[dict[str, Any]], list[str]] = dev_sentences,
) -> Callable[[], DevSentences]:
    """The dev sentences, found once when first asked for: as the first finished run of ``runs`` read them (its
    record's config), else as the first planned run would (its resolved config), else as ``config`` reads them."""
    found: list[DevSentences] = []

    def sentences() -> DevSentences:
        if not found:
            done = next((r.record_path for r in shown_runs("sst2", runs, archive) if finished(r.record_path)), None)
            run_config = (load_record(done).config or {}) if done is not None else runs[0].config if runs else config
            found.append(dev_sentence_facts(run_config, shown_count(config), load_sentences))
        return found[0]

    return sentences


def plan_report(
    config: dict[str, Any],
    runs: Sequence[PlannedRun],
    plan: Any,
    archive: Archive | None,
    old: dict[str, Any] | None,
    load_sentences: Callable[[dict[str, Any]], list[str]] = dev_sentences,
) -> TokenPlan:
    """The runs a token report on ``runs`` (this sst2 sweep's) reads; Table 3's are the ``lm`` task's own bench's,
    which ``plan`` (a :data:`normbench.publish.write.RunPlanner`) finds. ``old``: the published report, whose
    counts the runs published before the archive stand in with."""
    spec = config["bench"]["token_report"]
    mine = [r for r in runs if r.variant == spec["variant"]]
    sentences = sentence_loader(config, mine, archive, load_sentences)
    published = published_counts(old, spec["variant"])
    table4, missing = token_runs("sst2", mine, archive, published, sentences)
    table3: dict[str, list[TokenRun]] = {}
    lm = spec.get("lm")
    seeds: list[int] = []
    if lm:
        seeds = lm_seeds(lm, plan)
        for variant in filter(None, (lm["variant"], lm.get("reference"))):
            _, planned = plan("lm", lm["preset"], seeds, [variant])
            table3[variant], lost = token_runs("lm", planned, archive, published, sentences)
            missing += lost
    return TokenPlan(table4, table3, seeds, sentences, missing)


def report_runs(
    config: dict[str, Any], runs: Sequence[PlannedRun], plan: Any, archive: Archive | None = None, old: Any = None
) -> dict[tuple[str, int], str | None]:
    """The runs :func:`~normbench.publish.tokens.write_token_report` would read, as ``("sst2 <variant>", seed)``
    (Table 4) and ``("lm <variant>", seed)`` (Table 3) -> config hash. Their analyses are computed here (and cached)."""
    return plan_report(config, runs, plan, archive, old).labels()


def sentences_of(on: SentencesBlock) -> RunSentences:
    """:class:`TokenRun`'s ``sentences`` and ``sentences_text`` from a report's ``{digest, text}`` block."""
    return {"sentences": on.get("digest"), "sentences_text": on.get("text")}


def on_sentences(run: TokenRun) -> SentencesBlock:
    """The sentences a stand-in's counts are on, kept beside them so that every later rebuild still marks them."""
    return {"digest": run.sentences, "text": run.sentences_text}


def published_runs(doc: dict[str, Any], config: dict[str, Any]) -> dict[tuple[str, int], str | None]:
    """The runs an ``unselectable_tokens.json`` read, named as :func:`report_runs` names them."""
    variant = config["bench"]["token_report"]["variant"]
    sections = doc["sections"]
    table4 = sections.get("table4") or {}
    digest = table4.get("config_hash") or hash_of(table4.get("record"))
    found: dict[tuple[str, int], str | None] = {
        (f"sst2 {variant}", int(seed)): digest for seed in table4.get("per_seed") or {}
    }
    for key, section in sections.items():
        if m := re.fullmatch(r"table3:(.+):seed(\d+)", key):
            found[(f"lm {m[1]}", int(m[2]))] = section.get("config_hash") or hash_of(section.get("record"))
    return found


def lm_seeds(lm: dict[str, Any], plan: Any) -> list[int]:
    """The ``lm`` seeds Table 3 reads: ``bench.token_report.lm.seeds``, else every seed of the lm preset's bench."""
    if lm.get("seeds") is not None:
        return [int(s) for s in lm["seeds"]]
    config, _ = plan("lm", lm["preset"], None, [lm["variant"]])
    return [int(s) for s in (config.get("bench") or {}).get("seeds") or [0]]
