"""A grid board's figure: its metric against the grid value, one line per base variant, diverged seeds marked."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from normbench.reporting.grid_plot import check_spec, grid_points, plot_grid, positions
from tests.factories import make_board, make_variant


def loss(*values: float | None) -> dict:
    return {"final_val_loss": {"per_seed": list(values)}}


VARIANTS = [
    make_variant("pre/both,lr=0.016", [0, 1], metrics=loss(5.1, 5.2)),
    make_variant("pre/both,lr=0.001", [0, 1], metrics=loss(5.5, 5.6)),
    make_variant("post/both,lr=0.016", [0, 1], metrics=loss(5.0, None), diverged_at_step={"1": 40}),
    make_variant("post/both,lr=0.001", [0, 1], metrics=loss(5.4, 5.45)),
    make_variant("pre/both", [0], metrics=loss(5.3)),  # no grid value: not on the figure
]


def test_points_are_grouped_by_base_in_grid_order_with_their_diverged_seeds() -> None:
    points = grid_points(VARIANTS, "lr", "final_val_loss")
    assert list(points) == ["pre/both", "post/both"]
    assert points["pre/both"] == [("0.001", [5.5, 5.6], 0), ("0.016", [5.1, 5.2], 0)]
    assert points["post/both"][1] == ("0.016", [5.0], 1)


def test_numbers_spanning_ten_times_are_on_a_log_axis_and_other_values_keep_the_grid_order() -> None:
    assert positions(["0.016", "0.001"]) == ({"0.001": 0.001, "0.016": 0.016}, True)
    assert positions(["2.0", "4.0"]) == ({"2.0": 2.0, "4.0": 4.0}, False)
    assert positions(["50.0;20.0;20.0", "10.0", "20.0"]) == (
        {"10.0": 0.0, "20.0": 1.0, "50.0;20.0;20.0": 2.0},
        False,
    )


def test_the_figure_is_written_and_the_spec_defaults_to_the_choice(tmp_path: Path) -> None:
    board = make_board(VARIANTS, choice={"axis": "lr", "metric": "final_val_loss", "groups": []})
    assert check_spec(True, board) == ("lr", "final_val_loss")
    path = plot_grid(board, True, tmp_path / "by_lr.png")
    assert Image.open(path).size == (840, 504)
    with pytest.raises(ValueError, match=r"^bench\.grid_plot\.axis: must name the grid's label"):
        check_spec(True, make_board(VARIANTS))
    with pytest.raises(ValueError, match=r"^bench\.grid_plot\.metric: must name one of the board's metrics"):
        check_spec({"axis": "lr"}, make_board(VARIANTS))
