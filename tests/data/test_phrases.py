"""SST-2's training phrases: whole sentences and the held-out split (normbench.data.phrases), and the data module's
``holdout`` built on it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from normbench.data.phrases import hold_out, whole_sentences, word_runs
from normbench.data.sst2 import PIPELINE_VERSION, SST2DataModule
from normbench.io import texts_digest
from tests.sst2_corpus import write_sst2

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "sst2"


def treebank(sentences: list[list[str]]) -> dict[str, list]:
    """A treebank-like training split: every sentence with all its contiguous runs of words, as SST's parses give."""
    phrases = list(dict.fromkeys(run for words in sentences for run in word_runs(words, proper=False)))
    return {"sentence": phrases, "label": [len(p) % 2 for p in phrases]}


def test_whole_sentences_are_the_phrases_no_other_phrase_contains() -> None:
    phrases = ["a b c", "a b", "b c", "d e", "d", "c", "a  b c"]
    assert whole_sentences(phrases) == ["a b c", "d e"]


words = st.lists(st.sampled_from("the a film is dull great not very".split()), min_size=2, max_size=7)


@settings(max_examples=40, deadline=None)
@given(sentences=st.lists(words, min_size=3, max_size=8), count=st.integers(1, 2), order=st.randoms())
def test_no_kept_phrase_lies_inside_a_held_out_sentence(sentences: list, count: int, order: random.Random) -> None:
    split = treebank(sentences)
    whole = whole_sentences(split["sentence"])
    if count >= len(whole):
        with pytest.raises(ValueError, match="data.holdout"):
            hold_out(split, count)
        return
    kept, held = hold_out(split, count)
    assert len(held["sentence"]) == count and set(held["sentence"]) <= set(whole)
    inside = {run for s in held["sentence"] for run in word_runs(s.split(), proper=False)}
    assert not inside & set(kept["sentence"])
    assert len(kept["sentence"]) + len(inside & set(split["sentence"])) == len(split["sentence"])
    label = dict(zip(split["sentence"], split["label"], strict=True))
    assert held["label"] == [label[s] for s in held["sentence"]]
    assert [label[p] for p in kept["sentence"]] == kept["label"]
    shuffled = list(zip(split["sentence"], split["label"], strict=True))
    order.shuffle(shuffled)
    again = {"sentence": [s for s, _ in shuffled], "label": [y for _, y in shuffled]}
    assert hold_out(again, count)[1] == held  # the same sentences whatever the file's order


def test_holding_out_everything_is_one_line_naming_the_field() -> None:
    with pytest.raises(ValueError, match=r"^data.holdout: 2 held-out sentences leave nothing to train on"):
        hold_out(treebank([["a", "b"], ["c", "d"]]), 2)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_a_bad_holdout_names_the_field(bad: object) -> None:
    with pytest.raises(ValueError, match="^data.holdout: must be a whole number"):
        SST2DataModule(holdout=bad)  # type: ignore[arg-type]


def test_held_out_sentences_are_the_validation_split_and_dev_the_test_split(tmp_path: Path) -> None:
    folder = write_sst2(tmp_path / "sst2", train=120, dev=12)
    common = {"data_dir": str(folder), "cache_dir": str(tmp_path / "cache"), "batch_size": 8}
    plain = SST2DataModule(**common)
    held = SST2DataModule(**common, holdout=10)
    plain.setup("fit")
    held.setup("fit")
    dev = plain.raw()["validation"]
    assert plain.raw()["test"] is dev and len(plain.encoded["test"]) == 12
    assert held.raw()["test"] == dev and len(held.encoded["test"]) == 12
    assert len(held.raw()["validation"]["sentence"]) == 10
    assert not set(held.raw()["validation"]["sentence"]) & set(held.raw()["train"]["sentence"])
    assert len(held.raw()["train"]["sentence"]) < len(plain.raw()["train"]["sentence"])
    kept = texts_digest(
        held.raw()["train"]["sentence"], {"vocab_size": 28996, "version": PIPELINE_VERSION, "text_normalization": "ptb"}
    )
    assert held.tokenizer_path.parent.name == kept  # trained on the kept phrases only
    assert sum(len(b["labels"]) for b in held.test_dataloader()) == 12
    assert sum(len(b["labels"]) for b in held.val_dataloader()) == 10


def test_holdout_is_part_of_a_run_identity_only_away_from_zero(tmp_path: Path) -> None:
    """Runs trained before the option existed keep their config hash: holdout 0 is left out of the identity."""
    from normbench.tasks import get_task
    from normbench.training.cli import NormbenchCLI
    from normbench.training.run.rundir import config_hash, run_identity

    folder = write_sst2(tmp_path / "sst2", train=40, dev=6)
    common = ["--config", str(get_task("sst2").config_path), f"--data.init_args.data_dir={folder}"]
    config = NormbenchCLI(args=common).resolved_config()
    assert config["data"]["init_args"]["holdout"] == 0
    before = {**config, "data": {**config["data"], "init_args": dict(config["data"]["init_args"])}}
    del before["data"]["init_args"]["holdout"]
    held = NormbenchCLI(args=[*common, "--data.init_args.holdout=5"]).resolved_config()
    hashes = [config_hash(run_identity(c, None, 1)) for c in (config, before, held)]
    assert hashes[0] == hashes[1] != hashes[2]


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared SST-2 files are not on this machine")
def test_the_shared_training_phrases_hold_out_whole_sentences() -> None:
    """As the grid trains: the normalized (ptb) text, through the data module."""
    splits = SST2DataModule(data_dir=str(SHARED), holdout=872).raw()
    kept, held = splits["train"], splits["validation"]
    assert len(held["sentence"]) == 872 and 0.4 < sum(held["label"]) / 872 < 0.7
    inside = {run for s in held["sentence"] for run in word_runs(s.split(), proper=False)}
    assert not inside & {" ".join(p.split()) for p in kept["sentence"]}
    assert 67349 - len(kept["sentence"]) > 872  # the sentences and the phrases inside them
    assert len(splits["test"]["sentence"]) == 872 and splits["test"] is not held  # GLUE's dev sentences
