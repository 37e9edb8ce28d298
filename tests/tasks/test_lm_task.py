"""Task ``lm`` end to end on a tiny corpus: fit, validation perplexity, the analysis test stage,
the bench leaderboard with the paper's tables and claims."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from normbench.tasks import get_task
from normbench.training.fit import train
from normbench.training.run.records import read_record
from tests.lm_corpus import write_corpus

CONFIG = str(get_task("lm").config_path)


def tiny(corpus: Path) -> list[str]:
    return [
        f"data.init_args.data_dir={corpus}",
        "data.init_args.vocab_size=300",
        "data.init_args.context=32",
        "data.init_args.batch_size=4",
        "data.init_args.eval_batch_size=8",
        "data.init_args.analysis_sequences=6",
        "data.init_args.analysis_length=32",
        "data.init_args.validation_fraction=0.2",
        "data.init_args.analysis_fraction=0.2",
        "model.init_args.arch.vocab_size=300",
        "model.init_args.arch.max_positions=32",
        "trainer.max_steps=8",
        "trainer.val_check_interval=4",
        "trainer.enable_progress_bar=false",
        "trainer.enable_model_summary=false",
    ]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus") / "wikitext-2"
    write_corpus(folder, articles=30)
    return folder


def test_fit_and_analysis_write_a_complete_record(corpus: Path, tmp_path: Path) -> None:
    args = [
        "--config",
        CONFIG,
        "--preset",
        "quick",
        *(f"--{o}" for o in tiny(corpus)),
        "--model.init_args.arch.attn_norm={component: project, affine: false, eps: 0.0}",
        f"--runs_dir={tmp_path}",
    ]
    record = read_record(train(args))
    assert record["status"] == "done" and record["final_step"] == 8 and record["test_time_s"] > 0
    series = record["series"]
    assert [s for s, _ in series["val/loss"]] == [4, 8]
    for (_, loss), (_, ppl) in zip(series["val/loss"], series["val/ppl"], strict=False):
        assert ppl == pytest.approx(math.exp(loss), rel=1e-4)  # torchmetrics perplexity = exp(mean token loss)
    assert series["analysis/sequences"][-1][1] == 6
    for layer in range(1, 5):
        for where in ("before", "after"):
            value = series[f"analysis/unselectable_{where}/L{layer}"][-1][1]
            assert 0.0 <= value <= 1.0
    log_dir = Path(record["log_dir"])
    assert (log_dir / "tokenizer.json").is_file() and (log_dir / "checkpoints" / "last.ckpt").is_file()


def test_model_and_tokenizer_vocabularies_must_agree(corpus: Path, tmp_path: Path) -> None:
    args = [
        "--config",
        CONFIG,
        "--preset",
        "quick",
        *(f"--{o}" for o in tiny(corpus)),
        "--model.init_args.arch.vocab_size=100",
        f"--runs_dir={tmp_path}",
    ]
    with pytest.raises(ValueError, match="model.arch.vocab_size=100 and data.vocab_size=300"):
        train(args)


def test_missing_corpus_exits_2_with_one_line(tmp_path: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "normbench.cli",
        "fit",
        "--config",
        CONFIG,
        "--preset",
        "quick",
        f"--data.init_args.data_dir={tmp_path / 'nothing'}",
        f"--runs_dir={tmp_path}",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2
    last = out.stderr.strip().splitlines()[-1]
    assert last.startswith("normbench: error: data.data_dir:") and "nothing" in last


@pytest.mark.slow  # end to end, about a minute: the default run keeps its cheaper twins
def test_bench_lm_writes_tables_and_claims(corpus: Path, tmp_path: Path) -> None:
    # 64-token held-out sequences: the key-set analysis measures its first size (64) and leaves 128, 256 n/a
    longer = ["data.init_args.analysis_length=64", "model.init_args.arch.max_positions=64"]
    overrides = [f"--{o}" for o in tiny(corpus) + longer]
    cmd = [
        sys.executable,
        "-m",
        "normbench.cli",
        "bench",
        "lm",
        "--preset",
        "quick",
        "--seeds",
        "[0]",
        *overrides,
        f"--runs_dir={tmp_path / 'runs'}",
        f"--results_dir={tmp_path / 'results'}",
        "--progress",
        "false",
    ]
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert not (tmp_path / "results" / "lm" / "leaderboard.json").exists()  # overrides: not the task's own bench
    (folder,) = (tmp_path / "results" / "lm").iterdir()
    board = json.loads((folder / "leaderboard.json").read_text())
    assert [v["name"] for v in board["variants"]] == ["pre/both", "pre/project", "pre/both_affine", "pre/learned"]
    for v in board["variants"]:  # term shares at the output (after the final norm) sum to 1
        shares = [v["metrics"][f"mu_{t}@out"]["mean"] for t in "ihfc"]
        assert sum(shares) == pytest.approx(1.0, abs=1e-6)
        assert all(v["metrics"][f"mu_h@L{k}"]["mean"] is not None for k in range(1, 5))
    assert (folder / "decomposition.png").read_bytes()[:4] == b"\x89PNG"
    tables = {t["name"]: t for t in board["tables"]}
    assert tables["table1"]["rows"][0]["paper"] == [51.0, 32.2, 34.7, 36.8]
    assert all(c["mean"] is not None for row in tables["table1"]["rows"] for c in row["measured"])
    by_size = tables["key_sets"]
    assert by_size["columns"] == ["k64", "k128", "k256"] and by_size["paper_column"]
    first = by_size["rows"][0]
    assert first["variant"] == "pre/project" and first["paper"] == 51.0
    assert first["measured"][0]["mean"] is not None and first["measured"][1]["mean"] is None  # 128 > 64 tokens
    project = next(v for v in board["variants"] if v["name"] == "pre/project")["metrics"]
    # the first 64 keys of a 64-token sequence are the whole sequence: the test stage's count
    assert project["unselectable_after_k64_L1"]["per_seed"] == pytest.approx(
        project["unselectable_after_L1"]["per_seed"]
    )
    assert (folder / "key_sets.png").read_bytes()[:4] == b"\x89PNG"
    verdicts = {c["id"]: c["verdict"] for c in board["claims"]}
    assert verdicts["normbench.lm.key_set_growth_vs_chance.L1"] == "not run"  # no 256-key sets in 64-token sequences
    assert len(verdicts) == 14 and set(verdicts.values()) <= {
        "reproduced",
        "direction only",
        "inconclusive",
        "not reproduced",
        "not run",
    }
    md = (folder / "leaderboard.md").read_text()
    assert "Table 1" in md and "![train_loss](train_loss.png)" in md and "paper (768-1024 keys)" in md
