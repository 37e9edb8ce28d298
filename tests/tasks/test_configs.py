"""Every task YAML (and each of its presets and bench variants) parses against the code."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from normbench.judge.tuned import ChoiceNotReady
from normbench.sweep.plan import plan_runs
from normbench.tasks import get_task, task_names
from normbench.training.cli import NormbenchCLI
from normbench.training.config import load_config
from tests.plans import assert_whole_plan, published_presets

TASKS_DIR = Path(__file__).resolve().parents[2] / "tasks"
CONFIGS = sorted(TASKS_DIR.glob("*.yaml"))


def test_every_registered_task_has_a_config_and_vice_versa() -> None:
    assert {p.stem for p in CONFIGS} == set(task_names())
    for name in task_names():
        assert get_task(name).config_path.resolve() == (TASKS_DIR / f"{name}.yaml").resolve()


def test_the_built_in_tasks_are_found_by_their_modules_in_their_order() -> None:
    """Every module of ``normbench.tasks`` that defines a ``TASK`` is a built-in task (no list to edit), registered
    by its ``order``: the paper's order, majority, lm, sst2, before any plug-in's."""
    import normbench.tasks as tasks

    assert [t.name for t in tasks.builtin_tasks()] == ["majority", "lm", "sst2"]
    assert [t.name for t in tasks.registered_tasks()][:3] == ["majority", "lm", "sst2"]


def test_a_new_module_with_a_task_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module dropped into the tasks package is discovered, placed by its ``order``; a module without ``TASK``
    (registry, series, ...) is not a task."""
    import normbench.tasks as tasks

    (tmp_path / "zeta_probe.py").write_text(
        "from normbench.tasks.majority import TASK as _M\n"
        "import dataclasses\n"
        "TASK = dataclasses.replace(_M, name='zeta_probe', order=1)\n"
    )
    monkeypatch.setattr(tasks, "__path__", [*tasks.__path__, str(tmp_path)])
    monkeypatch.syspath_prepend(str(tmp_path))
    found = [t.name for t in tasks.builtin_tasks()]
    assert found == ["majority", "lm", "zeta_probe", "sst2"]


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_config_and_presets_instantiate(path: Path, tmp_path: Path) -> None:
    raw = yaml.safe_load(path.read_text())
    task = get_task(raw["task"])
    for preset in [None, *raw.get("presets", {})]:
        config = load_config(path, preset)
        cli = NormbenchCLI(args=["--config", yaml.safe_dump(config), f"--runs_dir={tmp_path}"])
        assert isinstance(cli.model, task.module) and isinstance(cli.datamodule, task.datamodule)
    assert not list(tmp_path.iterdir())  # instantiating writes nothing


@pytest.mark.parametrize(
    "path",  # the language model's presets plan hundreds of grid points: most of a minute, with the slow tests
    [pytest.param(p, marks=pytest.mark.slow) if p.stem == "lm" else p for p in CONFIGS],
    ids=lambda p: p.stem,
)
def test_bench_grid_plans(path: Path, tmp_path: Path) -> None:
    """Every preset plans whole; the presets of published boards are planned (and checked so) by
    tests/test_published_runs.py."""
    raw = yaml.safe_load(path.read_text())
    published = published_presets()
    for preset in raw.get("presets", {}):
        if (raw["task"], preset) in published:
            continue
        try:
            config, runs = plan_runs(raw["task"], preset, runs_dir=str(tmp_path))
        except ChoiceNotReady:  # a board judged at tuned rates before its tuning grid is trained
            continue
        assert_whole_plan(config, runs, len(config["bench"]["seeds"]))


def test_a_preset_extends_another(tmp_path: Path) -> None:
    config = {
        "task": "majority",
        "trainer": {"max_steps": 10},
        "presets": {
            "quick": {"trainer": {"max_steps": 5, "val_check_interval": 2}, "bench": {"seeds": [0, 1]}},
            "matrix": {
                "extends": "quick",
                "trainer": {"val_check_interval": 1},
                "bench": {"default_variants": ["pre/both"]},
            },
            "loop": {"extends": "loop"},
            "dangling": {"extends": "nowhere"},
            "two": {"extends": ["quick", "loop"]},
        },
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    matrix = load_config(path, "matrix")
    assert matrix["trainer"] == {"max_steps": 5, "val_check_interval": 1}  # quick's, then its own changes
    assert matrix["bench"] == {"seeds": [0, 1], "default_variants": ["pre/both"]}
    assert matrix["preset"] == "matrix"
    with pytest.raises(ValueError, match="presets.loop.extends: 'loop' extends itself"):
        load_config(path, "loop")
    with pytest.raises(ValueError, match="presets.dangling.extends: 'nowhere' is not defined"):
        load_config(path, "dangling")
    with pytest.raises(ValueError, match="presets.two.extends: must name one preset"):
        load_config(path, "two")


@pytest.mark.parametrize("task", ["majority", "lm", "sst2"])
def test_the_matrix_preset_is_quick_plus_its_cells_and_leaves_the_default_bench_alone(task: str) -> None:
    quick, matrix = load_config(get_task(task).config_path, "quick"), load_config(get_task(task).config_path, "matrix")
    for section in ("trainer", "model", "data"):
        assert matrix[section] == quick[section]
    cells = matrix["bench"]["default_variants"]
    assert {
        "pre/both",
        "pre/project",
        "pre/scale",
        "pre/none",
        "post/both",
        "post/project",
        "post/scale",
        "none/none",
    } <= set(cells)
    assert matrix["bench"]["matrix"]["headline"]
    default = quick["bench"].get("default_variants") or list(quick["bench"]["variants"])
    assert not any(v.startswith(("post/", "none/")) for v in default) or task == "sst2"  # sst2's bench is post/none
