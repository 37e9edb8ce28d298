"""nox sessions for normbench.

Every session runs in one shared virtual environment, ``.venv`` at the repository root, so the
large torch install happens once, not once per session (with uv where it is installed, else pip). The
environment is (re)installed from ``pyproject.toml`` only when that file changes. Set ``NORMBENCH_VENV``
to use another location (and ``NORMBENCH_NO_INSTALL=1`` to use it as it is).

    nox -s tests                    # default test suite (< 10 minutes on 2 CPU cores)
    nox -s tests -- -m slow         # the long tests (e.g. a published run retrained bit for bit)
    nox -s bench-majority           # quick preset and the d = 3 geometry views; `-- --preset paper` for the
                                    # paper protocol (any `normbench sweep` option after `--`: --seeds, --gpus, ...)
    nox -s bench-lm                 # GPT-2-style LM, Tables 1-2 and Figure 4 (quick preset)
    nox -s bench-sst2               # BERT-style encoder on SST-2, Tables 3-4 (after bench-lm for Table 3)
    nox -s bench-matrix -- majority # placement x component matrix (majority, lm, sst2): results/<task>/matrix/
    nox -s bench-modern -- majority # DyT, ScaleNorm, QK-norm, peri-norm beside LayerNorm (majority, lm)
    nox -s bench-width              # the LM at d_model 8-64, head width fixed: results/lm/width/
    nox -s bench-unselectable       # Figure 1c/1d: unselectable keys among random vectors
    nox -s bench-perf               # pytest-benchmark: speed ratios against the baselines
    nox -s bake -- --budget 150     # train the bake queue (queues/bake.yaml) for 150 minutes into the run archive
    nox -s card -- NORM             # a report card for a norm (a registered name or package.module:Class)
    nox -s docs                     # the documentation site (mkdocs build --strict) into build/site/
    nox -s lint                     # ruff check, ruff format --check and mypy (the board pipeline, cards, site, sweep)
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import sys
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("NORMBENCH_VENV", ROOT / ".venv"))
BIN = VENV / ("Scripts" if sys.platform == "win32" else "bin")

nox.options.default_venv_backend = "none"


class WithoutUvNotice(logging.Filter):
    """nox looks for uv even for sessions that build no environment of their own, and says so when it is absent."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "uv binary not found" not in record.getMessage()


logging.getLogger("nox").addFilter(WithoutUvNotice())
nox.options.sessions = ["tests"]


def create_command(uv: str | None) -> list[str]:
    """How the shared environment is created: ``uv venv`` where uv is installed, else ``python -m venv``."""
    if uv:
        return [uv, "venv", "--python", sys.executable, str(VENV)]
    return [sys.executable, "-m", "venv", str(VENV)]


def install_commands(uv: str | None) -> list[list[str]]:
    """How the project and its dev dependencies are installed into it: ``uv pip`` where uv is installed (much
    faster), else pip (brought up to date first). Both compile the bytecode at install time (uv only when asked):
    where ``PYTHONDONTWRITEBYTECODE`` is set, every process would otherwise compile torch and Lightning from source,
    about 20 s of each ``normbench`` command's start."""
    python, project = str(BIN / "python"), f"{ROOT}[dev]"
    if uv:
        return [[uv, "pip", "install", "--compile-bytecode", "--python", python, "-e", project]]
    return [[python, "-m", "pip", "install", "--upgrade", "pip"], [python, "-m", "pip", "install", "-e", project]]


def shared_env(session: nox.Session) -> Path:
    """Create/update the shared environment; returns its bin directory (``nox --install-only`` stops here)."""
    if os.environ.get("NORMBENCH_NO_INSTALL"):  # use the environment as it is (the README-commands test)
        return BIN
    uv = shutil.which("uv")
    if not (BIN / "python").exists():
        session.run_install(*create_command(uv), external=True)
    stamp = VENV / ".normbench-installed"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not stamp.exists() or stamp.read_text() != digest:
        for command in install_commands(uv):
            session.run_install(*command, external=True)
        stamp.write_text(digest)
    return BIN


# Large tensors (e.g. the LM's batch x vocabulary logits) are otherwise mmap-ed and page-faulted
# afresh at every step; keeping them on the heap cuts the LM's step time on CPU by about a third.
BENCH_ENV = {"MALLOC_MMAP_THRESHOLD_": str(2**34)}


def tool(session: nox.Session, name: str, *args: str, env: dict[str, str] | None = None) -> None:
    session.run(str(shared_env(session) / name), *args, external=True, env=env)


