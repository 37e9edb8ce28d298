"""A rebuilt board and its figures: a new figure kind is written, a figure another command drew is kept."""

from __future__ import annotations

import json
from pathlib import Path

from normbench.reporting.write import figures_kept, kept_as_published
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
    same = kept_as_published(out, doc, False, [str(out / "loss.png"), str(out / "accuracy.png")])
    assert same is not None and "is unchanged (same runs, values and verdicts)" in same
    assert kept_as_published(out, doc, False, ["by_lr.png", "loss.png", "accuracy.png"]) is None


def test_figures_the_build_does_not_draw_stay_on_the_board_while_their_files_do(tmp_path: Path) -> None:
    out, _ = published(tmp_path)
    assert figures_kept(out, ["/stage/by_lr.png", "/stage/loss.png", "/stage/accuracy.png"]) == ["geometry_3d.png"]
    (out / "geometry_3d.png").unlink()
    assert figures_kept(out, ["loss.png"]) == ["accuracy.png"]
    assert figures_kept(tmp_path / "nowhere", ["loss.png"]) == []


def test_a_figure_kept_is_named_once_by_its_file_name(tmp_path: Path) -> None:
    out, doc = published(tmp_path)
    listed = ["sub/loss.png", "accuracy.png", "accuracy.png", "/abs/geometry_3d.png"]
    (out / "leaderboard.json").write_text(json.dumps({**doc, "figures": listed}), encoding="utf-8")
    assert figures_kept(out, ["/stage/loss.png"]) == ["accuracy.png", "geometry_3d.png"]
