"""The code style holds on the whole repository: ``ruff check`` and ``ruff format --check``, configured in
``pyproject.toml`` (what ``nox -s lint`` runs)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import normbench

REPO = Path(normbench.__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ruff") is None, reason="ruff is not installed (pip install -e .[dev])"
)


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=REPO, capture_output=True, text=True, timeout=300)


def test_ruff_check_passes() -> None:
    done = ruff("check", ".", "--output-format", "concise")
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]


def test_ruff_format_leaves_every_file_as_it_is() -> None:
    done = ruff("format", "--check", ".")
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
