"""The analyses' commands check where they write before the work: an unwritable or full output folder is one
line and exit status 2, with nothing computed and nothing written; a write that fails anyway is one line too."""

from __future__ import annotations

import errno
import os
import shutil
from collections import namedtuple
from pathlib import Path

import pytest

import normbench.run_analyses.decomposition as decomposition
from tests.tiny_runs import copy_of

Usage = namedtuple("Usage", "total used free")


@pytest.fixture
def blocked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Two folders: ``locked`` (not writable) and ``full`` (on a full disk), as the checks see them."""
    folders = {"locked": tmp_path / "locked", "full": tmp_path / "full"}
    for folder in folders.values():
        folder.mkdir()
    real_access, real_usage = os.access, shutil.disk_usage
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == folders["locked"] else real_access(p, mode))
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(1, 1, 0) if Path(p) == folders["full"] else real_usage(p))
    return folders


MESSAGES = {"locked": "is not writable", "full": "is full (0 MiB free"}


def one_line(out, field: str, folder: Path, why: str) -> None:  # noqa: ANN001
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(lines) == 1, out.stderr[-2000:]
    assert lines[0].startswith(f"normbench: error: {field}: ") and str(folder) in lines[0] and why in lines[0]


@pytest.mark.parametrize("where", ["locked", "full"])
def test_random_grid_checks_its_folder_before_the_grid(
    where: str, blocked: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, normbench_in_process
) -> None:  # noqa: ANN001
    import normbench.analysis.random_grid as grid_module  # imported by the command when it runs

    monkeypatch.setattr(
        grid_module, "random_grid", lambda *a, **k: pytest.fail("the grid was computed before the check")
    )
    folder = blocked[where]
    out = normbench_in_process("random_grid", "--runs", "2", "--results_dir", str(folder), cwd=tmp_path)
    one_line(out, "results_dir", folder, MESSAGES[where])
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("where", ["locked", "full"])
def test_decompose_checks_its_folder_before_the_decomposition(
    where: str,
    blocked: dict[str, Path],
    tiny_sweep: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    normbench_in_process,  # noqa: ANN001
) -> None:
    _, run = copy_of(tiny_sweep, tmp_path / "copy")
    monkeypatch.setattr(decomposition, "decompose_run", lambda *a: pytest.fail("decomposed before the check"))
    folder = blocked[where] / "out"
    ckpt = run / "checkpoints" / "last.ckpt"
    out = normbench_in_process("analyze", "decompose", "--ckpt", str(ckpt), "--out", str(folder), cwd=tmp_path)
    one_line(out, "out", blocked[where], MESSAGES[where])
    assert list(blocked[where].iterdir()) == []


def test_a_write_that_fails_after_the_checks_is_one_line(
    tiny_sweep: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, normbench_in_process
) -> None:  # noqa: ANN001
    """The disk fills up during the work: one line naming the file, exit status 1, the old file in place."""
    _, run = copy_of(tiny_sweep, tmp_path / "copy")
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "decomposition.json").write_text("{}")

    def no_space(path: Path, obj: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(decomposition, "atomic_write_json", no_space)
    ckpt = run / "checkpoints" / "last.ckpt"
    args = ("analyze", "decompose", "--ckpt", str(ckpt), "--sequences", "4", "--out", str(folder))
    out = normbench_in_process(*args, cwd=tmp_path)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert (
        lines[-1]
        == f"normbench: error: {folder / 'decomposition.json'}: No space left on device (that file is left as it was)"
    )
    assert (folder / "decomposition.json").read_text() == "{}"
