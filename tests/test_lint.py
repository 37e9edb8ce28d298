"""What ``nox -s lint`` checks holds: the code style on the whole repository (``ruff check`` and
``ruff format --check``) and the types of the board pipeline (``mypy`` over archive/, judge/, boards/, render/ and
publish/), of the report cards (cards/), the site's pages (site/) and the sweeps (sweep/), each configured in
``pyproject.toml``."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import normbench

REPO = Path(normbench.__file__).resolve().parents[2]

needs_ruff = pytest.mark.skipif(
    importlib.util.find_spec("ruff") is None, reason="ruff is not installed (pip install -e .[dev])"
)
needs_mypy = pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install -e .[dev])"
)


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=REPO, capture_output=True, text=True, timeout=300)


@needs_ruff
def test_ruff_check_passes() -> None:
    done = ruff("check", ".", "--output-format", "concise")
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]


@needs_ruff
def test_ruff_format_leaves_every_file_as_it_is() -> None:
    done = ruff("format", "--check", ".")
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]


@needs_mypy
@pytest.mark.slow  # a cold mypy over 132 files: over a minute; `nox -s lint` runs it
def test_mypy_finds_no_error_in_the_typed_packages() -> None:
    """``mypy`` as ``nox -s lint`` runs it: the files and settings of ``[tool.mypy]``."""
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
