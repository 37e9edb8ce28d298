"""A rebuilt board and its figures: a new figure kind is written, a figure another command drew is kept."""

from __future__ import annotations

import json
from pathlib import Path

from normbench.archive import parse_board
from normbench.publish.compare import kept_as_published
from normbench.publish.report_kinds import Sweep, draw
from normbench.publish.write import figures_kept
from normbench.render.views import views
from tests.factories import make_board, make_variant

FIGURES = ["loss.png", "accuracy.png", "geometry_3d.png"]


def published(tmp_path: Path) -> tuple[Path, dict]:
    out = tmp_path / "majority"
    out.mkdir()
    doc = make_board([make_variant("pre/both", [0, 1])])
    (out / "leaderboard.json").write_text(json.dumps({**doc, "figures": FIGURES}), encoding="utf-8")
    for name in FIGURES:
        (out / name).write_bytes(b"png")
    return out, doc


def test_a_build_that_says_the_same_is_kept_unless_it_draws_a_new_figure(tmp_path: Path) -> None:
    out, doc = published(tmp_path)
    same = kept_as_published(out, parse_board(doc), False, [str(out / "loss.png"), str(out / "accuracy.png")])
    assert same is not None and "is unchanged (same runs, values and verdicts)" in same
    assert kept_as_published(out, parse_board(doc), False, ["by_lr.png", "loss.png", "accuracy.png"]) is None


def test_figures_the_build_does_not_draw_stay_on_the_board_while_their_files_do(tmp_path: Path) -> None:
    out, _ = published(tmp_path)
    assert figures_kept(out, ["/stage/by_lr.png", "/stage/loss.png", "/stage/accuracy.png"]) == ["geometry_3d.png"]
    (out / "geometry_3d.png").unlink()
    assert figures_kept(out, ["loss.png"]) == []  # accuracy.png is the board's own: a build that drops it drops it
    assert figures_kept(tmp_path / "nowhere", ["loss.png"]) == []


def test_a_figure_kept_is_named_once_by_its_file_name(tmp_path: Path) -> None:
    out, doc = published(tmp_path)
    listed = ["sub/loss.png", "accuracy.png", "accuracy.png", "/abs/geometry_3d.png"]
    (out / "leaderboard.json").write_text(json.dumps({**doc, "figures": listed}), encoding="utf-8")
    assert figures_kept(out, ["/stage/loss.png"]) == ["geometry_3d.png"]


def test_a_figure_drawn_in_a_new_style_is_written_though_the_board_says_the_same(tmp_path: Path) -> None:
    out, doc = published(tmp_path)
    plots = [str(out / name) for name in FIGURES]
    assert kept_as_published(out, parse_board(doc), False, plots) is not None
    assert kept_as_published(out, parse_board({**doc, "figure_styles": {"loss.png": 2}}), False, plots) is None


def test_views_above_style_one_record_the_style_of_each_figure_they_draw(tmp_path: Path) -> None:
    style = {view.key: view.style for view in views()}
    assert style["grid_plot"] > 1 and style["matrix"] == 1
    board = make_board(
        [
            make_variant(f"pre/both,lr={lr}", [0], metrics={"final_val_loss": {"per_seed": [v]}})
            for lr, v in [(1, 5.0), (2, 4.0)]
        ]
    )
    sweep = Sweep("lm", "quick", tmp_path, 2)
    plots, added = draw(board, {"grid_plot": {"axis": "lr", "metric": "final_val_loss"}}, [], sweep, ["loss.png"])
    assert [Path(p).name for p in plots] == ["by_lr.png", "loss.png"]
    assert added == {"figure_styles": {"by_lr.png": style["grid_plot"]}}


def test_a_build_that_stops_drawing_a_figure_is_written_without_it(tmp_path: Path) -> None:
    out, doc = published(tmp_path)
    assert (
        kept_as_published(out, parse_board(doc), False, [str(out / "loss.png")]) is None
    )  # accuracy.png no longer drawn
    (out / "geometry_3d.png").unlink()  # an outside figure whose file is gone is no longer shown either
    assert kept_as_published(out, parse_board(doc), False, [str(out / "loss.png"), str(out / "accuracy.png")]) is None


def test_a_rule_about_another_boards_metric_rewrites_no_board(tmp_path: Path) -> None:
    """A declared tolerance or distribution rule is written on a board as the code had it; a change of a rule none
    of its metrics follows leaves it as published, one its metric follows rewrites it."""
    rules = {"tolerances": [{"metrics": "*acc*", "abs": 2.5e-4}], "by_distribution": [{"metrics": "final_train_loss"}]}
    metric = {"per_seed": [0.9, 0.91], "n": 2, "mean": 0.905, "std": 0.007}
    doc = make_board(
        [make_variant("pre/both", [0, 1], metrics={"test_acc@1000": metric})],
        reproducibility={"platforms": [], **rules},
    )
    out = tmp_path / "majority"
    out.mkdir()
    (out / "leaderboard.json").write_text(json.dumps(doc), encoding="utf-8")

    def with_rules(**changed: list) -> dict:
        return {**doc, "reproducibility": {**doc["reproducibility"], **changed}}

    other = with_rules(by_distribution=[*rules["by_distribution"], {"metrics": "final_query_angle"}])
    assert "is unchanged" in str(kept_as_published(out, parse_board(other), False))
    own = with_rules(by_distribution=[*rules["by_distribution"], {"metrics": "test_acc@1000"}])
    assert kept_as_published(out, parse_board(own), False) is None
    wider = with_rules(tolerances=[{"metrics": "*acc*", "abs": 5e-4}])
    assert kept_as_published(out, parse_board(wider), False) is None
