"""Run records' provenance: which commit, and whether the code differed from it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from normbench.training.records import git_state


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                   capture_output=True)


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
    (tmp_path / "src" / "model.py").write_text("x = 2\n")  # the code itself
    assert git_state(tmp_path / "src")["dirty"] is True
    assert git_state(tmp_path)["dirty"] is True
