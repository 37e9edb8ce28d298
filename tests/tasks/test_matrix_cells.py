"""Every cell of every task's placement x component matrix builds the norms its name says and trains
a few steps through the sweep, which writes the matrix (table, figure, claims) into its own folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normbench.sweep.options import SweepOptions
from normbench.sweep.run import run_sweep
from normbench.tasks import get_task
from normbench.training.config import load_config
from tests.tasks.test_series import overrides


# the text tasks' cells take a minute each on 2 CPU cores: with the long tests (-m slow)
@pytest.mark.parametrize(
    "task", ["majority", pytest.param("lm", marks=pytest.mark.slow), pytest.param("sst2", marks=pytest.mark.slow)]
)
def test_every_matrix_cell_trains_with_the_norms_its_name_says(task: str, tmp_path: Path) -> None:
    cells = load_config(get_task(task).config_path, "matrix")["bench"]["default_variants"]
    options = SweepOptions(
        task,
        "matrix",
        seeds="0",
        runs_dir=str(tmp_path / "runs"),
        results_dir=str(tmp_path / "results"),
        progress=False,
        workers=1,
    )
    out = run_sweep(options, [*overrides(task, tmp_path), "trainer.max_steps=4"])
    assert out.parent == tmp_path / "results" / task and out.name.startswith("matrix")  # never the task's own folder
    assert not (tmp_path / "results" / task / "leaderboard.json").exists()
    board = json.loads((out / "leaderboard.json").read_text())
    rows = {v["name"]: v for v in board["variants"]}
    assert list(rows) == cells
    for name, row in rows.items():
        placement, component = name.split("/")
        assert row["placement"] == placement and row["status"] == "done"
        if placement == "none":
            assert "attn" not in row["norms"] and "ffn" not in row["norms"]
        else:
            assert row["norms"]["attn"]["component"] == component.removesuffix("_nowarmup")
    matrix = board["matrix"]
    assert {c["variant"] for c in matrix["cells"]} == set(cells)
    # tiny sst2 runs stay at chance: flagged, and still shown
    assert all(
        c["status"] in ("done", "flagged") and c["metrics"]["unselectable"]["mean"] is not None for c in matrix["cells"]
    )
    assert (out / "matrix.png").stat().st_size > 0
    md = (out / "leaderboard.md").read_text()
    assert "## Matrix: placement x component" in md and "![matrix](matrix.png)" in md
    assert {c["id"] for c in board["claims"]} >= {
        "brody2023.geometry.scaled_inputs",
        "normbench.geometry.unscaled_inputs",
    }
    geometry = next(c for c in board["claims"] if c["id"] == "brody2023.geometry.scaled_inputs")
    # a scaling norm's keys are all selectable, trained or not; runs still at the unigram loss (the LM after 4
    # steps) are collapsed, and the geometry claims count no collapsed seed
    collapsed = "collapsed" in geometry["rule"]
    assert geometry["verdict"] == ("not run" if collapsed else "reproduced"), geometry["rule"]
    for claim in board["claims"]:
        for role, variant in claim["variants"].items():
            if variant in rows:
                assert "not logged" not in (rows[variant]["metrics"][claim["metrics"][role]].get("note") or "")
