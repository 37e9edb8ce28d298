"""Atomic writes keep the permissions a plain write would give; JSON is written strict (no NaN)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from normbench.io import atomic_write_json, atomic_write_text, dumps_json, strict_json


def test_atomic_write_honours_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        plain = tmp_path / "plain.txt"
        plain.write_text("x")
        atomic = atomic_write_text(tmp_path / "atomic.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(atomic.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode) == 0o644


def test_json_is_strict_non_finite_floats_become_null(tmp_path: Path) -> None:
    doc = {"a": float("nan"), "b": [1.0, float("inf"), (2, -float("inf"))], "c": {"d": 0.5, "e": "x", "f": None}}
    assert strict_json(doc) == {"a": None, "b": [1.0, None, [2, None]], "c": {"d": 0.5, "e": "x", "f": None}}

    def refuse(name: str) -> None:
        raise ValueError(f"not strict JSON: {name}")

    path = atomic_write_json(tmp_path / "doc.json", doc)
    assert json.loads(path.read_text(), parse_constant=refuse) == strict_json(doc)
    assert json.loads(dumps_json([float("nan")]), parse_constant=refuse) == [None]


def test_an_output_folder_is_checked_writable_without_creating_it(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    import pytest

    from normbench.io import check_writable

    check_writable(tmp_path / "a" / "b", "runs_dir")  # created later, under a writable folder
    assert not (tmp_path / "a").exists()
    (tmp_path / "file").write_text("")
    with pytest.raises(
        ValueError,
        match=f"results_dir: '{tmp_path / 'file' / 'x'}' cannot be a folder: "
        f"{tmp_path / 'file'} is a file; choose another results_dir",
    ):
        check_writable(tmp_path / "file" / "x", "results_dir")
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # a read-only folder (root may write anywhere)
    with pytest.raises(ValueError, match=f"runs_dir: {tmp_path} is not writable; make it writable or choose another"):
        check_writable(tmp_path / "runs", "runs_dir")


def test_a_unit_of_files_lands_whole_or_not_at_all(tmp_path: Path) -> None:
    from normbench.io import atomic_files

    out = tmp_path / "board"
    out.mkdir()
    (out / "leaderboard.json").write_text("old")
    (out / "loss.png").write_bytes(b"old")
    (out / "other.txt").write_text("kept")
    try:
        with atomic_files(out) as stage:
            (stage / "loss.png").write_bytes(b"new")
            raise RuntimeError("the render failed")
    except RuntimeError:
        pass
    assert (out / "loss.png").read_bytes() == b"old" and (out / "leaderboard.json").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board"]  # no staging folder left
    with atomic_files(out) as stage:
        (stage / "loss.png").write_bytes(b"new")
        (stage / "leaderboard.json").write_text("new")
    assert (out / "loss.png").read_bytes() == b"new" and (out / "leaderboard.json").read_text() == "new"
    assert (out / "other.txt").read_text() == "kept" and sorted(p.name for p in tmp_path.iterdir()) == ["board"]
