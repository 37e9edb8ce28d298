"""Shared fixtures: keep caches and outputs inside pytest's temporary directories."""

from __future__ import annotations

import logging
import os
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

# setuptools first: its distutils shim (which torch.utils.benchmark reaches through cpp_extension) refuses to load
# once the standard library's distutils has been imported by an earlier test of the same worker
import setuptools  # noqa: F401
import torch


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMBENCH_CACHE", str(tmp_path_factory.getbasetemp() / "cache"))
    monkeypatch.setattr(sys, "path", list(sys.path))  # normbench's main() puts the directory it runs in on it
    torch.manual_seed(0)


LIGHTNING_LOGGERS = ("lightning", "lightning_fabric", "pytorch_lightning")


def swap_stream(handler: logging.StreamHandler, stream: object) -> None:
    """``handler.setStream(stream)``, except that a stream closed since (an earlier test's capture) is not flushed."""
    if getattr(handler.stream, "closed", False):
        handler.stream = stream
    else:
        handler.setStream(stream)


@dataclass
class CliResult:
    """What ``normbench <args>`` returned and printed."""

    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def normbench_in_process(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., CliResult]:
    """``normbench <args>`` run by :func:`normbench.cli.main` in this process, from ``cwd``: the command line
    without a new interpreter's imports (for bad-input checks; end-to-end runs keep their subprocess)."""
    from normbench.cli import main

    def run(*args: str, cwd: Path) -> CliResult:
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        environ, rng = dict(os.environ), (random.getstate(), np.random.get_state(), torch.get_rng_state())
        # Lightning's loggers write to the stderr of their import: here, to the one this test captures
        handlers = [
            h
            for name, log in logging.root.manager.loggerDict.items()
            if isinstance(log, logging.Logger) and name.split(".")[0] in LIGHTNING_LOGGERS
            for h in log.handlers
            if type(h) is logging.StreamHandler
        ]
        streams = [h.stream for h in handlers]
        for handler in handlers:
            swap_stream(handler, sys.stderr)
        message = ""
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            message = "" if exc.code is None or isinstance(exc.code, int) else f"{exc.code}\n"
        finally:  # what the command set (e.g. Lightning's PL_GLOBAL_SEED, seeded generators) stays with it
            os.environ.clear()
            os.environ.update(environ)
            random.setstate(rng[0])
            np.random.set_state(rng[1])
            torch.set_rng_state(rng[2])
            for handler, stream in zip(handlers, streams, strict=False):
                swap_stream(handler, stream)
        out = capsys.readouterr()
        return CliResult(code, out.out, out.err + message)

    return run


@pytest.fixture(scope="session")
def tiny_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with ``tiny.yaml`` (:mod:`tests.tiny_runs`) and ``runs/``: its one run trained and finished,
    trained once per session in this process; tests copy it (``tiny_runs.copy_of``), never change it."""
    from normbench.sweep.options import SweepOptions
    from normbench.sweep.run import run_sweep
    from tests.tiny_runs import tiny_config

    root = tmp_path_factory.mktemp("tiny_sweep")
    environ, rng = dict(os.environ), (random.getstate(), np.random.get_state(), torch.get_rng_state())
    os.environ["NORMBENCH_CACHE"] = str(tmp_path_factory.getbasetemp() / "cache")
    try:
        run_sweep(
            SweepOptions(
                str(tiny_config(root)),
                workers=1,
                progress=False,
                leaderboard=False,
                runs_dir=str(root / "runs"),
                results_dir=str(root / "results"),
            )
        )
    finally:
        os.environ.clear()
        os.environ.update(environ)
        random.setstate(rng[0])
        np.random.set_state(rng[1])
        torch.set_rng_state(rng[2])
    return root
