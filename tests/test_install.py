"""A plain (non-editable) install finds everything it needs inside the package.

The project is built into a wheel from a copy of its sources and installed into a fresh virtual
environment outside the repository. The dependencies come from the test environment through a
``.pth`` file (so nothing is downloaded), but ``normbench`` itself only from the wheel. From a
folder that is not a checkout, ``normbench tasks`` must list the three tasks from the package
data and ``normbench sweep --config majority ...`` must resolve the task by name and train.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

import normbench

REPO = Path(normbench.__file__).resolve().parents[2]


#: what the wheel is built without: the generated and local folders at the repository's root, caches anywhere
AT_ROOT = {".venv", ".git", "runs", "results", "build", ".nox", "tests", "benchmarks"}


def top_level_ignored(folder: str, names: list[str]) -> set[str]:
    """``shutil.copytree``'s ``ignore``: the root's generated folders (``src/normbench/results/`` is a package and
    travels), and every ``__pycache__`` and ``*.egg-info``."""
    root = Path(folder) == REPO
    return {n for n in names if (root and n in AT_ROOT) or n == "__pycache__" or n.endswith(".egg-info")}


@pytest.mark.slow  # a wheel built and installed in a fresh environment: most of a minute; the shipped files are checked below
def test_wheel_install_resolves_tasks_by_name(tmp_path: Path) -> None:
    source = tmp_path / "source"
    shutil.copytree(
        REPO,
        source,
        ignore=top_level_ignored,
    )
    if importlib.util.find_spec("pip") is None:
        pytest.skip("this environment has no pip (uv made it without one): the wheel is built with pip")
    wheel = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path / "dist"),
            str(source),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert wheel.returncode == 0, wheel.stderr[-3000:]
    (built,) = (tmp_path / "dist").glob("normbench-*.whl")

    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=True)
    python = env_dir / ("Scripts" if sys.platform == "win32" else "bin") / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(purelib) / "test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", str(built)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # a checkout on the path would shadow the wheel
    elsewhere = tmp_path / "work"
    elsewhere.mkdir()
    where = subprocess.run(
        [str(python), "-c", "import normbench; print(normbench.__file__)"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(env_dir)  # the wheel's copy, not the checkout
    normbench_cmd = python.with_name("normbench")
    listed = subprocess.run(
        [str(normbench_cmd), "tasks"], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300
    )
    assert listed.returncode == 0, listed.stderr[-3000:]
    rows = [line.split("\t") for line in listed.stdout.splitlines()]
    assert [r[0] for r in rows] == ["lm", "majority", "sst2"]
    assert all(Path(r[1]).is_relative_to(env_dir) and Path(r[1]).is_file() for r in rows)

    sweep = subprocess.run(
        [
            str(normbench_cmd),
            "sweep",
            "--config",
            "majority",
            "--preset",
            "quick",
            "--trainer.max_steps",
            "5",
            "--data.init_args.num_sequences",
            "600",
            "--variants",
            "pre/both",
            "--seeds",
            "0",
            "--no-progress",
            "--workers",
            "1",
        ],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert sweep.returncode == 0, sweep.stderr[-3000:]
    (board,) = (elsewhere / "results" / "majority").glob("*/leaderboard.json")  # a smoke test: a named subfolder
    assert [v["final_step"] for v in json.loads(board.read_text())["variants"]] == [5]


def test_every_subpackage_ships_in_the_wheel() -> None:
    """pyproject.toml lists the packages by hand: a new subpackage of src/normbench, at any depth, must be listed, or
    a plain install lacks it (``normbench card`` once did)."""
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    src = REPO / "src" / "normbench"
    found = {".".join(("normbench", *p.parent.relative_to(src).parts)) for p in src.rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)


def test_every_data_file_of_the_package_ships_in_the_wheel() -> None:
    """Each file under src/normbench that is not Python matches a package-data glob of pyproject.toml (the claims,
    margins and the reference runs a board reads)."""
    import tomllib

    globs = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    src = REPO / "src" / "normbench"
    for path in src.rglob("*"):
        if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
            continue
        package = ".".join(("normbench", *path.relative_to(src).parent.parts))
        shipped = [
            g for pkg, patterns in globs.items() for g in patterns if package.startswith(pkg)
            and path.relative_to(src / Path(*pkg.split(".")[1:])).match(g)
        ]  # fmt: skip
        assert shipped, f"{path.relative_to(REPO)} matches no package-data glob of pyproject.toml"
