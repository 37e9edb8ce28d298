"""Tables 3-4 of Brody et al. (2023): SST-2 dev sentences with their unselectable tokens in bold.

A token is marked when its key (its row of the attention input) is unselectable in at least one
layer. The sentences are rendered from the original text through the tokenizer's character
offsets, so a word is bold when any of its pieces is unselectable, whatever the tokenizer.

Each run's counts come from its analysis (:mod:`normbench.run_analyses.sentence_tokens`), computed from its final
checkpoint where that is at hand and kept beside its record in the run archive. A run published before the archive
kept records (its weights are gone) stands in with the counts the published report gave it, as the boards' runs do
(:mod:`normbench.boards.published`); so the report grows by new seeds without losing the old ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from normbench.archive import JudgedClaim, load_record
from normbench.archive.facts import data_fact
from normbench.archive.store import Archive
from normbench.boards.progress import PlannedRun
from normbench.boards.shown import keep_analyses, shown_runs
from normbench.io import atomic_write_json, atomic_write_text, params_digest
from normbench.judge.claims import judge, load_claims
from normbench.publish import files as publish
from normbench.render.claims_view import INTRO, summary_rows
from normbench.run_analyses.sentence_tokens import SENTENCE_TOKENS, render_words, sentence_tokens, summarize
from normbench.tasks import get_task
from normbench.tasks.trust import record_class
from normbench.training.config import load_config
from normbench.training.run.records import git_state, provenance, utc_now
from normbench.training.run.rundir import checkpoint_of

TOKEN_REPORT = "unselectable_tokens.json"  # beside it: unselectable_tokens.md
TABLE3_SHOWN = "table3_shown"  # the report's section holding Table 3's printed sentences


@dataclass(frozen=True)
class TokenRun:
    """One run a token report reads: its counts over every dev sentence (``summary``) and, where its analysis is at
    hand, the analysis itself; ``record`` is ``None`` for a run published before the archive, whose counts are the
    published report's. ``source``: the record it was read from (for a stand-in, the published report's)."""

    task: str
    variant: str
    seed: int
    config_hash: str | None
    summary: dict[str, Any]
    record: dict[str, Any] | None = None
    analysis: dict[str, Any] | None = None
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
    report_sentences = old.get("sentences") or {}
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
    path = Path(run.record_path)
    record = {**load_record(path).to_json(), "record_path": str(path)}
    local = not record.get("archived")
    ckpt = checkpoint_of(record, path.parent) if local else None
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


def sentences_digest(sentences: list[str]) -> str:
    """What names a set of dev sentences (the token analyses' ``sentences`` parameter)."""
    return params_digest({"sentences": sentences})


def finished(path: Path | None) -> bool:
    """Whether ``path`` is the record of a run that is done."""
    return path is not None and Path(path).is_file() and load_record(path).status == "done"


def dev_sentences(run_config: dict[str, Any]) -> list[str]:
    """The dev sentences of the data module of a resolved ``sst2`` config (its ``raw()`` test split)."""
    data = run_config["data"]
    cls = record_class(data.get("class_path"), "data")  # a record's config: registered classes only
    init_args = {**getattr(cls, "LEGACY_INIT_ARGS", {}), **(data.get("init_args") or {})}  # as the run trained
    return cls(**init_args).raw()["test"]["sentence"]


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


def shown_count(config: dict[str, Any]) -> int:
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


def dev_sentence_facts(
    run_config: dict[str, Any], shown: int, load_sentences: Callable[[dict[str, Any]], list[str]] = dev_sentences
) -> DevSentences:
    """The :class:`DevSentences` of a resolved ``sst2`` config. The digest, count and printed sentences are a fact of
    the run archive (:func:`normbench.archive.facts.data_fact`), so a clone without the SST-2 corpus rebuilds the
    report from the archived analyses; the corpus is read only to compute one, and then must give that digest."""
    loaded: list[list[str]] = []

    def texts() -> list[str]:
        if not loaded:
            loaded.append(load_sentences(run_config))
        return loaded[0]

    def compute() -> dict[str, Any]:
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
            run_config = load_record(done).config if done is not None else runs[0].config if runs else config
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
    """The runs :func:`write_token_report` would read, as ``("sst2 <variant>", seed)`` (Table 4) and
    ``("lm <variant>", seed)`` (Table 3) -> config hash. Their analyses are computed here (and cached)."""
    return plan_report(config, runs, plan, archive, old).labels()


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


def shown_block(title: str, what: str, run: TokenRun, sentences: list[str], shown: int) -> dict[str, Any]:
    """The printed part of a table: which run, and its first ``shown`` sentences with their bold words."""
    record = run.record or {}
    lines = [render_words(text, bold) for text, bold in zip(sentences, run.analysis["bold_words"], strict=False)]
    return {
        "title": title,
        "what": what,
        "variant": run.variant,
        "seed": run.seed,
        "config_hash": run.config_hash,
        "run": record.get("log_dir"),
        "summary": run.summary,
        "lines": lines[:shown],
    }


def section(block: dict[str, Any]) -> list[str]:
    """Markdown of a table's printed part (:func:`shown_block`)."""
    summary = block["summary"]
    layers = ", ".join(f"L{i + 1}: {n}" for i, n in enumerate(summary["per_layer"]))
    lines = [
        f"## {block['title']}",
        "",
        block["what"],
        "",
        f"Run `{block['run']}` (variant `{block['variant']}`, seed {block['seed']}, "
        f"config hash `{block['config_hash']}`).",
        "",
        f"Over all {summary['sentences']} dev sentences: {summary['any_layer']} of {summary['tokens']} tokens "
        f"({100 * summary['fraction_any_layer']:.1f}%) are unselectable in at least one layer, in "
        f"{summary['sentences_with_unselectable']} sentences; per layer: {layers}.",
        "",
        f"The first {len(block['lines'])} dev sentences, in file order (tokens unselectable in at least one layer in "
        "**bold**):",
        "",
    ]
    return lines + [f"- {line}" for line in block["lines"]] + [""]


def pick_shown(
    runs: list[TokenRun], seed: int, old_block: dict[str, Any] | None, make: Callable[[TokenRun], dict[str, Any]]
) -> dict[str, Any] | None:
    """The printed part of a table: the run of ``seed`` when its analysis is at hand, else the published report's
    block when it printed a run still read, else the first run with its analysis at hand (``None``: none)."""
    by_seed = {t.seed: t for t in runs}
    if seed in by_seed and by_seed[seed].analysis is not None:
        return make(by_seed[seed])
    if old_block and (t := by_seed.get(int(old_block["seed"]))) and t.config_hash == old_block.get("config_hash"):
        return old_block
    first = next((t for t in runs if t.analysis is not None), None)
    return make(first) if first is not None else None


TABLE4 = (
    "Table 4: BERT-style encoder without LayerNorm",
    "The sst2 task's model with every LayerNorm removed, its own WordPiece tokenizer.",
)


def table3_text(variant: str) -> tuple[str, str]:
    return (
        "Table 3: the language model without scaling",
        f"The lm task's `{variant}` model (projection-only norm in front of attention) on the same sentences, with "
        "its own byte-level BPE tokenizer.",
    )


def write_token_report(
    config: dict[str, Any],
    preset: str,
    out_dir: Path,
    runs: Sequence[PlannedRun],
    plan: Any,
    archive: Archive | None = None,
    load_sentences: Callable[[dict[str, Any]], list[str]] = dev_sentences,
) -> dict[str, Any]:
    """Write ``unselectable_tokens.md`` / ``.json`` from the runs named by ``bench.token_report``.

    Table 4 reads this sweep's runs (``runs``) of the named variant, every seed; its sentences are the named seed's
    (else the first seed's whose analysis is at hand). Table 3 reads the ``lm`` task's own bench, whose runs ``plan``
    (a :data:`normbench.publish.write.RunPlanner`) finds. ``load_sentences(config)`` gives the dev sentences of an
    sst2 config. Runs published before the archive stand in with the counts the report at ``out_dir`` gave them.
    """
    spec = config["bench"]["token_report"]
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
    doc: dict[str, Any] = {
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
        doc["sections"]["table4"] = {
            "record": sources.get(str(block4["seed"])),
            "config_hash": block4["config_hash"],
            "summary": block4["summary"],
            "per_seed": {str(k): v for k, v in sorted(per_seed.items())},
            "records": sources,
            "shown": block4,
        }
        if elsewhere := {str(t.seed): on_sentences(t) for t in reads.table4 if t.sentences != counted_on}:
            doc["sections"]["table4"]["sentences"] = elsewhere
        lines += section(block4)
        lines += seed_table(
            "Table 4 over every seed", "sst2", {spec["variant"]: per_seed}, sorted(per_seed), other, other_text
        )
    lm = spec.get("lm")
    lm_summaries: dict[str, dict[int, dict[str, Any]]] = {}
    if lm:
        for variant, read in reads.table3.items():
            for t in read:
                lm_summaries.setdefault(variant, {})[t.seed] = t.summary
                doc["sections"][f"table3:{variant}:seed{t.seed}"] = {
                    "record": t.source,
                    "config_hash": t.config_hash,
                    "summary": t.summary,
                    **({"sentences": on_sentences(t)} if t.sentences != counted_on else {}),
                }
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


def sentences_of(on: dict[str, Any]) -> dict[str, str | None]:
    """:class:`TokenRun`'s ``sentences`` and ``sentences_text`` from a report's ``{digest, text}`` block."""
    return {"sentences": on.get("digest"), "sentences_text": on.get("text")}


def on_sentences(run: TokenRun) -> dict[str, str | None]:
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


def seed_table(
    title: str,
    task: str,
    summaries: dict[str, dict[int, dict[str, Any]]],
    seeds: list[int],
    other: set[tuple[str, int]] = frozenset(),
    other_text: str = "",
) -> list[str]:
    """Markdown: unselectable dev-sentence tokens of each model of ``task``, one column per seed; ``other``: the
    (variant, seed) runs whose counts a published report made on other dev sentences (marked †)."""
    lines = [
        f"### {title}",
        "",
        f"Tokens unselectable in at least one layer, of all dev-sentence tokens, per {task} seed "
        "(– = no finished run):",
        "",
        f"| {task} model | " + " | ".join(f"seed {s}" for s in seeds) + " |",
        "|---|" + "---|" * len(seeds),
    ]
    for variant, by_seed in summaries.items():
        cells = [
            f"{by_seed[s]['any_layer']} / {by_seed[s]['tokens']} ({100 * by_seed[s]['fraction_any_layer']:.2f}%)"
            + (" †" if (variant, s) in other else "")
            if s in by_seed
            else "–"
            for s in seeds
        ]
        lines.append(f"| `{variant}` | " + " | ".join(cells) + " |")
    if any((v, s) in other for v, by_seed in summaries.items() for s in by_seed):
        lines += [
            "",
            "† published before the run archive kept runs: counted by the published report on other dev sentences"
            + (f" ({other_text})" if other_text else "")
            + ", shown as published; not comparable token for token.",
        ]
    return lines + [""]


def claims_lines(claims: list[dict[str, Any]]) -> list[str]:
    """The report's claims section: the summary table (measured as fractions of tokens), then each claim's details."""
    return ["## Claims", "", INTRO, "", *summary_rows([JudgedClaim.from_json(c) for c in claims])]


def judge_tokens(lm_summaries: dict[str, dict[int, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The report's claims (``brody2023-sst2-tokens``) judged on each lm model's fraction of unselectable tokens,
    seed by seed."""
    variants = {}
    for v, by_seed in lm_summaries.items():
        per_seed = [by_seed[s]["fraction_any_layer"] for s in sorted(by_seed)]
        variants[f"lm/{v}"] = {
            "metrics": {"unselectable_tokens": {"mean": sum(per_seed) / len(per_seed), "per_seed": per_seed}}
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
    lm_summaries: dict[str, dict[int, dict[str, Any]]] = {}
    for key, section in (doc.get("sections") or {}).items():
        if m := re.fullmatch(r"table3:(.+):seed(\d+)", key):
            lm_summaries.setdefault(m[1], {})[int(m[2])] = section["summary"]
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


def rejudged_by() -> dict[str, Any]:
    """When, at which commit and what a re-judging recomputed."""
    return {
        "at": utc_now(),
        **git_state(),
        "what": "the claims, from the per-seed counts above; the counts and the sentences are those of the build",
    }


def finish(
    doc: dict[str, Any],
    lines: list[str],
    lm_summaries: dict[str, dict[int, dict[str, Any]]],
    out_dir: Path,
    old: dict[str, Any] | None = None,
) -> dict[str, Any]:
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
