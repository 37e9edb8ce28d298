"""Data facts in the run archive (normbench.archive.facts): a board's numbers read off a run's data, kept beside its
runs so that a clone without the corpus builds the same board."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from normbench.archive import facts
from normbench.judge import collapse
from normbench.judge.chance import columns, null

DATA = {"class_path": "normbench.data.lm.LMDataModule", "init_args": {"data_dir": "/nowhere"}}
PARAMS = {"data": DATA}


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A committed facts folder and this machine's cache, both empty; nothing read yet."""
    committed, cache = tmp_path / "results" / "archive" / facts.FACTS, tmp_path / "cache"
    monkeypatch.setenv("NORMBENCH_CACHE", str(cache))
    monkeypatch.setattr(facts, "checkout_results", lambda: tmp_path / "results")
    monkeypatch.setattr(facts, "READ", {})
    return committed, cache / facts.FACTS


def test_a_fact_is_computed_once_cached_and_archived_with_a_published_board(dirs: tuple[Path, Path]) -> None:
    committed, cache = dirs
    calls = []
    assert facts.data_fact("unigram_entropy", DATA, lambda: calls.append(1) or 6.4383) == 6.4383
    assert facts.data_fact("unigram_entropy", DATA, lambda: calls.append(1) or 0.0) == 6.4383
    assert calls == [1] and [p.name for p in cache.iterdir()] == [facts.fact_name("unigram_entropy", PARAMS)]
    results = committed.parents[1]
    written = facts.archive_facts(results)
    assert [p.parent for p in written] == [committed] and facts.archive_facts(results) == []  # once
    doc = json.loads(written[0].read_text(encoding="utf-8"))
    assert doc == {"kind": "unigram_entropy", "params": PARAMS, "value": 6.4383}


def test_the_archived_fact_is_read_first_and_another_params_fact_is_not_taken(dirs: tuple[Path, Path]) -> None:
    committed, _ = dirs
    committed.mkdir(parents=True)
    name = facts.fact_name("unigram_entropy", PARAMS)
    (committed / name).write_text(json.dumps({"kind": "unigram_entropy", "params": PARAMS, "value": 5.0}))
    assert facts.data_fact("unigram_entropy", DATA, lambda: pytest.fail("computed")) == 5.0
    other = {**DATA, "init_args": {"data_dir": "/elsewhere"}}
    (committed / facts.fact_name("unigram_entropy", {"data": other})).write_text(
        json.dumps({"kind": "unigram_entropy", "params": PARAMS, "value": 5.0})  # a file that is not its own
    )
    assert facts.data_fact("unigram_entropy", other, lambda: 7.0) == 7.0


def test_facts_of_generated_data_are_not_archived(dirs: tuple[Path, Path]) -> None:
    generated = {"class_path": "normbench.data.majority.MajorityDataModule", "init_args": {"num_sequences": 10}}
    assert facts.data_fact("set_sizes", generated, lambda: [[50, 10]], version=1) == [[50, 10]]
    assert facts.READ == {} and facts.archive_facts(dirs[0].parents[1]) == []


def test_a_corpus_that_is_not_here_is_read_from_the_archive(dirs: tuple[Path, Path]) -> None:
    """The collapse baseline and the key-set sizes of runs whose data are not on this machine: from the archive."""
    committed, _ = dirs
    committed.mkdir(parents=True)
    data = {
        "class_path": "normbench.data.sst2.SST2DataModule",
        "init_args": {"data_dir": "/nowhere", "source": "local"},
    }
    entropy = {"data": data}
    sizes = {"data": data, "version": null.VERSION}
    for kind, params, value in (("unigram_entropy", entropy, 6.25), ("set_sizes", sizes, [[12, 2], [9, 1]])):
        doc = {"kind": kind, "params": params, "value": value}
        (committed / facts.fact_name(kind, params)).write_text(json.dumps(doc), encoding="utf-8")
    collapse._unigram_entropy.cache_clear()
    assert collapse.unigram_entropy_of_run({"config": {"data": data}}) == 6.25
    assert columns.set_sizes_from_data({"data": data}) == [12, 12, 9]
    missing = {"data": {**data, "init_args": {"data_dir": "/nowhere/else", "source": "local"}}}
    with pytest.raises(ValueError, match="data.data_dir"):  # neither archived nor here: said, never silent
        collapse.unigram_entropy_of_run({"config": missing})
    collapse._unigram_entropy.cache_clear()


@given(st.lists(st.integers(1, 5), max_size=40))
def test_run_lengths_round_trip(values: list[int]) -> None:
    pairs = columns.run_lengths(values)
    assert columns.from_run_lengths(pairs) == values
    assert all(a[0] != b[0] for a, b in zip(pairs, pairs[1:], strict=False))


def test_every_archived_run_of_a_corpus_has_its_board_facts_in_the_archive() -> None:
    """A clone without WikiText-2 or SST-2 rebuilds every board of archived runs: the facts those boards read off
    the data (the LM's collapse baseline, SST-2's key-set sizes) are committed beside the runs."""
    import gzip

    results = Path(__file__).resolve().parents[2] / "results"
    needed = {"lm": "unigram_entropy", "sst2": "set_sizes"}
    missing = set()
    for task, kind in needed.items():
        for path in sorted((results / "archive" / task).glob("*/seed*/*/record.json.gz")):
            data = json.loads(gzip.decompress(path.read_bytes()))["config"]["data"]
            params = {"data": data, **({"version": null.VERSION} if kind == "set_sizes" else {})}
            name = facts.fact_name(kind, params)
            if facts.read_fact(results / "archive" / facts.FACTS / name, kind, params) is None:
                missing.add(f"{task} {kind} ({path.parts[-4]})")
    assert not missing, f"data facts not archived: {sorted(missing)}"
