"""The task registry: task name -> :class:`Task`.

A task is a LightningModule (a :class:`~normbench.tasks.base.NormbenchModule`), a
LightningDataModule and a YAML config whose ``model`` and ``data`` sections name them. The
built-in tasks ship their configs as package data (``normbench.task_configs``, the repository's
``tasks/`` folder); other packages add tasks through the ``normbench.tasks`` entry-point group,
each entry point naming a :class:`Task`.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from importlib.metadata import entry_points
from pathlib import Path

import lightning as L

ENTRY_POINT_GROUP = "normbench.tasks"


@dataclass(frozen=True)
class Task:
    """What normbench needs to know about a task.

    Attributes:
        name: registry key, also the name of ``results/<name>/``.
        module: the LightningModule class (a :class:`normbench.tasks.base.NormbenchModule`).
        datamodule: the LightningDataModule class.
        description: one line for ``normbench tasks``.
        config: the task's YAML config (default: ``<name>.yaml`` of the ``normbench.task_configs`` package data).
    """

    name: str
    module: type[L.LightningModule]
    datamodule: type[L.LightningDataModule]
    description: str = ""
    config: Path | Traversable | None = None

    @property
    def config_path(self) -> Path | Traversable:
        return self.config if self.config is not None else resources.files("normbench.task_configs") / f"{self.name}.yaml"


_REGISTRY: dict[str, Task] = {}
_ENTRY_POINTS_LOADED = False


def register(task: Task) -> Task:
    """Add ``task``; registering a different task under a taken name is an error."""
    if task.name in _REGISTRY and _REGISTRY[task.name] != task:
        raise ValueError(f"task {task.name!r} is already registered")
    _REGISTRY[task.name] = task
    return task


def _load_entry_points() -> None:
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        task = ep.load()
        if not isinstance(task, Task):
            raise TypeError(f"entry point {ep.name!r} of {ENTRY_POINT_GROUP}: {ep.value} is not a normbench Task")
        register(task)


def get_task(name: str) -> Task:
    """The registered task ``name``, or a one-line error listing the known tasks."""
    _load_entry_points()
    if name not in _REGISTRY:
        raise ValueError(f"task: {name!r} is not registered; choose one of {', '.join(task_names())}")
    return _REGISTRY[name]


def task_names() -> list[str]:
    _load_entry_points()
    return sorted(_REGISTRY)


def resolve_config(config: str | Path) -> Path | Traversable:
    """A ``--config`` value: a YAML file, or the name of a registered task (its shipped config)."""
    path = Path(config)
    if path.is_file():
        return path
    _load_entry_points()
    if str(config) in _REGISTRY:
        return _REGISTRY[str(config)].config_path
    raise ValueError(f"config: {str(config)!r} is neither a file nor a registered task; "
                     f"tasks: {', '.join(task_names())}")
