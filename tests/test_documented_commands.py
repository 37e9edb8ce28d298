"""Every documented command works: those in the code blocks of the README and of the documentation
(``docs/**/*.md``), the noxfile's list and the ``--help`` texts of ``normbench`` and ``normbench sweep``.

Each command runs as documented with ``NORMBENCH_DRY_RUN=1`` (arguments parsed, configs built, a
sweep's runs planned; nothing trained or written; ``compare``, ``cite`` and ``tasks`` run, they write
nothing), or, for the pytest-based sessions, with ``--collect-only``. A nox command runs its session
from the noxfile with the documented arguments, recording what it would run, and then runs that (the
``docs`` session's ``mkdocs build`` into a temporary folder, the ``lint`` session's read-only ruff
checks as they are); one runs through nox's own command line as well.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch

import normbench
from normbench.cli import COMMANDS as TABLE
from normbench.cli import command_parser, main, usage

REPO = Path(normbench.__file__).resolve().parents[2]
PREFIXES = ("python -m nox", "nox", "normbench", ".venv/bin/normbench", "PYTHONPATH=examples normbench")
# placeholders of the help texts, and what stands in for them
PLACEHOLDERS = {
    "<task or file>": "majority",
    "<task>": "majority",
    "NAME": "quick",
    "AXIS=V1,V2": "model.init_args.arch.attn_norm.component=both,scale",
    "<label>-<hash>": "pre-both-0",
}
# the norms the docs name as a user's own (a module, an entry point's name, the noxfile's NORM), and the norms
# that stand in for them: a card's dry run imports and builds its norm
USER_NORMS = {
    r"\bmypkg\.norms:MyNorm\b": "examples.pnorm_example:PNorm",
    r"\bmypkg_norm\b": "scalenorm",
    r"(?<=card -- )NORM\b": "examples.pnorm_example:PNorm",
}


def shell_lines(text: str) -> list[str]:
    """Lines of the fenced code blocks of a Markdown text, continuation lines joined."""
    lines, block, current = [], False, ""
    for raw in text.splitlines():
        if raw.lstrip().startswith("```"):
            block = not block
            continue
        if not block:
            continue
        current += raw.rstrip().removesuffix("\\") + " " if raw.rstrip().endswith("\\") else raw
        if not raw.rstrip().endswith("\\"):
            lines.append(current.strip())
            current = ""
    return lines


def commands_in(lines: list[str]) -> list[str]:
    """The nox/normbench commands among ``lines``: comments dropped, ``pip install nox &&`` dropped."""
    out = []
    for line in lines:
        line = line.split(" && ")[-1].strip()
        words = line.split()
        if line.startswith(PREFIXES) and ("-s" in words or any(w.endswith("normbench") for w in words[:2])):
            out.append(
                " ".join(shlex.split(line, comments=True))
                if "'" not in line and '"' not in line
                else line.split("  #")[0].strip()
            )
    return out


def help_commands(text: str) -> list[str]:
    """Backticked commands of a help text, placeholders filled, optional ``[...]`` parts and ``...`` dropped."""
    out = []
    for cmd in re.findall(r"`((?:normbench|nox) [^`]+)`", text):
        for key, value in PLACEHOLDERS.items():
            cmd = cmd.replace(key, value)
        cmd = re.sub(r"\[[^\]]*\]", "", cmd).replace("...", "")
        if "<" not in cmd:
            out.append(" ".join(cmd.split()))
    return out


def documentation_pages() -> list[Path]:
    """The README and every page of the documentation site."""
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def documented() -> list[str]:
    readme = [c for page in documentation_pages() for c in commands_in(shell_lines(page.read_text(encoding="utf-8")))]
    noxfile = commands_in([line.strip() for line in (REPO / "noxfile.py").read_text().split('"""')[1].splitlines()])
    helps = help_commands(usage()) + help_commands(command_parser(TABLE["sweep"]).format_help())
    commands = [
        c.replace("<label>-<hash>", PLACEHOLDERS["<label>-<hash>"]).removeprefix("python -m ")
        for c in readme + noxfile + helps
    ]
    for pattern, norm in USER_NORMS.items():
        commands = [re.sub(pattern, norm, c) if " card" in c else c for c in commands]
    return list(dict.fromkeys(commands))  # `python -m nox ...` and `nox ...` are one command


COMMANDS = documented()


def test_the_documentation_names_every_command() -> None:
    assert len(COMMANDS) >= 25
    text = " ".join(COMMANDS)
    for word in (
        "fit",
        "sweep",
        "bench",
        "leaderboard",
        "rejudge",
        "compare",
        "cite",
        "analyze",
        "random_grid",
        "predict",
        "tasks",
    ):
        assert f"normbench {word}" in text, word
    for session in (
        "tests",
        "bench-majority",
        "bench-lm",
        "bench-sst2",
        "bench-matrix",
        "bench-modern",
        "bench-width",
        "bench-unselectable",
        "bench-perf",
        "docs",
        "lint",
    ):
        assert f"-s {session}" in text, session


