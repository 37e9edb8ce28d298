"""Boards in the compact format: repeated blocks stored once and referenced, read back as the same Board."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from normbench.archive import BoardError, dumps_board, load_board, parse_board
from normbench.archive.board import recompact
from normbench.archive.compact import FORMAT, REF, SHARED, compact, expand
from tests.factories import make_board, make_variant

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
BOARDS = sorted(p for p in RESULTS.rglob("leaderboard.json") if "archive" not in p.relative_to(RESULTS).parts)

NULL = {"mean": 0.25, "sem": 0.001, "sets": 50, "sanity_check": False, "basis": "the attention input of layer 1: " * 4}
RULE = "d = mean over seeds - the null's mean; Welch 95% interval with the null's standard error; " * 2


def refs(value: Any) -> list[str]:
    """Every reference in ``value``, in document order."""
    if isinstance(value, dict):
        if set(value) == {REF}:
            return [value[REF]]
        return [r for v in value.values() for r in refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in refs(v)]
    return []


def chance_claim(variant: str, metric: str) -> dict[str, Any]:
    return {
        "id": f"normbench.chance.{variant}.{metric}",
        "owner": "normbench",
        "source": "normbench (matched random-key null)",
        "statement": f"{variant}, {metric}: above chance",
        "paper": {},
        "measured": {"trained": 0.3, "null": 0.25},
        "verdict": "inconclusive",
        "rule": RULE,
        "why": "A fraction of unselectable keys is evidence about training only beside random keys. " * 2,
    }


def fixture_board() -> dict[str, Any]:
    """Two variants sharing one null under two metrics, a null that occurs once, and claims with one rule text."""
    metric = lambda v, null: {"per_seed": [v, v], "n": 2, "mean": v, "std": 0.0, "chance": null}  # noqa: E731
    once = {**NULL, "mean": 0.5}
    variants = [
        make_variant(name, [0, 1], f"h-{name}", metrics={"u_L1": metric(0.3, NULL), "u_L2": metric(0.2, NULL)})
        for name in ("pre/both", "pre/none")
    ]
    variants[1]["metrics"]["u_L3"] = metric(0.1, once)
    claims = [{**chance_claim(v, "u_L1"), "id": f"paper.{v}"} for v in ("pre/both", "pre/none")]
    return make_board(
        variants, claims=claims, against_chance=[chance_claim(v, m) for v in ("a", "b") for m in ("u_L1", "u_L2")]
    )


def test_there_are_published_boards() -> None:
    assert len(BOARDS) >= 10


@pytest.mark.parametrize("path", BOARDS, ids=lambda p: str(p.parent.relative_to(RESULTS)))
def test_every_published_board_reads_the_same_in_the_compact_form(path: Path, tmp_path: Path) -> None:
    """The same values and verdicts: the board as published, and the same board written by today's writer."""
    published = load_board(path)
    written = tmp_path / "leaderboard.json"
    written.write_text(dumps_board(published), encoding="utf-8")
    again = load_board(written)
    assert again == published and again.to_json() == published.to_json()
    assert [c.verdict for c in again.claims] == [c.verdict for c in published.claims]
    assert [c.verdict for c in again.against_chance or ()] == [c.verdict for c in published.against_chance or ()]
    assert written.stat().st_size <= path.stat().st_size
    assert dumps_board(again) == written.read_text(encoding="utf-8")  # read and written again: the same bytes


def test_repeated_blocks_are_stored_once_and_the_contract_stays_inline() -> None:
    doc = fixture_board()
    text = dumps_board(parse_board(doc))
    written = json.loads(text)
    assert list(written)[0] == "format" and written["format"] == FORMAT and list(written)[-1] == SHARED
    ids = {k.split("-")[0]: k for k in written[SHARED]}
    assert sorted(ids) == ["chance", "rule", "why"] and len(written[SHARED]) == 3  # one null, one rule, one reason
    assert written[SHARED][ids["chance"]] == NULL
    metrics = written["variants"][1]["metrics"]
    assert metrics["u_L1"]["chance"] == metrics["u_L2"]["chance"] == {REF: f"#/{SHARED}/{ids['chance']}"}
    assert metrics["u_L3"]["chance"]["mean"] == 0.5  # occurs once: stays where it is
    assert metrics["u_L1"]["per_seed"] == [0.3, 0.3] and metrics["u_L1"]["mean"] == 0.3  # the values: inline
    assert written["claims"] == doc["claims"] and not refs(written["claims"])  # the contract's claims: as they are
    assert all(c["rule"] == {REF: f"#/{SHARED}/{ids['rule']}"} for c in written["against_chance"])
    lines = text.splitlines()
    assert not any(line.startswith(" ") for line in lines)  # no indentation
    assert len(lines) == 2 + sum(1 + (len(v) + 1 if isinstance(v, (list, dict)) and v else 0) for v in written.values())
    assert expand(written) == doc and parse_board(written) == parse_board(doc)


def test_the_compact_form_of_the_same_board_is_the_same_text() -> None:
    doc = fixture_board()
    assert dumps_board(parse_board(doc)) == dumps_board(parse_board(json.loads(json.dumps(doc))))
    assert compact(compact(doc)) == compact(doc)  # compacting a compact document changes nothing
    assert set(refs(compact(doc))) == {f"#/{SHARED}/{k}" for k in compact(doc)[SHARED]}


def test_a_board_in_the_first_format_is_read_and_written_in_the_compact_one(tmp_path: Path) -> None:
    doc = fixture_board()
    path = tmp_path / "leaderboard.json"
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    board = load_board(path)
    assert board.to_json() == doc and board.extra == {}
    assert recompact(tmp_path) is True
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == FORMAT and load_board(path) == board
    before = path.stat().st_mtime_ns
    assert recompact(path) is False and path.stat().st_mtime_ns == before  # already compact: left as it is


def test_a_published_board_recompacted_in_place_keeps_its_values(tmp_path: Path) -> None:
    source = max(BOARDS, key=lambda p: p.stat().st_size)
    path = tmp_path / "leaderboard.json"
    shutil.copyfile(source, path)
    published = load_board(source)
    recompact(path)
    assert load_board(path) == published and path.stat().st_size <= source.stat().st_size


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.update(format=3), r"board\.format: 3 is not a board format this normbench reads \(1 to 2\)"),
        (lambda d: d.update(format="2"), r"board\.format: '2' is not a board format"),
        (lambda d: d.update(shared=[]), r"board\.shared: list, not an object"),
        (lambda d: d.update(shared={}), r"board: the reference '#/shared/chance-[0-9a-f]{8}' names no block"),
    ],
)
def test_a_compact_board_that_cannot_be_expanded_is_one_line(tmp_path: Path, edit, message: str) -> None:
    doc = compact(fixture_board())
    edit(doc)
    path = tmp_path / "leaderboard.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(BoardError, match=message) as info:
        load_board(path)
    assert "\n" not in str(info.value) and str(path) in str(info.value)
