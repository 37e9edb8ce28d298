"""Figures skip values that are not finite; a variant without any still has its legend entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from normbench.render import plots
from normbench.run_analyses.decomposition import finite_band, plot_decomposition

NAN = float("nan")
SPEC = {"series": "train/loss_step"}


def run(seed: int, points: list[list[Any]], status: str = "done", diverged_at: int | None = None) -> dict[str, Any]:
    record = {"seed": seed, "status": status, "series": {"train/loss_step": points}}
    return {**record, "diverged_at_step": diverged_at} if diverged_at is not None else record


def legend_of(
    monkeypatch: pytest.MonkeyPatch, by_variant: dict[str, list[dict[str, Any]]], spec: dict[str, Any], path: Path
) -> list[str]:
    """Draw ``by_variant`` and return the legend's labels (the PNG is still written)."""
    labels: list[str] = []
    save = plots.save_png

    def keep_labels(fig: Any, out: Path) -> Path:
        labels.extend(t.get_text() for t in fig.axes[0].get_legend().get_texts())
        return save(fig, out)

    monkeypatch.setattr(plots, "save_png", keep_labels)
    assert plots.plot_series(by_variant, spec, path).is_file()
    return labels


def test_series_with_nan_are_drawn_without_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    by_variant = {
        "ok": [run(0, [[10, 2.0], [20, NAN], [30, 1.0]]), run(1, [[10, 2.5], [20, 1.5], [30, None]])],
        "mixed": [run(0, [[10, 2.0], [20, 1.0]]), run(1, [[10, 3.0], [20, None]], "diverged", 15)],
        "lost": [run(0, [[10, None], [20, NAN]], "diverged", 3), run(1, [[10, float("inf")]], "diverged", 4)],
    }
    spec = {"series": "train/loss_step", "logy": True, "smooth": 1}
    labels = legend_of(monkeypatch, by_variant, spec, tmp_path / "loss.png")
    assert labels == [
        "ok (n=2)",
        "mixed (n=1; seed 1 diverged at step 15)",
        "lost (n=0; seed 0 diverged at step 3; seed 1 diverged at step 4; no finite values)",
    ]


def test_a_log_axis_with_no_finite_value_stays_linear(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = {"series": "train/loss_step", "logy": True, "smooth": 10}
    only_nan = {"a": [run(0, [[10, NAN], [20, NAN]], "diverged", 1)], "b": [run(0, [[10, None]], "diverged", 2)]}
    labels = legend_of(monkeypatch, only_nan, spec, tmp_path / "loss.png")
    assert all("no finite values" in label for label in labels) and len(labels) == 2
    steps, mean, lo, hi = plots.seed_band([[[1, NAN]], [[2, None]]])
    assert steps.size == mean.size == lo.size == hi.size == 0


def test_the_decomposition_plot_skips_values_that_are_not_finite(tmp_path: Path) -> None:
    mean, lo, hi = finite_band(np.array([[1.0, NAN], [3.0, NAN]]))
    assert mean[0] == 2.0 and lo[0] == 1.0 and hi[0] == 3.0 and np.isnan(mean[1])
    finite = {"layers": {"embed": {"i": 1.0, "h": 0.0, "f": 0.0, "c": 0.0}}}
    lost = {"layers": {"embed": {"i": None, "h": NAN, "f": NAN, "c": NAN}}}
    assert plot_decomposition({"a": [finite, lost], "b": [lost]}, tmp_path / "decomposition.png").is_file()


def test_a_grid_boards_many_variants_get_their_legend_beside_the_axes(tmp_path: Path) -> None:
    """More than ``MANY`` variants: a wider figure, whose legend stands right of the axes instead of over the curves."""
    from PIL import Image

    many = {f"pre/both,lr={i}": [run(0, [[10, 2.0 + i], [20, 1.0 + i]])] for i in range(plots.MANY + 4)}
    few = dict(list(many.items())[:2])
    wide, narrow = (
        plots.plot_series(many, SPEC, tmp_path / "many.png"),
        plots.plot_series(few, SPEC, tmp_path / "few.png"),
    )
    assert Image.open(wide).size[0] == 1260 and Image.open(narrow).size[0] == 840
