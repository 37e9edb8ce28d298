"""Run records' provenance (which commit, and whether the code differed from it); records are strict JSON."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from normbench.training.run.records import RunRecordLogger, add_points, git_state, read_record


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True, capture_output=True
    )


def test_generated_results_do_not_make_the_code_dirty(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "results").mkdir()
    (tmp_path / "src" / "model.py").write_text("x = 1\n")
    (tmp_path / "results" / "leaderboard.md").write_text("old\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "init")
    clean = git_state(tmp_path / "src")
    assert clean["dirty"] is False and len(clean["git_commit"]) == 40

    (tmp_path / "results" / "leaderboard.md").write_text("new\n")  # an output written by a build
    assert git_state(tmp_path / "src")["dirty"] is False
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("a results page\n")
    git(tmp_path, "add", "docs")
    git(tmp_path, "commit", "-qm", "docs")
    (tmp_path / "docs" / "page.md").write_text("rewritten after a bake\n")  # the results pages a bake refreshes
    assert git_state(tmp_path / "src")["dirty"] is False
    (tmp_path / "README.md").write_text("# project\n")
    git(tmp_path, "add", "README.md")
    git(tmp_path, "commit", "-qm", "readme")
    (tmp_path / "README.md").write_text("# project\n\nits results teaser, rewritten by a card\n")
    assert git_state(tmp_path / "src")["dirty"] is False
    (tmp_path / "src" / "model.py").write_text("x = 2\n")  # the code itself
    assert git_state(tmp_path / "src")["dirty"] is True
    assert git_state(tmp_path)["dirty"] is True


def test_records_are_strict_json_and_old_bare_nan_records_still_load(tmp_path: Path) -> None:
    series: dict = {}
    add_points(series, {"train/loss_step": float("nan"), "test/acc": 0.5, "epoch": 0}, 2)
    add_points(series, {"train/loss_step": float("inf")}, 3)
    assert series == {"train/loss_step": [[3, None], [4, None]], "test/acc": [[3, 0.5]]}

    logger = RunRecordLogger(tmp_path / "new" / "record.json", {"task": "t", "seed": 0})
    logger.series = {"train/loss_step": [[1, float("nan")]]}  # e.g. restored from an older checkpoint
    logger.write("diverged", diverged_at_step=0)

    def refuse(name: str) -> None:
        raise ValueError(name)

    text = (tmp_path / "new" / "record.json").read_text()
    assert json.loads(text, parse_constant=refuse)["series"] == {"train/loss_step": [[1, None]]}

    old = tmp_path / "old" / "record.json"
    old.parent.mkdir()
    old.write_text('{"status": "diverged", "series": {"train/loss_step": [[1, 2.0], [2, NaN], [3, Infinity]]}}')
    assert read_record(old)["series"]["train/loss_step"] == [[1, 2.0], [2, None], [3, None]]
