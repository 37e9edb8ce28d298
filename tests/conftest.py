"""Shared fixtures: keep caches and outputs inside pytest's temporary directories."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMBENCH_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
    torch.manual_seed(0)


@dataclass
class CliResult:
    """What ``normbench <args>`` returned and printed."""

    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def normbench_in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """``normbench <args>`` run by :func:`normbench.cli.main` in this process, from ``cwd``: the command line
    without a new interpreter's imports (for bad-input checks; end-to-end runs keep their subprocess)."""
    from normbench.cli import main

    def run(*args: str, cwd: Path) -> CliResult:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        environ = dict(os.environ)
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:  # what the command set (e.g. Lightning's PL_GLOBAL_SEED) stays with it
            os.environ.clear()
            os.environ.update(environ)
        out = capsys.readouterr()
        return CliResult(code, out.out, out.err)

    return run
