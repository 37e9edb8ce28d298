"""Tables 3-4 of Brody et al. (2023): SST-2 dev sentences with their unselectable tokens in bold.

A token is marked when its key (its row of the attention input) is unselectable in at least one
layer. The sentences are rendered from the original text through the tokenizer's character
offsets, so a word is bold when any of its pieces is unselectable, whatever the tokenizer.

Each run's counts come from its analysis (:mod:`normbench.run_analyses.sentence_tokens`), computed from its final
checkpoint where that is at hand and kept beside its record in the run archive. A run published before the archive
kept records (its weights are gone) stands in with the counts the published report gave it, as the boards' runs do
(:mod:`normbench.boards.published`); so the report grows by new seeds without losing the old ones.

This module writes and re-judges the report; :mod:`normbench.publish.token_runs` finds the runs it reads,
:mod:`normbench.publish.token_sentences` the dev sentences they are counted on, and
:mod:`normbench.publish.token_markdown` renders its Markdown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from normbench.archive.board import Rejudged
from normbench.archive.record import Provenance
from normbench.archive.store import Archive
from normbench.boards.progress import PlannedRun
from normbench.io import atomic_write_json, atomic_write_text
from normbench.judge.claims import judge, load_claims
from normbench.judge.entries import JudgedEntry
from normbench.judge.rows import VariantRow
from normbench.publish import files as publish
from normbench.publish.files import Document
from normbench.publish.settings import Config
from normbench.publish.token_markdown import (
    TABLE4,
    ShownBlock,
    claims_lines,
    pick_shown,
    section,
    seed_table,
    shown_block,
    table3_text,
)
from normbench.publish.token_runs import (
    SentencesBlock,
    TokenReportSpec,
    on_sentences,
    plan_report,
    published_counts,
    sentence_loader,
    token_runs,
)
from normbench.publish.token_sentences import dev_sentences, shown_count
from normbench.run_analyses.sentence_tokens import SENTENCE_TOKENS, TokenSummary
from normbench.tasks import get_task
from normbench.training.config import load_config
from normbench.training.run.records import git_state, provenance, utc_now

TOKEN_REPORT = "unselectable_tokens.json"  # beside it: unselectable_tokens.md
TABLE3_SHOWN = "table3_shown"  # the report's section holding Table 3's printed sentences


class Table4Section(TypedDict):
    """A token report's ``table4`` section: the printed run's ``record`` and ``config_hash`` with its ``summary``, every
    seed's counts (``per_seed``) and record (``records``), the printed block (``shown``) and, for the stand-ins counted
    on other dev sentences, those sentences (``sentences``: seed -> block)."""

    record: str | None
    config_hash: str | None
    summary: TokenSummary
    per_seed: dict[str, TokenSummary]
    records: dict[str, str | None]
    shown: ShownBlock
    sentences: NotRequired[dict[str, SentencesBlock]]


class Table3Section(TypedDict):
    """A token report's ``table3:<variant>:seed<k>`` section: that run's ``record``, ``config_hash`` and counts
    (``summary``) and, for a stand-in counted on other dev sentences, those ``sentences``."""

    record: str | None
    config_hash: str | None
    summary: TokenSummary
    sentences: NotRequired[SentencesBlock]


class NotRead(TypedDict):
    """A finished run a token report could not read: its ``run`` (task and variant), ``seed`` and ``why``."""

    run: str
    seed: int
    why: str


class TokenReport(TypedDict):
    """``unselectable_tokens.json`` as :func:`write_token_report` writes it: where it was built (``provenance``), the
    dev ``sentences`` its counts are on, its ``sections`` (``table4``, one ``table3:<variant>:seed<k>`` per Table 3
    run, and ``table3_shown``: Table 3's printed block), its ``claims``, the finished runs it could not read
    (``not_read``) and, after :func:`rejudge_token_report`, when its claims were judged again (``rejudged``)."""

    provenance: Provenance
    sentences: SentencesBlock | None
    sections: dict[str, Table4Section | Table3Section | ShownBlock]
    claims: list[JudgedEntry]
    not_read: NotRequired[list[NotRead]]
    rejudged: NotRequired[Rejudged]


def write_token_report(
    config: Config,
    preset: str | None,
    out_dir: Path,
    runs: Sequence[PlannedRun],
    plan: Any,
    archive: Archive | None = None,
    load_sentences: Callable[[Config], list[str]] = dev_sentences,
) -> TokenReport | Document:
    """Write ``unselectable_tokens.md`` / ``.json`` from the runs named by ``bench.token_report``.

    Table 4 reads this sweep's runs (``runs``) of the named variant, every seed; its sentences are the named seed's
    (else the first seed's whose analysis is at hand). Table 3 reads the ``lm`` task's own bench, whose runs ``plan``
    (a :data:`normbench.publish.write.RunPlanner`) finds. ``load_sentences(config)`` gives the dev sentences of an
    sst2 config. Runs published before the archive stand in with the counts the report at ``out_dir`` gave them.
    Returns the report written, or the published one where this build would say the same (:func:`finish`).
    """
    spec: TokenReportSpec = config["bench"]["token_report"]
    shown = shown_count(config)
    path = Path(out_dir) / TOKEN_REPORT
    old = publish.read_if_readable(path)
    reads = plan_report(config, runs, plan, archive, old, load_sentences)
    old_sections = (old or {}).get("sections") or {}
    every = [*reads.table4, *(t for runs_ in reads.table3.values() for t in runs_)]
    analysed = any(t.analysis is not None for t in every)
    counted_on = reads.sentences().digest if analysed else ((old or {}).get("sentences") or {}).get("digest")
    others = [t for t in every if t.sentences != counted_on]  # stand-ins counted on other sentences
    other = {(t.variant, t.seed) for t in others}
    other_text = "; ".join(dict.fromkeys(t.sentences_text for t in others if t.sentences_text))
    doc: TokenReport = {
        "provenance": provenance(),
        "sentences": (
            {
                "digest": counted_on,
                "n": reads.sentences().n,
                "text": "SST-2 dev sentences, text_normalization "
                + str(((config.get("data") or {}).get("init_args") or {}).get("text_normalization")),
            }
            if analysed
            else (old or {}).get("sentences")
        ),
        "sections": {},
        "claims": [],
    }
    lines = [
        "# Unselectable tokens on SST-2 dev sentences (Brody et al. 2023, Tables 3-4)",
        "",
        "Generated by `normbench leaderboard sst2` from the runs' token analyses (computed from their final",
        "checkpoints; do not edit by hand). A token is unselectable in a layer when its key (its row of that",
        "layer's attention input) lies in the convex hull of the other keys of its sentence, so no query can give it",
        "the top score.",
        "",
    ]
    block4 = pick_shown(
        reads.table4,
        int(spec["seed"]),
        (old_sections.get("table4") or {}).get("shown"),
        lambda t: shown_block(*TABLE4, t, reads.sentences().shown, shown),
    )
    if block4 is None:
        lines += ["## Table 4", "", f"Not run: no finished `sst2` run of `{spec['variant']}`.", ""]
    else:
        per_seed = {t.seed: t.summary for t in reads.table4}
        sources = {str(t.seed): t.source for t in reads.table4}
        table4: Table4Section = {
            "record": sources.get(str(block4["seed"])),
            "config_hash": block4["config_hash"],
            "summary": block4["summary"],
            "per_seed": {str(k): v for k, v in sorted(per_seed.items())},
            "records": sources,
            "shown": block4,
        }
        if elsewhere := {str(t.seed): on_sentences(t) for t in reads.table4 if t.sentences != counted_on}:
            table4["sentences"] = elsewhere
        doc["sections"]["table4"] = table4
        lines += section(block4)
        lines += seed_table(
            "Table 4 over every seed", "sst2", {spec["variant"]: per_seed}, sorted(per_seed), other, other_text
        )
    lm = spec.get("lm")
    lm_summaries: dict[str, dict[int, TokenSummary]] = {}
    if lm:
        for variant, read in reads.table3.items():
            for t in read:
                lm_summaries.setdefault(variant, {})[t.seed] = t.summary
                table3: Table3Section = {"record": t.source, "config_hash": t.config_hash, "summary": t.summary}
                if t.sentences != counted_on:
                    table3["sentences"] = on_sentences(t)
                doc["sections"][f"table3:{variant}:seed{t.seed}"] = table3
        block3 = pick_shown(
            reads.table3.get(lm["variant"]) or [],
            min(reads.lm_seeds, default=0),
            old_sections.get(TABLE3_SHOWN),
            lambda t: shown_block(*table3_text(lm["variant"]), t, reads.sentences().shown, shown),
        )
        if block3 is not None:
            doc["sections"][TABLE3_SHOWN] = block3
            lines += section(block3)
        if lm_summaries:
            lines += seed_table("Table 3 over every seed", "lm", lm_summaries, reads.lm_seeds, other, other_text)
        else:
            lines += [
                "## Table 3",
                "",
                f"Not run: no finished `lm` runs (preset `{lm['preset']}`, seeds {reads.lm_seeds}); "
                "run `nox -s bench-lm` first.",
                "",
            ]
    if reads.missing:
        doc["not_read"] = [{"run": label, "seed": seed, "why": why} for (label, seed), why in reads.missing]
        lines += ["Finished runs the report could not read (shown as –):", ""]
        lines += [f"- `{label}` seed {seed}: {why}" for (label, seed), why in reads.missing] + [""]
    return finish(doc, lines, lm_summaries, out_dir, old)


def keep_token_analyses(
    plan: Any, archive: Archive, results_dir: str | Path, task: str, preset: str, seeds: list[int]
) -> tuple[int, int]:
    """Of ``task``'s runs at ``preset`` and ``seeds`` (a bake's), those the ``sst2`` token report reads (Table 4's
    sst2 variant at the sst2 bench's preset; Table 3's lm variants at its lm preset): compute their token analyses
    where their final checkpoints are here and keep each beside its replicate in the run archive, so that the report
    is rebuilt later from the archive, on any machine. Returns (runs read, analyses now in the archive)."""
    sst2_preset = load_config("sst2").get("default_preset")
    config, sst2_runs = plan("sst2", sst2_preset, None, None)
    spec = (config.get("bench") or {}).get("token_report")
    if not spec:
        return 0, 0
    lm = spec.get("lm") or {}
    table = get_task(task).token_table
    if table == 4 and preset == sst2_preset:
        variants = [spec["variant"]]
    elif table == 3 and preset == lm.get("preset"):
        variants = [v for v in (lm.get("variant"), lm.get("reference")) if v]
    else:
        return 0, 0
    _, planned = plan(task, preset, seeds, variants)
    published = published_counts(publish.read_if_readable(Path(results_dir) / "sst2" / TOKEN_REPORT), spec["variant"])
    sentences = sentence_loader(config, [r for r in sst2_runs if r.variant == spec["variant"]], archive)
    read, _ = token_runs(task, planned, archive, published, sentences)
    kept = sum(
        1
        for t in read
        if t.analysis is not None
        and (rep := archive.canonical(task, t.config_hash or "", t.seed)) is not None
        and (rep.path / SENTENCE_TOKENS).is_file()
    )
    return len(read), kept


def judge_tokens(lm_summaries: dict[str, dict[int, TokenSummary]]) -> list[JudgedEntry]:
    """The report's claims (``brody2023-sst2-tokens``) judged on each lm model's fraction of unselectable tokens,
    seed by seed."""
    variants: dict[str, VariantRow] = {}
    for v, by_seed in lm_summaries.items():
        fractions = [by_seed[s]["fraction_any_layer"] for s in sorted(by_seed)]
        per_seed: list[float | None] = list(fractions)
        variants[f"lm/{v}"] = {
            "metrics": {"unselectable_tokens": {"mean": sum(fractions) / len(fractions), "per_seed": per_seed}}
        }
    return [judge(c, variants) for c in load_claims("brody2023-sst2-tokens")]


def rejudge_token_report(folder: Path) -> list[str] | None:
    """Judge a published token report's claims again from the per-seed counts it holds (today's claims and rules;
    nothing is computed from weights), rewriting its claims and its Markdown's claims section where they changed.
    Returns the changed verdicts (``[]``: none changed) or ``None`` where the folder holds no token report; one that
    cannot be read is a one-line ``ValueError``."""
    path, md_path = Path(folder) / TOKEN_REPORT, Path(folder) / "unselectable_tokens.md"
    doc = publish.read_if_readable(path)
    if doc is None and path.exists():
        raise ValueError(f"report: {path} exists but is unreadable (not a JSON object); restore it")
    if doc is None or not md_path.is_file():
        return None
    lm_summaries: dict[str, dict[int, TokenSummary]] = {}
    for key, report_section in (doc.get("sections") or {}).items():
        if m := re.fullmatch(r"table3:(.+):seed(\d+)", key):
            lm_summaries.setdefault(m[1], {})[int(m[2])] = report_section["summary"]
    claims = judge_tokens(lm_summaries)
    old = {c["id"]: c for c in doc.get("claims") or []}
    if claims == doc.get("claims"):
        return []
    head, sep, _ = md_path.read_text(encoding="utf-8").partition("## Claims\n")
    if not sep:
        raise ValueError(f"{md_path}: no '## Claims' section; rebuild it with `normbench leaderboard sst2`")
    atomic_write_json(path, {**doc, "claims": claims, "rejudged": rejudged_by()})
    atomic_write_text(md_path, head + "\n".join(claims_lines(claims)) + "\n")
    return [
        f"{c['id']}: {old[c['id']]['verdict']} -> {c['verdict']}"
        for c in claims
        if c["id"] in old and old[c["id"]]["verdict"] != c["verdict"]
    ]


def rejudged_by() -> Rejudged:
    """When, at which commit and what a re-judging recomputed."""
    git = git_state()
    return {
        "at": utc_now(),
        "git_commit": git["git_commit"],
        "dirty": git["dirty"],
        "what": "the claims, from the per-seed counts above; the counts and the sentences are those of the build",
    }


def finish(
    doc: TokenReport,
    lines: list[str],
    lm_summaries: dict[str, dict[int, TokenSummary]],
    out_dir: Path,
    old: Document | None = None,
) -> TokenReport | Document:
    """Judge the Table 3 claim over every lm seed and write both files atomically (not again when they would say
    the same as ``old``, the published report: only when and where they were built would differ)."""
    claims = judge_tokens(lm_summaries)
    doc["claims"] = claims
    lines += claims_lines(claims)
    if old is not None and publish.says_the_same(old, doc, ("provenance", "rejudged")):
        print(f"normbench: {out_dir / TOKEN_REPORT} is unchanged (same runs, counts and verdicts)")
        return old
    atomic_write_json(out_dir / TOKEN_REPORT, doc)
    atomic_write_text(out_dir / "unselectable_tokens.md", "\n".join(lines) + "\n")
    return doc
