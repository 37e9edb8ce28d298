"""Citation: CITATION.cff follows the package, and `normbench cite` names the commit that holds a leaderboard."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml

import normbench
from normbench.results import citation

REPO = Path(normbench.__file__).resolve().parents[2]


def test_citation_cff_is_complete_and_follows_the_package() -> None:
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert {
        "cff-version",
        "message",
        "title",
        "authors",
        "version",
        "date-released",
        "license",
        "preferred-citation",
    } <= set(cff)
    assert str(cff["version"]) == normbench.__version__ == version("normbench")
    preferred = cff["preferred-citation"]
    assert preferred["type"] == "software" and str(preferred["version"]) == normbench.__version__
    assert preferred["title"] == cff["title"] and preferred["authors"] == cff["authors"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def test_cite_names_the_commit_that_contains_the_leaderboard(tmp_path: Path) -> None:
    board = tmp_path / "results" / "majority" / "leaderboard.json"
    board.parent.mkdir(parents=True)
    shutil.copy(REPO / "results" / "majority" / "leaderboard.json", board)
    git(tmp_path, "init", "-q")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "board")
    sha = git(tmp_path, "rev-parse", "HEAD")
    built = json.loads(board.read_text())["provenance"]["git_commit"]
    entry = citation("majority", results_dir=tmp_path / "results")
    assert entry.startswith(f"@misc{{normbench_majority_{sha[:7]},") and f"at commit {sha}" in entry
    assert f"built at commit {built}" in entry and f"version = {{{normbench.__version__}}}" in entry
    out = subprocess.run(
        [sys.executable, "-m", "normbench", "cite", "majority", "--results_dir", str(tmp_path / "results")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and out.stdout.strip() == entry
    board.write_text(board.read_text().replace('"majority"', '"majority" ', 1))  # edited since: nothing to cite yet
    with pytest.raises(ValueError, match="not committed as it is"):
        citation("majority", results_dir=tmp_path / "results")
    out = subprocess.run(
        [sys.executable, "-m", "normbench", "cite", str(board)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and out.stderr.startswith("normbench: error: source:")
