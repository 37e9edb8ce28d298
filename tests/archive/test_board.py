"""Every committed leaderboard loads as a Board and loses nothing (a compact one is written back byte for byte, one
of the first format is its indented JSON); malformed boards are one line."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from normbench.archive import Board, BoardError, Metric, dumps_board, load_board, parse_board
from normbench.archive.compact import FORMAT, expand
from normbench.io import dumps_json

ROOT = Path(__file__).resolve().parents[2]
BOARDS = sorted((ROOT / "results").rglob("leaderboard.json"))


def test_there_are_committed_boards() -> None:
    assert len(BOARDS) >= 10


@pytest.mark.parametrize("path", BOARDS, ids=lambda p: str(p.parent.relative_to(ROOT / "results")))
def test_every_committed_board_round_trips_byte_for_byte(path: Path) -> None:
    board = load_board(path)
    text = path.read_text(encoding="utf-8")
    if json.loads(text).get("format") == FORMAT:
        assert dumps_board(board) == text
    else:  # the first format, until the board is rewritten (`normbench.archive.board.recompact`)
        assert dumps_json(board.to_json(), indent=2, sort_keys=False) + "\n" == text
    assert not board.extra  # every key a board holds today is a declared field
    assert all(not v.extra and all(not m.extra for m in v.metrics.values()) for v in board.variants)
    assert all(not c.extra for c in board.claims)


def test_typed_access_and_unknown_keys_survive() -> None:
    doc = expand(json.loads((ROOT / "results" / "majority" / "leaderboard.json").read_text(encoding="utf-8")))
    doc["future_block"] = {"x": 1}
    doc["variants"][0]["metrics"]["test_acc@1000"]["future"] = [1, 2]
    board = parse_board(doc)
    metric = board.variants[0].metrics["test_acc@1000"]
    assert isinstance(metric, Metric) and metric.n == len([v for v in metric.per_seed if v is not None])
    assert board.extra == {"future_block": {"x": 1}} and metric.extra == {"future": [1, 2]}
    assert board.to_json() == doc and list(board.to_json()) == list(doc)


def test_fields_set_later_follow_in_declaration_order() -> None:
    board = load_board(ROOT / "results" / "unselectable" / "leaderboard.json")
    doc = board.replace(figures=("a.png",), rejudged={"at": "now"}).to_json()
    assert list(doc)[-2:] == ["figures", "rejudged"]  # after the keys the board had, citation among them
    assert dataclasses.replace(board, figures=None).to_json() == board.to_json()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.pop("variants"), r"board: missing key 'variants'"),
        (lambda d: d.update(task=3), r"board\.task: an integer, not a string"),
        (lambda d: d["variants"][0].pop("name"), r"board\.variants\[0\]: missing key 'name'"),
        (
            lambda d: d["variants"][0]["metrics"]["test_acc@1000"].update(mean="high"),
            r"board\.variants\[0\]\.metrics\['test_acc@1000'\]\.mean: a string, not a number or null",
        ),
        (lambda d: d["claims"][0].update(verdict="maybe"), r"board\.claims\[0\]\.verdict: 'maybe' is not one of"),
    ],
)
def test_a_malformed_board_is_one_line_naming_the_field(tmp_path: Path, edit, message: str) -> None:
    doc = json.loads((ROOT / "results" / "majority" / "leaderboard.json").read_text(encoding="utf-8"))
    edit(doc)
    path = tmp_path / "leaderboard.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(BoardError, match=message) as info:
        load_board(tmp_path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)


def test_a_board_that_is_not_json_or_absent(tmp_path: Path) -> None:
    (tmp_path / "leaderboard.json").write_text("{", encoding="utf-8")
    with pytest.raises(BoardError, match=r"not JSON: Expecting property name"):
        load_board(tmp_path)
    (tmp_path / "leaderboard.json").write_text("[1]", encoding="utf-8")
    with pytest.raises(BoardError, match=r"board: a list, not an object"):
        load_board(tmp_path / "leaderboard.json")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_board(tmp_path / "missing")


def test_a_board_is_frozen() -> None:
    board = load_board(BOARDS[0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        board.task = "other"  # type: ignore[misc]
    assert isinstance(board, Board) and Board.SCHEMA_VERSION == FORMAT == 2