def run_normbench(command: str, monkeypatch: pytest.MonkeyPatch) -> str:
    words = shlex.split(command)
    if words[0].startswith("PYTHONPATH="):
        monkeypatch.syspath_prepend(str(REPO / words.pop(0).split("=", 1)[1]))
    monkeypatch.setenv("NORMBENCH_DRY_RUN", "1")
    argv = words[1:]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as exc:
            assert exc.code in (0, None), f"`{command}` exits {exc.code}: {err.getvalue()[-600:]}"
    return out.getvalue()


class RecordingSession:
    """What a nox session would run: the commands it passes to ``session.run`` (nothing is run)."""

    def __init__(self, posargs: list[str]) -> None:
        self.posargs, self.commands = posargs, []

    def run(self, *args: str, **kwargs: object) -> None:
        self.commands.append([str(a) for a in args])

    run_install = run

    def error(self, message: str) -> None:
        raise AssertionError(f"the session stops: {message}")


@functools.lru_cache(maxsize=1)
def nox_sessions() -> dict:
    """The noxfile's sessions by name, from nox's own registry."""
    import importlib.util

    from nox import registry

    spec = importlib.util.spec_from_file_location("documented_noxfile", REPO / "noxfile.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its functions stay reachable (tests of the install commands)
    spec.loader.exec_module(module)
    return dict(registry.get())


def run_nox(command: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """A nox command: its session (from the noxfile, with the documented posargs) records what it runs; each
    ``normbench`` command then runs here as a dry run and each pytest command with ``--collect-only``."""
    words = shlex.split(command)[1:]
    session_name = words[words.index("-s") + 1]
    posargs = words[words.index("--") + 1 :] if "--" in words else []
    session = RecordingSession(posargs)
    monkeypatch.setenv("NORMBENCH_NO_INSTALL", "1")
    nox_sessions()[session_name](session)
    assert session.commands, f"`{command}` runs nothing"
    out = ""
    for program, *args in session.commands:
        if program.endswith("normbench"):
            out += run_normbench(" ".join(["normbench", *map(shlex.quote, args)]), monkeypatch)
        elif program.endswith(("mkdocs", "ruff", "mypy")):
            out += run_tool(Path(program).name, args, command)
        else:
            assert args[:2] == ["-m", "pytest"], program
            env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}  # not an xdist worker
            done = subprocess.run(
                [sys.executable, *args, "--collect-only", "-q", "-p", "no:cacheprovider"],
                cwd=REPO,
                capture_output=True,
                text=True,
                timeout=600,
                env=env,
            )
            assert done.returncode == 0, f"`{command}` exits {done.returncode}: {done.stdout[-1500:]}"
            out += done.stdout
    return out


def run_tool(name: str, args: list[str], command: str) -> str:
    """A session's ``ruff`` command (read-only checks), run with this interpreter's module of that name, or its
    ``mkdocs`` command, checked: the same strict build of the site is run and read by
    tests/test_docs.py::test_the_site_builds_strictly (a build takes about 20 s), or its ``mypy`` command, checked:
    the same check (pyproject.toml's ``[tool.mypy]``, no arguments) is run by
    tests/test_lint.py::test_mypy_finds_no_error_in_the_typed_packages (about 45 s)."""
    if name == "mypy":
        assert args == [], f"`{command}` runs mypy {args}, not the check the lint test runs"
        return ""
    assert name == "ruff" or args[:1] == ["build"], f"`{command}` runs {name} {args}"
    assert name == "mkdocs" or "--check" in args or args[:1] == ["check"], f"`{command}` would rewrite files"
    if name == "mkdocs":
        assert args == ["build", "--strict"], f"`{command}` runs mkdocs {args}, not the build the docs test runs"
        return ""
    with tempfile.TemporaryDirectory() as site:
        extra = ["--site-dir", site] if name == "mkdocs" else []
        done = subprocess.run(
            [sys.executable, "-m", name, *args, *extra], cwd=REPO, capture_output=True, text=True, timeout=600
        )
    assert done.returncode == 0, f"`{command}` exits {done.returncode}: {(done.stdout + done.stderr)[-1500:]}"
    return done.stdout


def test_nox_itself_runs_a_documented_session_and_the_slow_tests_exist() -> None:
    """One command through nox's own command line: the long tests that `nox -s tests -- -m slow` promises (two of
    their files: collecting the whole suite once more would add 20 s, and the documented `nox -s tests` does)."""
    env = {**os.environ, "NORMBENCH_VENV": sys.prefix, "NORMBENCH_NO_INSTALL": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nox",
            "-s",
            "tests",
            "--",
            "-m",
            "slow",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_reproduce.py",
            "tests/publish/test_rebuild.py",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-1500:]
    collected = re.search(r"(\d+)(?:/\d+)? tests collected", done.stdout)
    assert collected and int(collected[1]) >= 1, done.stdout[-800:]
    assert "test_reproduce.py" in done.stdout and "test_rebuild.py" in done.stdout


def committed_board(args: list[str]) -> bool:
    """Whether the leaderboard that ``normbench cite <args>`` names is committed as it is in this checkout."""
    from normbench import results

    name = args[args.index("--name") + 1] if "--name" in args else None
    return results.containing_commit(results.resolve(args[0], name)) is not None


def a_slow_command(command: str) -> bool:
    """A documented command that plans the whole shipped queue or repeats a slower one with other options only:
    every bake (each plans all of ``queues/bake.yaml``'s 600 variants: minutes; every preset the queue names is
    planned by tests/tasks/test_configs.py, the published boards' runs by tests/test_published_runs.py and the
    queue's form is checked by tests/sweep/test_bake.py), ``nox -s tests`` (it collects this whole suite again, half
    a minute: the default run is that command, and :func:`test_nox_itself_runs_a_documented_session_and_the_slow_tests_exist`
    runs its session through nox), ``nox -s bench-perf`` with pytest's options (the same benchmarks again), and the
    cards of the built-in norms and ``nox -s card`` (the same build as ``normbench card
    examples.pnorm_example:PNorm``, which the default run keeps, for another published card or through nox: most of
    a minute each; tests/cards/ builds every published card's numbers from the archive). They run with the slow
    tests; their options are checked against ``--help`` by tests/test_docs.py."""
    words = shlex.split(command)
    bake = words[:2] == ["normbench", "bake"] or words[:3] == ["nox", "-s", "bake"]
    suite_again = words[:3] == ["nox", "-s", "tests"] or (words[:3] == ["nox", "-s", "bench-perf"] and "--" in words)
    named = words[:2] == ["normbench", "card"] and len(words) > 2 and words[2] in named_cards()
    return bake or suite_again or words[:3] == ["nox", "-s", "card"] or named or example_card_again(words)


def example_card_again(words: list[str]) -> bool:
    """The example norm's whole card (every task) again with other options: the same build as the plain command at
    its cost; each option is kept in the default run by its ``--tasks majority`` form."""
    example = words[:3] == ["normbench", "card", "examples.pnorm_example:PNorm"]
    return example and len(words) > 3 and "--tasks" not in words


def named_cards() -> set[str]:
    """The cards of built-in norms, as the tasks declare them (``bench.card.named``)."""
    from normbench.cards.protocol import CardProtocol, tasks_with_cards

    return {name for task in tasks_with_cards() for name in CardProtocol.of(task).named}


@pytest.mark.parametrize(
    "command",
    [pytest.param(c, marks=pytest.mark.slow) if a_slow_command(c) else c for c in COMMANDS],
)
def test_documented_command_runs(command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    if "--trainer.devices 2" in command and torch.cuda.device_count() == 1:
        pytest.skip("two devices asked for: on one GPU this example is for a CPU (gloo) or a 2-GPU machine")
    words = shlex.split(command)
    if "cite" in words[1:2] and not committed_board(words[2:]):
        # a bench run in this checkout rewrote the board: citing it is refused in one line, as documented
        with pytest.raises(AssertionError, match=r"exits 2: normbench: error: source: .* is not committed as it is"):
            run_normbench(command, monkeypatch)
        return
    if command.startswith("nox "):
        output = run_nox(command, monkeypatch)
        if command.startswith("nox -s tests"):
            assert re.search(r"\d+ tests? collected|\d+/\d+ tests collected", output), output[-800:]
    else:
        run_normbench(command, monkeypatch)


def test_nox_installs_with_uv_where_it_is_installed_and_with_pip_otherwise() -> None:
    nox_sessions()  # loads the noxfile
    noxfile = sys.modules["documented_noxfile"]
    with_uv = noxfile.install_commands("/opt/uv")
    assert [c[:3] for c in with_uv] == [["/opt/uv", "pip", "install"]] and with_uv[0][-1].endswith("[dev]")
    assert "--compile-bytecode" in with_uv[0]  # uv compiles nothing unless asked
    assert noxfile.create_command("/opt/uv")[:2] == ["/opt/uv", "venv"]
    with_pip = noxfile.install_commands(None)
    assert [c[1:4] for c in with_pip] == [["-m", "pip", "install"]] * 2 and with_pip[-1][-1].endswith("[dev]")
    assert noxfile.create_command(None)[1:3] == ["-m", "venv"]
