"""`normbench random_grid`: grid statistics, heatmaps and the claims section on a small grid."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from normbench.analysis.random_grid import cell_keys, random_grid


def test_grid_statistics_are_consistent() -> None:
    grid = random_grid(range(3, 9), range(3, 5), runs=6, seed=1, progress=False)
    raw = {k: np.asarray(v) for k, v in grid["stats"]["raw"].items()}
    assert raw["any_fraction"].shape == (2, 6)
    assert (raw["mean_fraction"] <= raw["any_fraction"]).all()  # a run with a fraction > 0 counts as "any"
    assert not np.asarray(grid["stats"]["layernorm"]["any_fraction"]).any()
    eps = {k: np.asarray(v) for k, v in grid["stats"]["layernorm_eps"].items()}
    assert (eps["mean_fraction"] <= eps["any_fraction"]).all() and grid["eps"] == 1e-5
    assert np.array_equal(cell_keys(3, 5, 6, 1), cell_keys(3, 5, 6, 1))  # seeded per cell


def test_cli_writes_results(tmp_path: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "normbench.cli",
            "random_grid",
            "--n_max",
            "14",
            "--d_max",
            "4",
            "--runs",
            "10",
            "--results_dir",
            str(tmp_path),
            "--progress",
            "false",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    folder = tmp_path / "unselectable"
    grid = json.loads((folder / "random_grid.json").read_text())
    assert grid["ns"] == list(range(3, 15)) and grid["ds"] == [3, 4] and grid["provenance"]["git_commit"] is not None
    board = json.loads((folder / "leaderboard.json").read_text())
    verdicts = {c["id"]: c["verdict"] for c in board["claims"]}
    assert verdicts["brody2023.fig1d.layernorm_never_unselectable"] == "reproduced"
    assert verdicts["brody2023.fig1c.large_d_vanishes"] == "not run"  # d >= 13 is not in this grid
    assert grid["provenance"]["numpy"] and grid["provenance"]["scipy"]
    assert {c["id"]: c["owner"] for c in board["claims"]}["normbench.unselectable.layernorm_eps"] == "normbench"
    for png in ("random_grid_raw.png", "random_grid_layernorm.png", "random_grid_layernorm_eps.png"):
        assert (folder / png).read_bytes()[:4] == b"\x89PNG"
    assert "Which statistic the paper's Figure 1c matches" in (folder / "leaderboard.md").read_text()
    md = (folder / "leaderboard.md").read_text()
    assert md.index("## Protocol") < md.index("## Claims") < md.index("## Findings") < md.index("## How to cite")
    assert "| random sets per cell | 10 | 100 |" in md and "@misc{" in md
    assert "“After LayerNorm every key is selectable: zero unselectable keys in every cell” holds here" in md
