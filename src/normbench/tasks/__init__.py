"""Tasks: LightningModules and the registry. Importing this package registers the built-in tasks: every module of
this package that defines a ``TASK`` (a :class:`Task`), in their ``order``, so a built-in task is its module and its
YAML (``tasks/<name>.yaml``)."""

import importlib
import pkgutil

from normbench.tasks.registry import (
    Task,
    get_task,
    norm_roles,
    register,
    registered_tasks,
    resolve_config,
    task_names,
)


def builtin_tasks() -> list[Task]:
    """The ``TASK`` of each module of this package that defines one, by ``(order, name)``."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        task = getattr(importlib.import_module(f"{__name__}.{info.name}"), "TASK", None)
        if isinstance(task, Task):
            found.append(task)
    return sorted(found, key=lambda t: (t.order, t.name))


for _task in builtin_tasks():
    register(_task)

__all__ = [
    "Task", "builtin_tasks", "get_task", "norm_roles", "register", "registered_tasks", "resolve_config", "task_names",
]  # fmt: skip