def sweep(session: nox.Session, task: str, env: dict[str, str] | None = None) -> None:
    """`normbench sweep` of a task (its default preset, quick), one run per CPU core; posargs are appended
    (e.g. `-- --preset paper`, `-- --seeds 0-9`, `-- --gpus 0,1,2,3`, `-- --trainer.max_steps 100`).
    A sweep that differs from the task's own bench writes its leaderboard to results/<task>/<name>/."""
    tool(session, "normbench", "sweep", "--config", task, *session.posargs, env=env)


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite on every core (pytest-xdist, a test file per worker); slow tests are deselected unless
    `-m slow` (or `-m ""`) is passed, and then run in this one process."""
    args = session.posargs or ["-m", "not slow", "-n", "auto", "--dist", "loadfile"]
    # Where PYTHONDONTWRITEBYTECODE is set, every pytest process (each worker, and the tests that collect the
    # suite again) would compile and assert-rewrite the 120 test modules anew: about 9 s each. They are
    # compiled once into __pycache__/ (ignored by git) instead.
    tool(session, "python", "-m", "pytest", *args, env={"PYTHONDONTWRITEBYTECODE": ""})


@nox.session(name="bench-majority")
def bench_majority(session: nox.Session) -> None:
    """Train the majority grid (quick preset by default) and write results/majority/, then the d = 3
    runs of the `geometry` preset and their pictures (geometry_3d.png, query_angle_histograms.png)."""
    sweep(session, "majority")
    if not session.posargs:  # the pictures belong to the default bench, not to custom sweeps
        tool(session, "normbench", "sweep", "--config", "majority", "--preset", "geometry", "--name", "geometry")
        tool(session, "normbench", "analyze", "geometry")


@nox.session(name="bench-lm")
def bench_lm(session: nox.Session) -> None:
    """Train the language-model variants (quick preset by default), analyse them, write results/lm/."""
    sweep(session, "lm", env=BENCH_ENV)


@nox.session(name="bench-sst2")
def bench_sst2(session: nox.Session) -> None:
    """Train the SST-2 encoders (quick preset by default), write results/sst2/ with Tables 3-4.

    Table 3 reads the `lm` task's runs: run `nox -s bench-lm` first to get it."""
    sweep(session, "sst2", env=BENCH_ENV)


def preset_sweep(session: nox.Session, preset: str, tasks: str) -> None:
    """`normbench sweep --config <task> --preset <preset>` with the task named first in posargs."""
    if not session.posargs or session.posargs[0].startswith("-"):
        session.error(f"bench-{preset}: name the task first, e.g. `nox -s bench-{preset} -- majority` ({tasks})")
    task, *rest = session.posargs
    tool(session, "normbench", "sweep", "--config", task, "--preset", preset, *rest, env=BENCH_ENV)


@nox.session(name="bench-matrix")
def bench_matrix(session: nox.Session) -> None:
    """The placement x component matrix of one task: `nox -s bench-matrix -- majority` (or lm, sst2),
    3 seeds per cell at the quick preset, into results/<task>/matrix/ (any `normbench sweep` option
    may follow the task). The task's own leaderboard (results/<task>/) is not touched."""
    preset_sweep(session, "matrix", "majority, lm or sst2")


@nox.session(name="bench-modern")
def bench_modern(session: nox.Session) -> None:
    """DyT, ScaleNorm, QK-norm and peri-norm beside the paper's LayerNorm model: `nox -s bench-modern --
    majority` (or lm), 3 seeds at the quick preset, into results/<task>/modern/."""
    preset_sweep(session, "modern", "majority or lm")


@nox.session(name="bench-width")
def bench_width(session: nox.Session) -> None:
    """The LM's width axis (d_model 8, 16, 32, 64 with the head width fixed; pre/both, pre/project,
    pre/dyt; 3 seeds at the quick preset) into results/lm/width/ with width.png."""
    tool(session, "normbench", "sweep", "--config", "lm", "--preset", "width", *session.posargs, env=BENCH_ENV)


@nox.session(name="bench-unselectable")
def bench_unselectable(session: nox.Session) -> None:
    """Figure 1c/1d random-key grid; writes results/unselectable/."""
    tool(session, "normbench", "random_grid", *session.posargs)


@nox.session(name="bench-perf")
def bench_perf(session: nox.Session) -> None:
    """Speed benchmarks (pytest-benchmark) and the ratios against their baselines."""
    tool(
        session,
        "python",
        "-m",
        "pytest",
        "benchmarks",
        "--benchmark-only",
        "-p",
        "no:cacheprovider",
        "--benchmark-columns=min,median,mean,rounds",
        *session.posargs,
    )


@nox.session
def bake(session: nox.Session) -> None:
    """Train the runs the published boards want (``queues/bake.yaml``, in priority order) within
    ``--budget MINUTES``, at low CPU priority; finished and unfinished runs go into the run archive
    (``results/archive/``) and the boards whose runs changed are rebuilt (any `normbench bake` option after `--`)."""
    tool(session, "normbench", "bake", *session.posargs, env=BENCH_ENV)


@nox.session
def card(session: nox.Session) -> None:
    """The report card of a norm (``nox -s card -- examples.pnorm_example:PNorm [--budget 60]``): its measured facts
    and its runs on majority, lm and sst2 beside the published LayerNorm and RMSNorm runs (results/cards/)."""
    tool(session, "normbench", "card", *session.posargs, env=BENCH_ENV)


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site with ``mkdocs build --strict`` (any warning fails) into build/site/; the
    results pages are filled from the leaderboards at build time (docs/hooks.py). posargs are passed on."""
    tool(session, "mkdocs", "build", "--strict", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """``ruff check .``, ``ruff format --check .`` and ``mypy`` over the typed board pipeline (archive/, judge/,
    boards/, render/ and publish/ of src/normbench), the report cards (cards/), the site's pages (site/) and the
    sweeps (sweep/), each configured in pyproject.toml; nothing is rewritten."""
    tool(session, "ruff", "check", ".")
    tool(session, "ruff", "format", "--check", ".")
    tool(session, "mypy")
