"""Runs trained from uncommitted code are not published unless allowed (``--uncommitted``), and then the board
says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from normbench.publish import files as publish
from normbench.render.board import render_uncommitted

RESULTS = Path(__file__).parents[2] / "results"


def record(dirty: bool | None, seed: int = 0) -> dict:
    return {"variant": "pre/both", "seed": seed, "provenance": {"git_commit": "a" * 40, "dirty": dirty}}


def test_a_dirty_run_is_refused_in_the_repository_results_and_marked_when_forced(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(publish, "repository_root", lambda: tmp_path)
    out = tmp_path / "results" / "majority"
    assert publish.check_committed(out, [record(False)]) is False
    with pytest.raises(publish.Refused, match=r"1 runs of .* were trained from uncommitted code \(pre/both seed 1\)"):
        publish.check_committed(out, [record(False), record(True, 1)])
    with pytest.raises(publish.Refused, match="pass --uncommitted true"):
        publish.check_committed(out, [record(None)])  # a tree whose state is unknown is not a commit either
    assert publish.check_committed(out, [record(True)], uncommitted=True) is True
    # outside the repository's results/ nothing is published: the board is only marked
    assert publish.check_committed(tmp_path / "elsewhere", [record(True)]) is True


def test_the_mark_is_rendered() -> None:
    assert "Trained from uncommitted code" in render_uncommitted(True)[0]
    assert render_uncommitted(None) == []


def test_no_published_board_names_uncommitted_code_unless_marked() -> None:
    for path in RESULTS.rglob("leaderboard.json"):
        board = json.loads(path.read_text())
        dirty = [v["name"] for v in board.get("variants") or [] if (v.get("provenance") or {}).get("dirty")]
        if dirty or (board.get("provenance") or {}).get("dirty"):
            assert board.get("uncommitted_code") is True, path
            assert "Trained from uncommitted code" in (path.parent / "leaderboard.md").read_text(), path
