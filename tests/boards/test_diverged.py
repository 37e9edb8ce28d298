"""A diverged or failed seed is a row, never a crash: named with its step, in no mean or verdict, and
every JSON written is strict (no NaN)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from normbench.archive import load_board
from normbench.boards.build import build
from normbench.judge.claims import judge
from normbench.publish import leaderboard as lb
from normbench.render.board_sections.cells import status_cell
from normbench.training.run.records import read_record
from tests.factories import make_record

NAN = float("nan")
METRICS = {
    "final": {"series": "test/acc", "at_step": "last"},
    "to_0.5": {"series": "train/loss_epoch", "first_below": 0.5},
}


def strict(text: str) -> Any:
    """``json.loads`` that refuses NaN and Infinity."""

    def refuse(name: str) -> None:
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def record(
    variant: str, seed: int, acc: float | None, loss: list[list[Any]], status: str = "done", **extra: Any
) -> dict:
    series = {"test/acc": [[loss[-1][0], acc]], "train/loss_epoch": loss}
    return make_record(variant, seed, status=status, series=series, final_step=int(loss[-1][0]), **extra)


def board_with_a_diverged_and_a_failed_seed() -> dict[str, Any]:
    records = [
        record("pre/both", 0, 0.8, [[50, 0.4]]),
        record("pre/both", 1, NAN, [[20, 0.3], [41, NAN]], "diverged", diverged_at_step=40),
        record("pre/both", 2, 0.6, [[50, 0.45]]),
        record("pre/none", 0, 0.5, [[50, 0.9]]),
    ]
    failed = [
        record("pre/both", 3, None, [[7, 1.0]], "failed", error="RuntimeError: boom"),
        record("pre/scale", 0, None, [[3, 1.0]], "failed", error="OSError: disk"),
    ]
    return build("majority", "quick", records, {"metrics": METRICS}, ["pre/both", "pre/none"], failed=failed)


def test_a_diverged_seed_is_named_and_in_no_mean(tmp_path: Path) -> None:
    board = board_with_a_diverged_and_a_failed_seed()
    assert status_cell(board.variants[0]) == "diverged at step 40 (seed 1); failed (seed 3); 2 done"
    both = board.to_json()["variants"][0]
    assert both["failed"] == {"3": "RuntimeError: boom"} and both["diverged_at_step"] == {"1": 40}
    final = both["metrics"]["final"]
    assert final["per_seed"] == [0.8, None, 0.6] and final["n"] == 2 and final["seeds"] == 3
    assert final["mean"] == pytest.approx(0.7)
    # seed 1 reached 0.5 before diverging, but a diverged seed counts in no statistic
    assert both["metrics"]["to_0.5"]["per_seed"] == [50.0, None, 50.0] and both["metrics"]["to_0.5"]["mean"] == 50.0
    assert "without_flagged" not in final  # nothing at chance: the means above are already without it

    json_path, md_path = lb.write(board, tmp_path, [])
    assert strict(json_path.read_text())["variants"][0]["metrics"]["final"]["per_seed"] == [0.8, None, 0.6]
    md = md_path.read_text()
    assert (
        "| 3 + 1 failed | diverged at step 40 (seed 1); failed (seed 3); 2 done | 0.700 ± 0.141 (n = 2 of 3 seeds) |"
        in md
    )
    assert "| `pre/both` | 1 (flagged) | diverged at step 40 (seed 1) | – | – |" in md
    assert "| `pre/both` | 3 | failed (seed 3) | – | – |" in md
    assert "- `pre/both` seed 3: failed (RuntimeError: boom)" in md
    assert "- `pre/scale` seed 0: failed (OSError: disk)" in md  # a variant whose every seed failed is named too


def test_claims_count_the_seeds_that_finished_and_say_which_did_not() -> None:
    board = board_with_a_diverged_and_a_failed_seed()
    variants = {v["name"]: v for v in board.to_json()["variants"]}
    claim = {
        "id": "c",
        "owner": "normbench",
        "source": "s",
        "metric": "final",
        "variants": {"with": "pre/both", "without": "pre/none"},
        "rule": {"kind": "ordering", "lower": "without"},
    }
    entry = judge(claim, variants)
    assert entry["per_seed"] == {"with": [0.8, 0.6], "without": [0.5]}
    assert entry["verdict"] == "inconclusive"  # one seed of pre/none: no interval, never "not run"
    assert "(counted: pre/both: 2 of 4 seeds; seed 1 diverged at step 40, seed 3 failed)" in entry["rule"]
    assert entry["counted"] == ["pre/both: 2 of 4 seeds; seed 1 diverged at step 40, seed 3 failed"]


def test_a_sweep_with_a_diverged_variant_finishes_with_its_leaderboard(tmp_path: Path, normbench_in_process) -> None:
    tiny = [
        "--data.init_args.num_sequences=400",
        "--data.init_args.batch_size=64",
        "--data.init_args.eval_batch_size=200",
        "--trainer.max_steps=6",
        "--trainer.val_check_interval=3",
        "--trainer.log_every_n_steps=2",
    ]
    out = normbench_in_process(
        "sweep",
        "--config",
        "majority",
        "--seeds",
        "0",
        "--workers",
        "1",
        "--no-progress",
        "--grid",
        "model.init_args.optim.lr=0.001,1e6",
        "--name",
        "lr",
        *tiny,
        "--runs_dir",
        str(tmp_path / "runs"),
        "--results_dir",
        str(tmp_path / "results"),
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-3000:]  # a diverged run is finished: the sweep succeeds
    (diverged,) = [r for r in map(read_record, (tmp_path / "runs").rglob("record.json")) if r["status"] == "diverged"]
    step = diverged["diverged_at_step"]
    folder = tmp_path / "results" / "majority" / "lr"
    strict((folder / "leaderboard.json").read_text())
    rows = load_board(folder).by_name
    assert status_cell(rows["optim.lr=1000000.0"]) == f"diverged at step {step} (seed 0)"
    assert rows["optim.lr=0.001"].status == "done"
    assert f"| diverged at step {step} (seed 0) |" in (folder / "leaderboard.md").read_text()
    for path in (tmp_path / "runs").rglob("*.json"):  # records and cached analyses: strict JSON too
        strict(path.read_text())
    assert all((folder / name).is_file() for name in ("loss.png", "accuracy.png", "angle.png"))
