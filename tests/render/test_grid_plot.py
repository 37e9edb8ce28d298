"""A grid board's figure: its metric against the grid value, one line per base variant, diverged seeds marked."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from normbench.render.grid_plot import (
    GridPoint,
    GridSpec,
    check_spec,
    grid_points,
    mean_line,
    plot_grid,
    positions,
    worse_edge,
)
from tests.factories import make_board, make_variant


def loss(*values: float | None) -> dict:
    return {"final_val_loss": {"per_seed": list(values)}}


VARIANTS = [
    make_variant("pre/both,lr=0.016", [0, 1], metrics=loss(5.1, 5.2)),
    make_variant("pre/both,lr=0.001", [0, 1], metrics=loss(5.5, 5.6)),
    make_variant("post/both,lr=0.016", [0, 1], metrics=loss(5.0, None), diverged_at_step={"1": 40}),
    make_variant("post/both,lr=0.001", [0, 1], metrics=loss(5.4, 6.44), collapsed=["1"]),
    make_variant("pre/both", [0], metrics=loss(5.3)),  # no grid value: not on the figure
]


def test_points_are_grouped_by_base_in_grid_order_with_their_diverged_seeds() -> None:
    points = grid_points(VARIANTS, "lr", "final_val_loss")
    assert list(points) == ["pre/both", "post/both"]
    assert points["pre/both"] == [GridPoint("0.001", [5.5, 5.6], [], 0), GridPoint("0.016", [5.1, 5.2], [], 0)]
    assert points["post/both"] == [GridPoint("0.001", [5.4, 6.44], [6.44], 0), GridPoint("0.016", [5.0], [], 1)]


def test_numbers_spanning_ten_times_are_on_a_log_axis_and_other_values_keep_the_grid_order() -> None:
    assert positions(["0.016", "0.001"]) == ({"0.001": 0.001, "0.016": 0.016}, True)
    assert positions(["2.0", "4.0"]) == ({"2.0": 2.0, "4.0": 4.0}, False)
    assert positions(["50.0;20.0;20.0", "10.0", "20.0"]) == (
        {"10.0": 0.0, "20.0": 1.0, "50.0;20.0;20.0": 2.0},
        False,
    )


def test_alpha0_per_position_follows_the_single_numbers_in_numeric_order_and_no_line_joins_the_two() -> None:
    values = ["200.0;100.0;100.0", "50.0;20.0;20.0", "100.0", "5.0", "20.0;10.0;10.0"]
    x_of, logx = positions(values)
    assert sorted(x_of, key=x_of.__getitem__) == [
        "5.0",
        "100.0",
        "20.0;10.0;10.0",
        "50.0;20.0;20.0",
        "200.0;100.0;100.0",
    ]
    assert logx is False
    rows = sorted((GridPoint(v, [1.0, 3.0], [], 0) for v in values), key=lambda p: x_of[p.value])
    rows[1] = GridPoint("100.0", [], [], 2)  # every seed diverged: no mean
    xs, means = mean_line(rows, x_of)
    assert xs[:2] == [0.0, 1.0] and xs[3:] == [2.0, 3.0, 4.0] and xs[2] != xs[2]  # NaN between 100.0 and 20;10;10
    assert means[0] == 2.0 and means[1] != means[1] and means[2] != means[2] and means[3:] == [2.0, 2.0, 2.0]


def test_the_figure_is_written_and_the_spec_defaults_to_the_choice(tmp_path: Path) -> None:
    board = make_board(VARIANTS, choice={"axis": "lr", "metric": "final_val_loss", "groups": []})
    assert check_spec(True, board) == GridSpec("lr", "final_val_loss", "min")
    path = plot_grid(board, True, tmp_path / "by_lr.png")
    assert Image.open(path).size == (840, 504)
    with pytest.raises(ValueError, match=r"^bench\.grid_plot\.axis: must name the grid's label"):
        check_spec(True, make_board(VARIANTS))
    with pytest.raises(ValueError, match=r"^bench\.grid_plot\.metric: must name one of the board's metrics"):
        check_spec({"axis": "lr"}, make_board(VARIANTS))


def test_diverged_seeds_sit_past_the_worst_value_whichever_way_is_better() -> None:
    assert worse_edge([0.5, 1.0], "min", 2) == pytest.approx([1.03, 1.06])  # a loss: above the highest value
    assert worse_edge([0.5, 1.0], "max", 1) == pytest.approx([0.47])  # an accuracy: below the lowest value
    board = make_board(VARIANTS, choice={"axis": "lr", "metric": "final_val_loss", "goal": "max", "groups": []})
    assert check_spec(True, board).goal == "max"
    other_metric = check_spec(
        {"axis": "lr", "metric": "final_train_loss"},
        make_board(
            board["variants"]
            + [make_variant("pre/both,lr=0.1", [0], metrics={"final_train_loss": {"per_seed": [1.0]}})],
            choice=board["choice"],
        ),
    )
    assert other_metric.goal == "min"  # the choice's goal is its metric's: another metric is a loss unless it says


def test_a_spec_that_names_no_grid_or_metric_of_the_board_is_one_line() -> None:
    board = make_board(VARIANTS)
    with pytest.raises(ValueError, match=r"^bench\.grid_plot\.axis: no variant of the board is labelled alpha0="):
        check_spec({"axis": "alpha0", "metric": "final_val_loss"}, board)
    with pytest.raises(ValueError, match=r"^bench\.grid_plot\.metric: 'val_loss' is not a metric of the board; "):
        check_spec({"axis": "lr", "metric": "val_loss"}, board)
    with pytest.raises(ValueError, match=r"^bench\.grid_plot\.goal: must be min or max, got 'best'$"):
        check_spec({"axis": "lr", "metric": "final_val_loss", "goal": "best"}, board)


def test_a_board_with_no_variant_yet_draws_an_empty_figure(tmp_path: Path) -> None:
    assert positions([]) == ({}, False)
    path = plot_grid(make_board([]), {"axis": "lr", "metric": "final_val_loss"}, tmp_path / "by_lr.png")
    assert path.exists()
