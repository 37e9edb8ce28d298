"""Tasks: LightningModules and the registry. Importing this package registers the built-in tasks."""

from normbench.tasks import lm, majority, sst2
from normbench.tasks.registry import Task, get_task, register, resolve_config, task_names

for _task in (majority.TASK, lm.TASK, sst2.TASK):
    register(_task)

__all__ = ["Task", "get_task", "register", "resolve_config", "task_names"]
