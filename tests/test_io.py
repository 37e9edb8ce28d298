"""Atomic writes keep the permissions a plain write would give."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from normbench.io import atomic_write_text


def test_atomic_write_honours_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        plain = tmp_path / "plain.txt"
        plain.write_text("x")
        atomic = atomic_write_text(tmp_path / "atomic.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(atomic.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode) == 0o644
