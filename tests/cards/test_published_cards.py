"""The published report cards: each has its page, says what its boards say, and agrees with every other board that
holds the same runs."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
import yaml

from normbench.archive import Board, load_board
from normbench.site import board_pages, card_pages

REPO = Path(__file__).resolve().parents[2]
RESULTS, DOCS = REPO / "results", REPO / "docs"
PUBLISHED = {"dyt", "scalenorm", "qknorm", "peri", "pnorm", "nannorm", "runawaynorm"}


def cards() -> dict[str, dict]:
    return {slug: card_pages.load_card(slug, RESULTS) for slug in card_pages.card_slugs(RESULTS)}


@functools.cache
def other_boards() -> dict[str, Board]:
    """Every committed board that is no card's, loaded once."""
    keys = [key for key in board_pages.boards(RESULTS) if not card_pages.page_of_card_board(key)]
    return {key: load_board(RESULTS / key) for key in keys}


def test_the_newer_norms_a_plugin_and_two_broken_norms_have_published_cards_with_pages() -> None:
    assert PUBLISHED <= set(cards())
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8").replace("!!python", "#"))["nav"]
    pages = json.dumps(nav)
    for slug in cards():
        assert (DOCS / card_pages.card_page_of(slug)).is_file(), slug
        assert f'"{card_pages.card_page_of(slug)}"' in pages, f"{slug}: not in the mkdocs nav"
    assert cards()["nannorm"]["broken"].startswith("at d = 8: returns values that are not finite")
    runaway = {t["task"]: t for t in cards()["runawaynorm"]["tasks"]}["majority"]
    assert runaway["diverged_at_step"] and set(runaway["diverged_at_step"]) == set(map(str, runaway["seeds"]))


@pytest.mark.parametrize("slug", sorted(PUBLISHED))
def test_a_published_cards_numbers_are_its_boards_and_every_board_that_holds_the_same_runs(slug: str) -> None:
    card = card_pages.load_card(slug, RESULTS)
    shared = 0
    for section in card["tasks"]:
        if section["status"] == "not run":  # no run of the card on that task (or placement) yet: no board, no value
            assert not (RESULTS / section["board"] / "leaderboard.json").exists() and "headline" not in section
            continue
        board = load_board(RESULTS / section["board"])
        for metric, row in section["headline"].items():
            for role, name in section["variants"].items():
                variant = board.by_name.get(name)
                if variant is None:  # not trained yet (its runs are queued): the card shows no value
                    assert row[role] is None, (section["board"], name, metric)
                    continue
                assert row[role] == variant.metrics[metric].to_json(), (section["board"], name, metric)
                for key, other_board in other_boards().items():
                    if not key.startswith(section["task"]):
                        continue
                    for other in other_board.variants:
                        same = other.config_hash == variant.config_hash and other.seeds == variant.seeds
                        if same and metric in other.metrics:
                            assert other.metrics[metric].to_json() == row[role], (key, other.name, metric)
                            shared += 1
    assert shared or card["broken"], f"{slug}: shares no run with another board"
