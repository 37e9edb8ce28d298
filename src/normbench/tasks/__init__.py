"""Task registry. Importing this package registers every built-in task."""

from normbench.tasks import lm, majority, sst2  # noqa: F401  (registers the built-in tasks)
from normbench.tasks.registry import Task, get_task, register, task_names

__all__ = ["Task", "get_task", "register", "task_names"]
