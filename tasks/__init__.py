"""The task configurations (YAML data), shipped inside the installed package as ``normbench.task_configs``."""
