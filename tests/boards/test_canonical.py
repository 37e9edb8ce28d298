"""One run, one result: every board that shows a run shows its canonical values."""

from __future__ import annotations

import json
from pathlib import Path

from normbench.boards.canonical import adopt_canonical, conflicts, published_variants

RESULTS = Path(__file__).resolve().parents[2] / "results"


def test_every_committed_board_shows_a_run_with_its_canonical_values() -> None:
    assert conflicts(RESULTS) == []
    shown = published_variants(RESULTS)
    assert len(shown[("lm", "457fc5b2c93d")]) >= 5  # the LM LayerNorm baseline is on five boards, one result


def variant(values: dict[str, list[float]], commit: str) -> dict:
    return {
        "name": "pre/both",
        "config_hash": "abc123",
        "seeds": [0, 1],
        "status": "done",
        "metrics": {m: {"per_seed": v, "n": 2, "mean": sum(v) / 2, "std": 0.1} for m, v in values.items()},
        "provenance": {"git_commits": [commit], "dirty": commit == "dirty"},
    }


def write(folder: Path, generated_at: str, v: dict) -> dict:
    folder.mkdir(parents=True)
    doc = {"task": "lm", "generated_at": generated_at, "variants": [v]}
    (folder / "leaderboard.json").write_text(json.dumps(doc))
    return doc


def test_a_later_board_takes_the_values_of_the_board_that_published_the_run_first(tmp_path: Path) -> None:
    write(tmp_path / "lm", "2026-01-01T00:00:00Z", variant({"loss": [5.0, 5.1]}, "aaa"))
    later = write(
        tmp_path / "lm" / "later", "2026-02-01T00:00:00Z", variant({"loss": [5.0, 5.2], "keys": [0.1, 0.2]}, "dirty")
    )
    assert conflicts(tmp_path) == [("lm", "abc123", "lm/later", ["loss"])]
    new, changed = adopt_canonical(later, "lm/later", tmp_path)
    assert changed == ["pre/both (abc123): the values of results/lm/"]
    (v,) = new["variants"]
    assert v["metrics"]["loss"]["per_seed"] == [5.0, 5.1] and v["provenance"]["git_commits"] == ["aaa"]
    assert v["metrics"]["keys"] == {
        "per_seed": [None, None],
        "n": 0,
        "mean": None,
        "std": None,
        "note": "not measured on the canonical runs (results/lm/)",
    }
    assert v["canonical"] == "lm"
    first = json.loads((tmp_path / "lm" / "leaderboard.json").read_text())
    assert adopt_canonical(first, "lm", tmp_path) == (first, [])  # the first board keeps its own
