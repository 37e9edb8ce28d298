"""Plans of the shipped presets, shared by the tests that plan them: which presets the committed boards plan, and
what a whole plan holds. Planning a preset instantiates every variant (a second or so each): each preset is planned
by one test only, tests/test_published_runs.py for the published boards' presets, tests/tasks/test_configs.py for
the rest."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from normbench.archive.board_keys import key_of_folder, parse_key

ROOT = Path(__file__).resolve().parent.parent


def published_boards() -> list[Path]:
    """The committed leaderboards of sweeps (not a user's own ``--name`` sweeps, which git does not track)."""
    try:
        listed = subprocess.run(["git", "ls-files", "results"], cwd=ROOT, capture_output=True, text=True, check=True)
        paths = [ROOT / line for line in listed.stdout.splitlines() if line.endswith("leaderboard.json")]
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every board on disk
        paths = list((ROOT / "results").rglob("leaderboard.json"))
    boards = {p: json.loads(p.read_text()) for p in paths}
    return sorted(p for p, board in boards.items() if board.get("variants") and board.get("preset"))


def card_of(path: Path) -> str | None:
    """The report card whose board ``path`` (a ``leaderboard.json``) is, else ``None``."""
    key = key_of_folder(ROOT / "results", path.parent)
    return parse_key(key).card if key is not None else None


def is_card_board(path: Path) -> bool:
    """A report card's board: planned from the card's own task config, not the task's."""
    return card_of(path) is not None


def published_presets() -> set[tuple[str, str]]:
    """``(task, preset)`` of every published board planned from its task's shipped config."""
    boards = [json.loads(p.read_text()) for p in published_boards() if not is_card_board(p)]
    return {(b["task"], b["preset"]) for b in boards}


def assert_whole_plan(config: dict[str, Any], runs: list[Any], seeds: int) -> None:
    """A preset's plan holds each named variant at every point of its grid (a tuned preset: each variant's shared
    and tuned point), ``seeds`` runs per variant, one record each, and one config hash per variant."""
    bench = config["bench"]
    named = list(bench.get("default_variants") or bench["variants"])
    assert set(named) <= set(bench["variants"])
    points = 1
    for values in (bench.get("grid") or {}).values():  # a YAML grid crosses the named variants
        points *= len(values)
    expected = len(named) * points
    if bench.get("tuned"):  # of the grid, each chosen variant's shared and tuned points (one if they agree)
        waiting = {row["base"] for row in bench["tuned"]["bases"] if row.get("waiting")}  # its own grid not whole
        rows = [row for row in bench["tuned"]["bases"] if row["base"] not in waiting]
        expected = sum(1 + (row["tuned"] not in (None, row["shared"])) for row in rows)
        named = [n for n in named if n not in waiting]
    variants = list(dict.fromkeys(r.variant for r in runs))
    assert len(variants) == expected and {v.split(",")[0] for v in variants} == set(named)
    assert len(runs) == len(variants) * seeds
    assert len({r.record_path for r in runs}) == len(runs)  # one record per (variant, seed)
    hashes = {v: {r.config_hash for r in runs if r.variant == v} for v in variants}
    assert all(len(h) == 1 for h in hashes.values())  # seeds share the variant's config hash
    assert len({next(iter(h)) for h in hashes.values()}) == len(variants)
