"""The publishing rule reads a published board in either format: a build that says the same as a compact board is
not written again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normbench.archive import load_board, parse_board
from normbench.archive.compact import compact
from normbench.publish import files as publish
from normbench.publish.compare import kept_as_published
from tests.factories import make_board, make_variant

NULL = {"mean": 0.25, "sem": 0.001, "sets": 50, "sanity_check": False, "basis": "layer 1 keys, d = 7, n = 64"}


def board_with_nulls() -> dict:
    metric = {"per_seed": [0.3], "n": 1, "mean": 0.3, "std": None, "chance": NULL}
    return make_board([make_variant(v, [0], f"h-{v}", metrics={"u_L1": metric, "u_L2": metric}) for v in ("a", "b")])


@pytest.mark.parametrize("published", ["compact", "indented"])
def test_a_build_that_says_the_same_as_a_board_in_either_format_is_not_written(tmp_path: Path, published: str) -> None:
    doc = board_with_nulls()
    out = tmp_path / "majority"
    out.mkdir()
    text = json.dumps(compact(doc)) if published == "compact" else json.dumps(doc, indent=2)
    (out / "leaderboard.json").write_text(text, encoding="utf-8")
    assert "is unchanged" in str(kept_as_published(out, parse_board(doc), False))


def test_the_published_board_is_read_with_its_shared_blocks_in_place(tmp_path: Path) -> None:
    doc = board_with_nulls()
    path = tmp_path / "leaderboard.json"
    path.write_text(json.dumps(compact(doc)), encoding="utf-8")
    assert "shared" in json.loads(path.read_text(encoding="utf-8"))
    assert publish.read_board(path, "--results_dir") == doc
    assert publish.leaderboard_runs(load_board(path)) == {("a", 0): "h-a", ("b", 0): "h-b"}
