"""`normbench bench` end to end on a tiny grid: records, leaderboard, figures, resume."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

TINY = "[data.init_args.num_sequences=600, data.init_args.batch_size=64, data.init_args.eval_batch_size=300, trainer.max_steps=20, trainer.val_check_interval=10]"


def bench(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "normbench.cli", "bench", "majority", "--preset", "quick", "--seeds", "[0, 1]",
           "--variants", "[pre/both, pre/paper_no_projection]", "--override", TINY,
           f"--runs_dir={tmp_path / 'runs'}", f"--results_dir={tmp_path / 'results'}", "--progress", "false", *extra]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=600)


def test_bench_writes_leaderboard_and_resumes(tmp_path: Path) -> None:
    first = bench(tmp_path)
    assert first.returncode == 0, first.stderr[-3000:]
    out = tmp_path / "results" / "majority"
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["task"] == "majority" and board["preset"] == "quick"
    assert [v["name"] for v in board["variants"]] == ["pre/both", "pre/paper_no_projection"]
    for v in board["variants"]:
        assert v["seeds"] == [0, 1] and v["status"] == "done" and v["config_hash"]
        assert len(v["metrics"]["final_train_loss"]["per_seed"]) == 2
        assert v["metrics"]["test_acc@1000"]["mean"] is None  # 20-step runs never reach step 1000
        assert v["provenance"]["git_commits"]
    verdicts = {c["id"]: c["verdict"] for c in board["claims"]}
    assert verdicts["brody2023.fig3.acc@1000"] == "not run"
    assert verdicts["brody2023.fig2b.query_angle"] in {"reproduced", "direction only", "not reproduced"}
    for v in board["variants"]:  # decomposition shares at the output, per seed, sum to 1
        per_seed = zip(*(v["metrics"][f"mu_{t}@out"]["per_seed"] for t in "ihfc"))
        assert all(abs(sum(shares) - 1) < 1e-6 for shares in per_seed)
    for png in ("loss.png", "accuracy.png", "angle.png", "decomposition.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "leaderboard.md").read_text()
    assert "pre/paper_no_projection" in md and "Claims" in md and "![angle](angle.png)" in md

    records = sorted((tmp_path / "runs").rglob("record.json"))
    assert len(records) == 4
    stamps = [r.stat().st_mtime_ns for r in records]
    second = bench(tmp_path)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "4 of 4 runs already finished" in second.stderr + second.stdout
    assert [r.stat().st_mtime_ns for r in records] == stamps  # nothing retrained
    again = json.loads((out / "leaderboard.json").read_text())
    assert [v["metrics"] for v in again["variants"]] == [v["metrics"] for v in board["variants"]]
