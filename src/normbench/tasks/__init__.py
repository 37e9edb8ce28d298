"""Task registry. Importing this package registers every built-in task."""

from normbench.tasks import lm, majority  # noqa: F401  (registers "lm" and "majority")
from normbench.tasks.registry import Task, get_task, register, task_names

__all__ = ["Task", "get_task", "register", "task_names"]
