"""The runs a token report reads: through their analyses (computed, or kept in the run archive), or standing in
with their published counts."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from normbench.archive.store import Archive
from normbench.publish.token_runs import TokenRun, lm_seeds, token_runs
from normbench.sweep.run import planner
from tests.token_reports import ANALYSIS, SENTENCES, Planned, archive_run, dev, no_corpus, summary


def test_table3_reads_every_seed_of_the_lm_bench(tmp_path: Path) -> None:
    assert lm_seeds({"preset": "quick", "variant": "pre/project"}, planner(str(tmp_path))) == [0, 1, 2, 3, 4]
    assert lm_seeds({"preset": "quick", "variant": "pre/project", "seeds": [4]}, planner(str(tmp_path))) == [4]


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


def test_a_rebuild_from_the_archive_alone_reads_every_lm_run_the_published_report_read(tmp_path: Path) -> None:
    """Table 3's runs were published before the archive (their weights are gone): they stand in with their published
    counts, so the report can grow by new seeds without losing them. (Table 4's published runs are of a superseded
    config: its rebuild reads today's runs.)"""
    from normbench.publish.files import read_if_readable
    from normbench.publish.token_runs import plan_report, published_runs
    from normbench.publish.tokens import TOKEN_REPORT

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


def test_the_published_report_names_the_sentences_its_counts_are_on() -> None:
    """The report names its sentences; a stand-in counted on other ones keeps them beside its counts."""
    from normbench.publish.files import read_if_readable
    from normbench.publish.token_runs import published_counts
    from normbench.publish.tokens import TOKEN_REPORT

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
    from normbench.publish.token_runs import on_sentences, published_counts

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
