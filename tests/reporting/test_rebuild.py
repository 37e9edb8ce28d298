"""Boards are views of the run archive: each headline board, rebuilt from the committed archive alone (a fresh clone,
no runs directory), comes out byte for byte as committed, and no other file under ``results/`` changes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.slow  # the language model's board takes minutes: its matched nulls are drawn again
@pytest.mark.parametrize("task", ["majority", "lm", "sst2"])
def test_a_rebuild_from_the_archive_alone_leaves_the_published_results(
    task: str,
    tmp_path: Path,
    normbench_in_process,  # noqa: ANN001
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the corpora where a clone of the repository finds them (planning builds each variant's data module)
    monkeypatch.setenv("NORMBENCH_DATA_DIR", os.environ.get("NORMBENCH_DATA_DIR", str(REPO.parent / "shared" / "data")))
    results = tmp_path / "results"  # beside no runs/, as in a fresh clone; paths the boards print are relative
    shutil.copytree(REPO / "results", results)
    before = files(results)
    done = normbench_in_process("leaderboard", task, "--results_dir=results", "--runs_dir=runs", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    after = files(results)
    assert sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name)) == []
