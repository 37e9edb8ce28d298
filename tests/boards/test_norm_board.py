"""The norm leaderboard (results/norms.md): rebuilt bit for bit from the boards, standings by one rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normbench.boards import norm_ranking
from normbench.boards.norm_board import build_norm_board
from normbench.boards.norm_cells import complete, standings
from normbench.boards.norm_ranking import TaskRanking
from normbench.boards.norm_sources import Sources
from normbench.io import dumps_json
from normbench.render.norm_board_render import fewer_seeds, plot_task, render_glance, render_markdown
from tests.boards.test_norm_cells import cell

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


def test_a_malformed_ranking_is_one_line_naming_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    bench = {"variants": {"pre/both": {}}, "card": {"margin": 0.01}, "norm_board": {"better": "up", "metric": "x"}}
    monkeypatch.setattr(norm_ranking, "load_config", lambda task, preset=None: {"bench": bench})
    with pytest.raises(ValueError, match=r"^bench.norm_board \(task t\).better: must be higher or lower"):
        TaskRanking.of("t")
    bench["norm_board"] = {"better": "higher", "metric": "x", "norms": {"RMSNorm": "pre/nope"}}
    with pytest.raises(ValueError, match=r"norms.RMSNorm: 'pre/nope' is not a variant of task t"):
        TaskRanking.of("t")


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


def test_a_tuned_cell_whose_grid_still_waits_for_tuning_seeds_has_no_standing() -> None:
    """SST-2's grid tunes on seeds 100-102: until seed 102 has run, the rate a tuned board used is not final."""
    sources = Sources("sst2", "tuned", RESULTS)
    key, board, base = sources.index["post/both"]
    waiting = sources.choice_waits(board, "post/both", base["chosen"])
    assert waiting is not None and "102" in waiting
    c = sources.cell("post/both", "tuned", "val_acc", 5)
    standings([c, cell([0.8] * 5)], "higher", 0.01)
    assert c["standing"].startswith("in progress: the choice waits") and not complete(c)
