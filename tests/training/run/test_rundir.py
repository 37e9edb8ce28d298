"""Run folders: a run is found by its config hash and seed, whatever label its folder carries."""

from __future__ import annotations

from pathlib import Path

from normbench.training.run.rundir import RECORD_NAME, run_dir


def finished(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / RECORD_NAME).write_text("{}")
    return folder


def test_a_seed_is_found_where_it_lies_under_any_label(tmp_path: Path) -> None:
    old = finished(tmp_path / "majority" / "old-abc123def456" / "seed0")
    new1 = finished(tmp_path / "majority" / "new-abc123def456" / "seed1")
    assert run_dir(tmp_path, "majority", "new", "abc123def456", 0) == old  # never trained twice
    assert run_dir(tmp_path, "majority", "zzz", "abc123def456", 1) == new1
    # a new seed joins the folder of its own label, or else the first folder of its config
    assert (
        run_dir(tmp_path, "majority", "new", "abc123def456", 2) == tmp_path / "majority" / "new-abc123def456" / "seed2"
    )
    assert run_dir(tmp_path, "majority", "zzz", "abc123def456", 2) == new1.parent.parent / "new-abc123def456" / "seed2"
    # another config's folder is never used
    assert (
        run_dir(tmp_path, "majority", "new", "fff123def456", 0) == tmp_path / "majority" / "new-fff123def456" / "seed0"
    )
    assert (
        run_dir(tmp_path / "none", "lm", "x", "abc123def456", 0)
        == tmp_path / "none" / "lm" / "x-abc123def456" / "seed0"
    )
