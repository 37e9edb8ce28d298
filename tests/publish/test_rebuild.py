"""Boards are views of the run archive: each headline board, rebuilt from the committed archive alone (a fresh clone,
no runs directory, no corpus), comes out byte for byte as committed, and no other file under ``results/`` changes."""

from __future__ import annotations

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
    # no corpus, and no hub: what a board reads of its data comes from the archive's data facts
    monkeypatch.setenv("NORMBENCH_DATA_DIR", str(tmp_path / "no-corpora"))
    for offline in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.setenv(offline, "1")
    results = tmp_path / "results"  # beside no runs/, as in a fresh clone; paths the boards print are relative
    shutil.copytree(REPO / "results", results)
    before = files(results)
    done = normbench_in_process("leaderboard", task, "--results_dir=results", "--runs_dir=runs", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    after = files(results)
    assert sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name)) == []
