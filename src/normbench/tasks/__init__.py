"""Tasks: LightningModules and the registry. Importing this package registers the built-in tasks."""

from normbench.tasks.lm import TASK as LM
from normbench.tasks.majority import TASK as MAJORITY
from normbench.tasks.registry import (
    Task,
    get_task,
    norm_roles,
    register,
    registered_tasks,
    resolve_config,
    task_names,
)
from normbench.tasks.sst2 import TASK as SST2

for _task in (MAJORITY, LM, SST2):
    register(_task)

__all__ = ["Task", "get_task", "norm_roles", "register", "registered_tasks", "resolve_config", "task_names"]
