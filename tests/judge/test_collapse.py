"""Collapsed runs: the unigram-entropy baseline from a run's data config, the flags, the board's Markdown."""

from __future__ import annotations

from pathlib import Path

import pytest

from normbench.boards.build import build
from normbench.data.lm import LMDataModule
from normbench.judge import collapse
from normbench.publish import leaderboard as lb
from tests.factories import make_record
from tests.lm_corpus import write_corpus

METRICS = {"final_val_loss": {"series": "val/loss", "at_step": "last"}}
SPEC = {"metric": "final_val_loss", "baseline": "unigram_entropy", "within": 0.01}
DATA = {"vocab_size": 300, "context": 32, "validation_fraction": 0.2, "analysis_fraction": 0.2}


def lm_record(variant: str, seed: int, val_loss: float, data: dict | None) -> dict:
    config = {"model": {"init_args": {"arch": {"n_layers": 1}}}, **({"data": data} if data else {})}
    return make_record(variant, seed, task="lm", series={"val/loss": [[10, val_loss]]}, config=config)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus") / "wikitext-2"
    write_corpus(folder, articles=20)
    return folder


def data_config(corpus: Path) -> dict:
    return {"class_path": "normbench.data.lm.LMDataModule", "init_args": {"data_dir": str(corpus), **DATA}}


def test_the_baseline_is_the_unigram_entropy_of_the_runs_training_stream(corpus: Path) -> None:
    expected = LMDataModule(data_dir=str(corpus), **DATA).unigram_entropy()
    assert collapse.unigram_entropy_of_run(lm_record("pre/dyt", 0, 1.0, data_config(corpus))) == pytest.approx(expected)
    with pytest.raises(ValueError, match="no data config"):
        collapse.unigram_entropy_of_run(lm_record("pre/dyt", 0, 1.0, None))
    missing = {
        "class_path": "normbench.data.lm.LMDataModule",
        "init_args": {"data_dir": str(corpus.parent / "nowhere"), "source": "local", **DATA},
    }
    with pytest.raises(ValueError, match="data_dir"):
        collapse.unigram_entropy_of_run(lm_record("pre/dyt", 0, 1.0, missing))


def test_a_seed_at_the_unigram_entropy_is_flagged_collapsed_and_kept_in_the_mean(corpus: Path) -> None:
    h = LMDataModule(data_dir=str(corpus), **DATA).unigram_entropy()
    data = data_config(corpus)
    # seed 0 sits at H, seed 1 learned (0.5 below), seed 2 is worse than H: no better than the unigram model
    recs = [lm_record("pre/dyt", s, v, data) for s, v in enumerate([h + 0.0007, h - 0.5, h + 0.2])]
    recs += [lm_record("pre/both", s, h - 1.0, data) for s in range(3)]
    board = build("lm", "quick", recs, {"metrics": METRICS, "collapse": SPEC}, ["pre/both", "pre/dyt"])
    both, dyt = board.to_json()["variants"]
    assert both["collapsed"] == [] and "flagged" not in both
    assert dyt["collapsed"] == ["0", "2"] and collapse.collapsed_seeds(dyt) == ["0", "2"]
    assert dyt["flagged"]["0"] == f"collapsed (final_val_loss {h + 0.0007:.4f} >= unigram_entropy {h:.4f} - 0.01)"
    assert dyt["collapse_baseline"] == {"0": pytest.approx(h), "1": pytest.approx(h), "2": pytest.approx(h)}
    loss = dyt["metrics"]["final_val_loss"]
    assert loss["mean"] == pytest.approx(h + (0.0007 - 0.5 + 0.2) / 3)  # collapsed seeds stay in the mean
    assert loss["without_flagged"]["mean"] == pytest.approx(h - 0.5) and loss["without_flagged"]["n"] == 1
    assert board.collapse == {**SPEC, "unavailable": []}
    md = lb.render_markdown(board, [])
    assert "| `pre/dyt` | 0 (flagged) | done, collapsed (final_val_loss" in md
    assert "done; collapsed (seeds 0, 2)" in md and "without flagged" in md
    assert (
        f"`final_val_loss` >= unigram_entropy - 0.01, its baseline computed from the run's own training data "
        f"({h:.4f})" in md
    )


def test_a_run_without_a_baseline_is_named_not_flagged() -> None:
    recs = [lm_record("pre/dyt", 0, 6.44, None)]
    board = build("lm", "quick", recs, {"metrics": METRICS, "collapse": SPEC})
    (v,) = board.to_json()["variants"]
    assert v["collapsed"] == [] and "flagged" not in v and v["collapse_baseline"] == {"0": None}
    assert board.collapse["unavailable"] == ["`pre/dyt` seed 0: no unigram_entropy (its record has no data config)"]
    assert "Not judged for collapse (no baseline):" in lb.render_markdown(board, [])


def test_at_chance_seeds_are_collapsed_too_and_boards_before_the_list_are_read() -> None:
    assert collapse.collapsed_seeds({"collapsed": ["1"], "flagged": {"1": "at chance", "2": "diverged"}}) == ["1"]
    old = {
        "flagged": {
            "1": "at chance (val_acc 0.509 <= 0.55)",
            "2": "diverged at step 40",
            "3": "collapsed (final_val_loss 6.4390 >= unigram_entropy 6.4383 - 0.01)",
        }
    }
    assert collapse.collapsed_seeds(old) == ["1", "3"]
    assert collapse.collapsed_seeds({"name": "pre/both"}) == []


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"metric": "nope", "baseline": "unigram_entropy"},
            "bench.collapse.metric: 'nope' is not a leaderboard metric",
        ),
        ({"metric": "final_val_loss", "baseline": "zero"}, "bench.collapse.baseline: 'zero' is not a baseline"),
        ({"metric": "final_val_loss", "baseline": "unigram_entropy", "within": -1}, "bench.collapse.within"),
        ("final_val_loss", "bench.collapse: must be"),
    ],
)
def test_bad_collapse_declarations_are_one_line_errors(spec: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build("lm", "quick", [lm_record("pre/dyt", 0, 6.44, None)], {"metrics": METRICS, "collapse": spec})


def test_the_lm_task_declares_collapse_on_the_validation_loss() -> None:
    from normbench.tasks import get_task
    from normbench.training.config import load_config

    for preset in ("quick", "modern", "width", "dyt-alpha"):
        bench = load_config(str(get_task("lm").config_path), preset)["bench"]
        assert collapse.check_spec(bench["collapse"], bench["metrics"]) == SPEC
