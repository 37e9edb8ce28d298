"""A board's figures are deterministic (the same data, the same bytes, no metadata), and a rebuild touches only the
files whose content changed: the same data leave every file as it was (bytes, mtime, inode)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from normbench.io import atomic_files, atomic_write_text
from normbench.publish.write import ResultsOptions, write_results
from tests.factories import make_record

LOSS = {"train/loss_step": {0: [[10, 2.0], [20, 1.0], [30, 0.5]], 1: [[10, 3.0], [20, 1.5], [30, 0.6]]}}
BENCH = {
    "metrics": {"final_loss": {"series": "train/loss_step", "at_step": "last"}},
    "plots": {
        "loss.png": {"series": "train/loss_step", "title": "training loss", "logy": True},
        "accuracy.png": {"series": "test/acc", "title": "test accuracy"},
    },
}


def record(variant: str, seed: int) -> dict[str, Any]:
    """A finished run whose config hash is its config's (what :func:`normbench.training.run.verify.check_record` reads)."""
    from normbench.training.run.rundir import record_config_hash

    norm = {"component": variant.split("/")[1], "affine": False, "eps": 0.0}
    config = {
        "model": {"class_path": "normbench.tasks.majority.MajorityModule", "init_args": {"attn_norm": norm}},
        "seed_everything": seed,
    }
    loss = LOSS["train/loss_step"][seed]
    series = {"train/loss_step": loss, "test/acc": [[step, 1.0 - v / 4] for step, v in loss]}
    made = make_record(variant, seed, series=series, config=config)
    return {**made, "config_hash": record_config_hash(made)}


def planned(runs_dir: Path) -> list[SimpleNamespace]:
    """Two variants of two seeds, their records written under ``runs_dir``."""
    runs = []
    for variant in ("pre/both", "pre/none"):
        for seed in (0, 1):
            path = runs_dir / variant.replace("/", "_") / f"seed{seed}" / "record.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            rec = record(variant, seed)
            path.write_text(json.dumps(rec), encoding="utf-8")
            runs.append(SimpleNamespace(variant=variant, seed=seed, record_path=path, config_hash=rec["config_hash"],
                                        config=rec["config"]))  # fmt: skip
    return runs


def build(root: Path, bench: dict[str, Any] = BENCH) -> Path:
    """Write the fixture board with its figures under ``root``; its folder."""
    out = root / "results" / "majority" / "fixture"
    write_results(planned(root / "runs"), out, ResultsOptions("majority", "quick", {"bench": bench}))
    return out


def state(folder: Path) -> dict[str, tuple[bytes, int, int]]:
    """Each file's bytes, mtime and inode."""
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns, p.stat().st_ino) for p in sorted(folder.iterdir())}


def test_the_figures_of_the_same_board_are_the_same_bytes(tmp_path: Path) -> None:
    first, second = build(tmp_path / "a"), build(tmp_path / "b")
    figures = sorted(p.name for p in first.glob("*.png"))
    assert figures == ["accuracy.png", "loss.png"]
    for name in figures:
        png = (first / name).read_bytes()
        assert png == (second / name).read_bytes(), name
        assert b"tEXt" not in png and b"Matplotlib" not in png and b"tIME" not in png  # no version, no date


def test_a_rebuild_of_the_same_data_touches_no_file(tmp_path: Path) -> None:
    out = build(tmp_path)
    before = state(out)
    build(tmp_path)
    assert state(out) == before


def test_a_rebuild_that_changes_the_board_only_leaves_the_figures_untouched(tmp_path: Path) -> None:
    out = build(tmp_path)
    before = state(out)
    metrics = {**BENCH["metrics"], "first_loss": {"series": "train/loss_step", "at_step": 10}}
    build(tmp_path, {**BENCH, "metrics": metrics})  # a new column: the board changes, the figures' data do not
    after = state(out)
    assert after["leaderboard.json"][0] != before["leaderboard.json"][0]
    assert after["loss.png"] == before["loss.png"] and after["accuracy.png"] == before["accuracy.png"]


def test_a_unit_whose_files_say_the_same_moves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "board"

    def write(notes: str) -> None:
        with atomic_files(folder) as stage:
            atomic_write_text(stage / "leaderboard.json", "{}\n")
            atomic_write_text(stage / "notes.md", notes)

    write("same\n")
    before = state(folder)
    write("same\n")
    assert state(folder) == before
    write("other\n")
    after = state(folder)
    assert after["leaderboard.json"] == before["leaderboard.json"] and after["notes.md"][0] == b"other\n"
