"""Task ``sst2`` end to end on a tiny corpus: fit, dev metrics, the analysis, bench + token report."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from normbench.tasks import get_task
from normbench.training.fit import train
from normbench.training.run.records import read_record
from tests.sst2_corpus import write_sst2

CONFIG = str(get_task("sst2").config_path)


def tiny(corpus: Path) -> list[str]:
    return [
        f"data.init_args.data_dir={corpus}",
        "data.init_args.vocab_size=200",
        "model.init_args.arch.vocab_size=200",
        "data.init_args.batch_size=16",
        "model.init_args.arch.ffn_width=32",
        "trainer.max_steps=8",
        "trainer.val_check_interval=4",
        "trainer.enable_progress_bar=false",
        "trainer.enable_model_summary=false",
    ]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sst2(tmp_path_factory.mktemp("data") / "sst2", train=200, dev=40)


def test_fit_records_dev_metrics_and_unselectable_fractions(corpus: Path, tmp_path: Path) -> None:
    args = [
        "--config",
        CONFIG,
        "--preset",
        "quick",
        *(f"--{o}" for o in tiny(corpus)),
        "--model.init_args.arch.placement=none",
        "--model.init_args.arch.embed_norm={component: none, affine: false, eps: 0.0}",
        f"--runs_dir={tmp_path}",
    ]
    record = read_record(train(args))
    assert record["status"] == "done" and record["final_step"] == 8
    series = record["series"]
    assert [s for s, _ in series["val/acc"]] == [4, 8]
    assert all(0.0 <= v <= 1.0 for key in ("val/acc", "val/f1") for _, v in series[key])
    for layer in range(1, 5):
        assert 0.0 <= series[f"analysis/unselectable/L{layer}"][-1][1] <= 1.0
    assert 0.0 <= series["analysis/unselectable_tokens"][-1][1] <= 1.0


def test_different_vocab_sizes_are_refused_before_training(corpus: Path, tmp_path: Path) -> None:
    args = [
        "--config",
        CONFIG,
        "--preset",
        "quick",
        *(f"--{o}" for o in tiny(corpus)),
        "--model.init_args.arch.vocab_size=300",
        f"--runs_dir={tmp_path}",
    ]
    with pytest.raises(ValueError, match="model.arch.vocab_size=300 and data.vocab_size=200 must be equal"):
        train(args)
    assert not list(tmp_path.rglob("record.json"))


@pytest.mark.slow  # end to end, about a minute: the default run keeps its cheaper twins
def test_bench_writes_leaderboard_and_token_report(corpus: Path, tmp_path: Path) -> None:
    overrides = [f"--{o}" for o in tiny(corpus)]
    cmd = [
        sys.executable,
        "-m",
        "normbench.cli",
        "bench",
        "sst2",
        "--preset",
        "quick",
        "--seeds",
        "[0]",
        "--variants",
        "[post/both, none/none]",
        *overrides,
        f"--runs_dir={tmp_path / 'runs'}",
        f"--results_dir={tmp_path / 'results'}",
        "--progress",
        "false",
    ]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    (results,) = (tmp_path / "results" / "sst2").iterdir()  # overrides: a subfolder, not the task's own bench
    board = json.loads((results / "leaderboard.json").read_text())
    assert [v["name"] for v in board["variants"]] == ["post/both", "none/none"]
    for v in board["variants"]:
        assert sum(v["metrics"][f"mu_{t}@out"]["mean"] for t in "ihfc") == pytest.approx(1.0, abs=1e-6)
    both = next(v for v in board["variants"] if v["name"] == "post/both")
    assert both["metrics"]["mu_c@embed"]["mean"] != 0  # BERT's embedding LayerNorm shifts into c
    verdicts = {c["id"]: c["verdict"] for c in board["claims"]}
    assert set(verdicts) >= {"brody2023.table4.unselectable_tokens"}
    report = (results / "unselectable_tokens.md").read_text()
    assert "## Table 4" in report and "dev sentences" in report
    assert "Not run: no finished `lm` runs" in report  # no LM runs in this runs_dir
    doc = json.loads((results / "unselectable_tokens.json").read_text())
    assert doc["sections"]["table4"]["summary"]["sentences"] == 40
    # the named seed (1) did not run here: the sentences come from the first finished seed
    assert list(doc["sections"]["table4"]["per_seed"]) == ["0"] and "### Table 4 over every seed" in report
    assert doc["claims"][0]["verdict"] == "not run"


def test_two_trainings_of_one_config_and_seed_give_identical_records(corpus: Path, tmp_path: Path) -> None:
    """Each with its own empty tokenizer cache, as two machines or two runs racing for the cache have:
    the vocabulary, every logged value and the saved tokenizer agree bit for bit (the WordPiece trainer
    used to hand out another vocabulary each time, and two runs parted in the 7th digit at step 40)."""
    records = []
    for name in ("a", "b"):
        args = [
            "--config",
            CONFIG,
            "--preset",
            "quick",
            *(f"--{o}" for o in tiny(corpus)),
            "--model.init_args.arch.placement=none",
            "--trainer.max_steps=60",
            "--trainer.val_check_interval=30",
            "--trainer.log_every_n_steps=5",
            "--seed_everything=0",
            f"--data.init_args.cache_dir={tmp_path / name / 'cache'}",
            f"--runs_dir={tmp_path / name / 'runs'}",
        ]
        records.append(read_record(train(args)))
    a, b = records
    assert a["status"] == b["status"] == "done" and a["final_step"] == 60
    assert a["series"] == b["series"] and len(a["series"]["train/loss_step"]) == 12
    tokenizers = [Path(r["log_dir"]) / "tokenizer.json" for r in records]
    assert tokenizers[0].read_bytes() == tokenizers[1].read_bytes()
