"""The task registry: task name -> :class:`Task`.

A task is one module that calls :func:`register` plus one YAML file ``tasks/<name>.yaml`` whose
``model`` and ``data`` sections name the task's LightningModule and LightningDataModule.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import lightning as L


@dataclass(frozen=True)
class Task:
    """What normbench needs to know about a task.

    Attributes:
        name: registry key, also the name of ``tasks/<name>.yaml`` and ``results/<name>/``.
        module: the LightningModule class (a :class:`normbench.lightning_module.NormbenchModule`).
        datamodule: the LightningDataModule class.
        description: one line for ``normbench tasks``.
        report: optional extra results written with the leaderboard,
            ``report(config, preset, runs_dir, out_dir)`` (e.g. the SST-2 token tables).
    """

    name: str
    module: type[L.LightningModule]
    datamodule: type[L.LightningDataModule]
    description: str = ""
    report: Callable[[dict, str, str, Path], object] | None = None

    @property
    def config_path(self) -> Path:
        return tasks_dir() / f"{self.name}.yaml"


_REGISTRY: dict[str, Task] = {}


def register(task: Task) -> Task:
    if task.name in _REGISTRY and _REGISTRY[task.name] != task:
        raise ValueError(f"task {task.name!r} is already registered")
    _REGISTRY[task.name] = task
    return task


def get_task(name: str) -> Task:
    """The registered task ``name``, or a one-line error listing the known tasks."""
    if name not in _REGISTRY:
        raise ValueError(f"task: {name!r} is not registered; choose one of {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def task_names() -> list[str]:
    return sorted(_REGISTRY)


def tasks_dir() -> Path:
    """Directory of the task YAML files: ``$NORMBENCH_TASKS_DIR`` or ``tasks/`` of the checkout."""
    env = os.environ.get("NORMBENCH_TASKS_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "tasks"
