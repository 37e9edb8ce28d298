"""Bold rendering of unselectable tokens (Tables 3-4) and the per-sentence counts."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from normbench.archive.store import Archive
from normbench.io import params_digest
from normbench.publish.tokens import (
    DevSentences,
    TokenRun,
    dev_sentence_facts,
    finish,
    lm_seeds,
    pick_shown,
    seed_table,
    sentences_digest,
    token_runs,
)
from normbench.run_analyses.sentence_tokens import (
    SENTENCE_TOKENS,
    SENTENCE_TOKENS_VERSION,
    bold_words,
    per_sentence,
    render_words,
    summarize,
    word_spans,
)
from normbench.sweep.run import planner
from normbench.training.config import load_config
from tests.factories import make_record


def render_bold(text: str, offsets: list[tuple[int, int]], marked: list[bool]) -> str:
    return render_words(text, bold_words(text, offsets, marked))


def test_word_spans() -> None:
    assert word_spans(" it 's  fun ") == [(1, 3), (4, 6), (8, 11)]


def test_a_word_is_bold_when_any_piece_is_marked() -> None:
    text = "a roaring success , really"
    # WordPiece-like pieces: "roar" + "##ing" share the word "roaring"
    offsets = [(0, 0), (0, 1), (2, 6), (6, 9), (10, 17), (18, 19), (20, 26), (0, 0)]
    marked = [False, False, False, True, True, False, False, False]
    assert render_bold(text, offsets, marked) == "a **roaring** **success** , really"


def test_empty_spans_are_ignored() -> None:
    assert render_bold("fun", [(0, 0), (0, 3)], [True, False]) == "fun"


@dataclass
class Encoding:
    offsets: list[tuple[int, int]] = field(default_factory=list)


def test_summarize_counts_sentence_tokens_only() -> None:
    results = [
        {"per_layer": [[True, True, False], [False, False, True]], "content": [False, True, True]},
        {"per_layer": [[False, False], [False, False]], "content": [True, True]},
    ]
    encodings = [Encoding([(0, 0), (0, 2), (3, 5)]), Encoding([(0, 1), (2, 3)])]
    analysis = per_sentence(["ab cd", "e f"], encodings, results)
    assert analysis["bold_words"] == [[0, 1], []]  # the [CLS]-like first token is marked but not the sentence's
    s = summarize(analysis)
    assert s["tokens"] == 4 and s["per_layer"] == [1, 1] and s["any_layer"] == 2
    assert s["fraction_any_layer"] == 0.5 and s["sentences_with_unselectable"] == 1 and s["sentences"] == 2


def summary(bad: int, tokens: int = 100) -> dict:
    return {
        "sentences": 10,
        "tokens": tokens,
        "per_layer": [bad, 0],
        "any_layer": bad,
        "fraction_any_layer": bad / tokens,
        "sentences_with_unselectable": min(bad, 10),
    }


def test_table3_is_judged_over_every_lm_seed(tmp_path: Path) -> None:
    summaries = {
        "pre/project": {0: summary(3), 1: summary(4), 2: summary(3)},
        "pre/both": {0: summary(0), 1: summary(0), 2: summary(0)},
    }
    doc = finish({"sections": {}}, [], summaries, tmp_path)
    (claim,) = doc["claims"]
    assert claim["per_seed"] == {"without_scaling": [0.03, 0.04, 0.03], "with_scaling": [0.0, 0.0, 0.0]}
    # positive and zero as the paper says, but no random-key null stands beside a token's any-layer fraction: an
    # existence claim is reproduced only above chance, so this one is at most inconclusive
    assert claim["verdict"] == "inconclusive" and claim["against_null"]["null"] is None
    md = (tmp_path / "unselectable_tokens.md").read_text()
    assert "0.03 / 0.04 / 0.03" in md and "| normbench |" not in md and "| paper |" in md


def test_one_lm_seed_is_inconclusive(tmp_path: Path) -> None:
    doc = finish({"sections": {}}, [], {"pre/project": {0: summary(3)}, "pre/both": {0: summary(0)}}, tmp_path)
    assert doc["claims"][0]["verdict"] == "inconclusive"


def test_table3_lists_each_seed_and_marks_missing_ones() -> None:
    lines = seed_table("Table 3 over every seed", "lm", {"pre/project": {0: summary(3), 2: summary(1)}}, [0, 1, 2])
    assert "| `pre/project` | 3 / 100 (3.00%) | – | 1 / 100 (1.00%) |" in lines


def test_table3_reads_every_seed_of_the_lm_bench(tmp_path: Path) -> None:
    assert lm_seeds({"preset": "quick", "variant": "pre/project"}, planner(str(tmp_path))) == [0, 1, 2, 3, 4]
    assert lm_seeds({"preset": "quick", "variant": "pre/project", "seeds": [4]}, planner(str(tmp_path))) == [4]


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


def test_an_archived_run_is_read_through_its_kept_analysis_without_its_weights(tmp_path: Path) -> None:
    """A rebuild from the archive alone (a fresh clone): the counts come from sentence_tokens.json."""
    archive = Archive(tmp_path)
    archive_run(tmp_path, 3, ANALYSIS)
    archive_run(tmp_path, 4, None)  # archived before its analysis was computed: not read, never a crash
    archive_run(tmp_path, 5, ANALYSIS, sentences=["other"])  # computed on other sentences: not read
    planned = [Planned("none/none", seed, None, "h-none") for seed in (3, 4, 5)]
    (run,), missing = token_runs("sst2", planned, archive, {}, lambda: dev(SENTENCES))
    assert run.seed == 3 and run.analysis == {**run.analysis, **ANALYSIS} and run.source.endswith("record.json.gz")
    assert run.summary["any_layer"] == 1 and run.summary["tokens"] == 4 and run.summary["per_layer"] == [1, 0]
    assert [(label, why.split(" (")[0]) for label, why in missing] == [
        (("sst2 none/none", 4), "the run archive keeps no token analysis of it"),
        (
            ("sst2 none/none", 5),
            "its archived token analysis was computed on other dev sentences or by another version",
        ),
    ]


def test_a_local_run_without_its_checkpoint_is_read_from_the_archive_else_named(tmp_path: Path) -> None:
    archive = Archive(tmp_path)
    archived = archive_run(tmp_path, 3, ANALYSIS)
    record = json.loads(gzip.decompress(archived.read_bytes()))
    local = tmp_path / "runs" / "seed3" / "record.json"
    local.parent.mkdir(parents=True)
    local.write_text(json.dumps(record))  # the canonical replicate's run, its checkpoint deleted since
    (run,), missing = token_runs(
        "sst2", [Planned("none/none", 3, local, "h-none")], archive, {}, lambda: dev(SENTENCES)
    )
    assert run.summary["any_layer"] == 1 and run.source == str(archived) and missing == []
    other = tmp_path / "runs" / "seed6" / "record.json"
    other.parent.mkdir(parents=True)
    other.write_text(json.dumps({**record, "seed": 6, "checkpoint": None}))
    read, missing = token_runs("sst2", [Planned("none/none", 6, other, "h-none")], archive, {}, lambda: dev(SENTENCES))
    assert read == [] and missing == [(("sst2 none/none", 6), "its record names no final checkpoint")]


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
    from normbench.publish.tokens import TOKEN_REPORT, shown_count

    results = Path(__file__).resolve().parents[2] / "results"
    report = json.loads((results / "sst2" / TOKEN_REPORT).read_text())
    facts = [json.loads(p.read_text()) for p in (results / "archive" / "data-facts").glob("dev_sentences-*.json")]
    (fact,) = [f for f in facts if f["value"]["digest"] == report["sentences"]["digest"]]
    assert fact["value"]["n"] == report["sentences"]["n"] and fact["params"]["shown"] == shown_count(
        load_config("sst2")
    )
    printed = [line.replace("**", "") for line in report["sections"]["table4"]["shown"]["lines"]]
    assert printed == [" ".join(text.split()) for text in fact["value"]["shown"][: len(printed)]]


def test_a_run_published_before_the_archive_stands_in_with_its_published_counts(tmp_path: Path) -> None:
    archive = Archive(tmp_path)
    (tmp_path / "archive" / "sst2").mkdir(parents=True)
    (tmp_path / "archive" / "sst2" / "published.json").write_text(json.dumps({"runs": {"h-none": [0]}}))
    published = {("sst2", "none/none", 0): TokenRun("sst2", "none/none", 0, "h-none", summary(7))}

    def nope() -> list[str]:
        raise AssertionError("a stand-in needs no sentences")

    planned = [Planned("none/none", 0, tmp_path / "runs" / "absent.json", "h-none")]
    (run,), _ = token_runs("sst2", planned, archive, published, nope)
    assert run.record is None and run.summary == summary(7)
    other = {("sst2", "none/none", 0): TokenRun("sst2", "none/none", 0, "h-other", summary(7))}
    read, missing = token_runs("sst2", planned, archive, other, nope)  # counts of another config never stand in
    assert read == [] and "the published report has no counts of it" in missing[0][1]


def test_the_printed_sentences_come_from_the_named_seed_else_the_published_block_else_the_first_seed() -> None:
    analysed = TokenRun("sst2", "none/none", 3, "h", summary(1), {"log_dir": "runs/x"}, ANALYSIS)
    stand_in = TokenRun("sst2", "none/none", 0, "h", summary(2))
    old = {"seed": 0, "config_hash": "h", "lines": ["as published"]}
    make = lambda t: {"seed": t.seed}  # noqa: E731
    assert pick_shown([stand_in, analysed], 3, old, make) == {"seed": 3}
    assert pick_shown([stand_in, analysed], 0, old, make) is old
    assert pick_shown([stand_in, analysed], 0, {**old, "config_hash": "other"}, make) == {"seed": 3}
    assert pick_shown([stand_in], 0, None, make) is None


def test_a_rebuild_from_the_archive_alone_reads_every_lm_run_the_published_report_read(tmp_path: Path) -> None:
    """Table 3's runs were published before the archive (their weights are gone): they stand in with their published
    counts, so the report can grow by new seeds without losing them. (Table 4's published runs are of a superseded
    config: its rebuild reads today's runs.)"""
    from normbench.publish.files import read_if_readable
    from normbench.publish.tokens import TOKEN_REPORT, plan_report, published_runs

    results = Path(__file__).resolve().parents[2] / "results"
    plan = planner(str(tmp_path / "runs"))
    config, runs = plan("sst2", None, None, None)
    old = read_if_readable(results / "sst2" / TOKEN_REPORT)
    assert old is not None
    sections = old["sections"]
    lm = {  # the runs published before the archive: their record is a run folder's, not the archive's
        k: v
        for k, v in published_runs(old, config).items()
        if k[0].startswith("lm ") and sections[f"table3:{k[0][3:]}:seed{k[1]}"]["record"].startswith("runs/")
    }
    read = plan_report(config, runs, plan, Archive(results), old, no_corpus)
    assert len(lm) == 6 and set(lm) <= set(read.labels())
    by_seed = {t.label: t.summary for runs_ in read.table3.values() for t in runs_}
    assert all(by_seed[k] == old["sections"][f"table3:{k[0][3:]}:seed{k[1]}"]["summary"] for k in lm)


def test_the_committed_token_report_holds_todays_judgement_of_its_counts(tmp_path: Path) -> None:
    """`normbench rejudge results/sst2` judges Tables 3-4's claims again from the counts the report holds; on the
    committed report it changes nothing, and on one judged by an older rule it rewrites the claims section only."""
    import shutil

    from normbench.publish.tokens import TOKEN_REPORT, rejudge_token_report

    results = Path(__file__).resolve().parents[2] / "results" / "sst2"
    for name in (TOKEN_REPORT, "unselectable_tokens.md"):
        shutil.copy(results / name, tmp_path / name)
    assert rejudge_token_report(tmp_path) == []
    assert (tmp_path / TOKEN_REPORT).read_bytes() == (results / TOKEN_REPORT).read_bytes()
    doc = json.loads((results / TOKEN_REPORT).read_text())
    doc["claims"][0]["rule"] = "an older rule"
    (tmp_path / TOKEN_REPORT).write_text(json.dumps(doc))
    md = (results / "unselectable_tokens.md").read_text()
    assert rejudge_token_report(tmp_path) == []  # the same verdict, restated
    assert (tmp_path / "unselectable_tokens.md").read_text() == md
    assert (
        json.loads((tmp_path / TOKEN_REPORT).read_text())["claims"]
        == json.loads(results.joinpath(TOKEN_REPORT).read_text())["claims"]
    )
    assert rejudge_token_report(tmp_path / "absent") is None


def test_counts_a_published_report_made_on_other_sentences_are_marked() -> None:
    """The published Table 3 was counted on GLUE's dev text as read; today's runs read it normalised: a seed table
    mixing the two marks the old counts and says on what they were made."""
    lines = seed_table(
        "Table 3 over every seed", "lm", {"pre/project": {0: summary(3), 3: summary(4)}}, [0, 3], {("pre/project", 0)},
        "text_normalization none",
    )  # fmt: skip
    assert "| `pre/project` | 3 / 100 (3.00%) † | 4 / 100 (4.00%) |" in lines
    assert any("other dev sentences (text_normalization none)" in line for line in lines)
    assert not any("†" in line for line in seed_table("t", "lm", {"pre/project": {0: summary(3)}}, [0]))


def test_the_published_report_names_the_sentences_its_counts_are_on() -> None:
    """The report names its sentences; a stand-in counted on other ones keeps them beside its counts."""
    from normbench.publish.files import read_if_readable
    from normbench.publish.tokens import TOKEN_REPORT, published_counts

    doc = read_if_readable(Path(__file__).resolve().parents[2] / "results" / "sst2" / TOKEN_REPORT)
    assert doc["sentences"]["n"] == 872 and doc["sentences"]["digest"]
    runs = published_counts(doc, "none/none")
    for key, section in doc["sections"].items():
        if key.startswith("table3:") and "sentences" in section:
            run = runs[("lm", key.split(":")[1], int(key.rsplit("seed", 1)[1]))]
            assert run.sentences == section["sentences"]["digest"] != doc["sentences"]["digest"]


def test_a_stand_in_stays_marked_through_every_later_rebuild() -> None:
    """Counts made on other sentences keep those sentences in the report they are copied into, so the next
    rebuild, whose published report is that one, still marks them (and says on what they were made)."""
    from normbench.publish.tokens import on_sentences, published_counts

    legacy = TokenRun("lm", "pre/project", 0, "h", summary(3), sentences="old", sentences_text="text as read")
    rebuilt = {
        "sentences": {"digest": "new", "text": "normalised"},
        "sections": {
            "table3:pre/project:seed0": {"config_hash": "h", "summary": summary(3), "sentences": on_sentences(legacy)},
            "table3:pre/project:seed3": {"config_hash": "h", "summary": summary(4)},
        },
    }
    runs = published_counts(rebuilt, "none/none")
    assert runs[("lm", "pre/project", 0)].sentences == "old"
    assert runs[("lm", "pre/project", 0)].sentences_text == "text as read"
    assert runs[("lm", "pre/project", 3)].sentences == "new"
