"""The norm leaderboard (results/norms.md): rebuilt bit for bit from the boards, standings by one rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normbench.boards.norm_board import build_norm_board
from normbench.io import dumps_json
from normbench.render.norm_board_render import fewer_seeds, plot_task, render_glance, render_markdown

RESULTS = Path(__file__).resolve().parents[2] / "results"


@pytest.fixture(scope="module")
def published() -> dict:
    return build_norm_board(RESULTS)


def test_the_published_norm_board_rebuilds_bit_for_bit(published: dict) -> None:
    """norms.json, norms.md and norms-glance.md are what `normbench norms` builds from the committed boards."""
    assert (RESULTS / "norms.json").read_text(encoding="utf-8") == dumps_json(published, separators=(",", ":")) + "\n"
    assert (RESULTS / "norms.md").read_text(encoding="utf-8") == render_markdown(published)
    assert (RESULTS / "norms-glance.md").read_text(encoding="utf-8") == render_glance(published)


def test_every_task_ranks_at_least_the_eleven_norms(published: dict) -> None:
    names = {"LayerNorm", "RMSNorm", "no norm", "projection only", "the paper's variant", "learned normal", "DyT",
             "ScaleNorm", "QK-norm", "peri-norm", "PNorm"}  # fmt: skip
    assert [view["task"] for view in published["tasks"]] == ["majority", "lm", "sst2"]
    for view in published["tasks"]:
        assert names <= {row["norm"] for row in view["norms"]}, view["task"]
        assert view["better"] in ("higher", "lower") and view["metric"]
        for row in view["norms"]:
            for rate in ("tuned", "shared"):
                c = row[rate]
                if c["finished"] < c["declared"]:
                    assert c["standing"].startswith(("in progress", "failed")), (view["task"], row["norm"])


def test_the_lm_and_sst2_comparisons_declare_five_judging_seeds(published: dict) -> None:
    seeds = {view["task"]: len(view["judging_seeds"]) for view in published["tasks"]}
    assert seeds["lm"] >= 5 and seeds["sst2"] >= 5 and seeds["majority"] == 10


def test_a_cell_in_progress_is_in_the_bake_queue(published: dict) -> None:
    """Every whole-block norm still in progress names the queued boards that train it."""
    for view in published["tasks"]:
        for row in view["norms"]:
            if row["variant"].endswith("-blocks") and row["tuned"]["finished"] < row["tuned"]["declared"]:
                assert row["queued"], (view["task"], row["variant"])


def test_a_build_with_fewer_finished_seeds_is_refused(published: dict) -> None:
    fewer = json.loads(json.dumps(published))
    fewer["tasks"][0]["norms"][0]["tuned"]["finished"] -= 1
    assert fewer_seeds(published, fewer) == [f"majority norms {published['tasks'][0]['norms'][0]['variant']} tuned"]
    assert fewer_seeds(published, published) == []
    moved = json.loads(json.dumps(fewer))
    moved["tasks"][0]["norms"][0]["tuned"]["rate"] = "another"  # a rate chosen again: another cell, not a loss
    assert fewer_seeds(published, moved) == []


def test_the_figure_is_the_same_bytes_for_the_same_data(published: dict, tmp_path: Path) -> None:
    view = published["tasks"][0]
    plot_task(view, tmp_path / "a.png")
    plot_task(view, tmp_path / "b.png")
    assert (tmp_path / "a.png").read_bytes() == (tmp_path / "b.png").read_bytes()
