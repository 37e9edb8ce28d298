"""Re-planning a card keeps what its published configs declare."""

from __future__ import annotations

import json
from pathlib import Path

from normbench.cards.make import drop_superseded


def published_board(results: Path, key: str, variants: dict[str, str]) -> None:
    (results / key).mkdir(parents=True)
    doc = {"variants": [{"name": name, "config_hash": digest} for name, digest in variants.items()]}
    (results / key / "leaderboard.json").write_text(json.dumps(doc), encoding="utf-8")


def test_a_card_planned_again_keeps_the_reason_its_dropped_runs_are_superseded(tmp_path: Path) -> None:
    published_board(tmp_path, "cards/x/majority", {"pre/both": "aaa", "pre/scale": "bbb", "pre/x": "ccc"})
    item = {"board": "cards/x/majority", "preset": "quick-10", "variants": ["pre/both", "pre/scale-blocks", "pre/x"]}
    presets: dict = {}
    drop_superseded(presets, [item], "majority", tmp_path)
    first = presets["quick-10"]["bench"]["superseded"]
    assert first["configs"] == ["bbb"] and "no longer trains pre/scale" in first["why"]
    again: dict = {"quick-10": {"bench": {"superseded": dict(first)}}}  # the card's published config, planned again
    drop_superseded(again, [item], "majority", tmp_path)
    assert again["quick-10"]["bench"]["superseded"] == first
    other = {"quick-10": {"bench": {"superseded": {"why": "an older reason", "configs": ["zzz"]}}}}
    drop_superseded(other, [item], "majority", tmp_path)
    assert other["quick-10"]["bench"]["superseded"]["why"] == f"an older reason; {first['why']}"
    assert other["quick-10"]["bench"]["superseded"]["configs"] == ["bbb", "zzz"]
