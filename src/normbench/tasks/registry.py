"""The task registry: task name -> :class:`Task`.

A task is a LightningModule (a :class:`~normbench.tasks.base.NormbenchModule`), a
LightningDataModule and a YAML config whose ``model`` and ``data`` sections name them. The
built-in tasks ship their configs as package data (``normbench.task_configs``, the repository's
``tasks/`` folder); other packages add tasks through the ``normbench.tasks`` entry-point group,
each entry point naming a :class:`Task`.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

import lightning as L

from normbench.plugins import Registry

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
        card: a report card runs on it (``normbench card``: :func:`normbench.cards.protocol.tasks_with_cards`, in
            registration order); its config's ``bench.card`` is the card's protocol there.
        analysis_sets: what one key set of its unselectable-key analysis is, in the plural, as a chance level's
            basis names it (SST-2's: ``dev sentences``).
        analysis_set_size: the field of its data section (``data.init_args``) that holds the number of keys of
            every set of its analysis, where all sets have that size (the language model's ``analysis_length``);
            ``None``: each test sequence is a set of its own, of its unpadded length.
        sentence_encoder: its network reads a sentence as ``[CLS] sentence [SEP]`` under a padding mask, the
            special tokens no keys of the sentence (SST-2's encoder); otherwise a sentence is its tokens alone
            (the language model's decoder). How the token analysis (:mod:`normbench.run_analyses.sentence_tokens`)
            feeds it a sentence.
        token_table: the table of the SST-2 token report (Brody et al. Tables 3-4,
            :mod:`normbench.publish.tokens`) that shows its runs: ``4``, the report's own task's sentences;
            ``3``, the language model's; ``None``: neither.
        order: where it stands among the built-in tasks (``normbench tasks``, a card's tasks): lowest first, then by
            name; a task registered by a plugin comes after them, in the order registered.
    """

    name: str
    module: type[L.LightningModule]
    datamodule: type[L.LightningDataModule]
    description: str = ""
    config: Path | Traversable | None = None
    card: bool = False
    analysis_sets: str = "sequences"
    analysis_set_size: str | None = None
    sentence_encoder: bool = False
    token_table: int | None = None
    order: int = 100

    @property
    def config_path(self) -> Path | Traversable:
        return (
            self.config if self.config is not None else resources.files("normbench.task_configs") / f"{self.name}.yaml"
        )


_REGISTRY: Registry[Task] = Registry("task", ENTRY_POINT_GROUP, Task)


def register(task: Task) -> Task:
    """Add ``task``; registering a different task under a taken name is an error."""
    return _REGISTRY.register(task.name, task)


def get_task(name: str) -> Task:
    """The registered task ``name``, or a one-line error listing the known tasks."""
    task = _REGISTRY.get(name)
    if task is None:
        raise ValueError(f"task: {name!r} is not registered; choose one of {', '.join(task_names())}")
    return task


def norm_roles(name: str) -> dict[str, str]:
    """The norms of task ``name``'s network by name (``attn_norm``, ...) with their roles (``block``,
    ``final``, ``embedding``): its architecture config's ``NORM_ROLES``."""
    arch = typing.get_type_hints(get_task(name).module.__init__).get("arch")
    return dict(getattr(arch, "NORM_ROLES", {}))


def task_names() -> list[str]:
    return sorted(_REGISTRY.names())


def registered_tasks() -> list[Task]:
    """Every registered task, plug-ins included, in registration order (the built-ins first: majority, lm, sst2)."""
    return [_REGISTRY.entries[name] for name in _REGISTRY.names()]


def resolve_config(config: str | Path) -> Path | Traversable:
    """A ``--config`` value: a YAML file, or the name of a registered task (its shipped config)."""
    path = Path(config)
    if path.is_file():
        return path
    task = _REGISTRY.get(str(config))
    if task is not None:
        return task.config_path
    raise ValueError(
        f"config: {str(config)!r} is neither a file nor a registered task; tasks: {', '.join(task_names())}"
    )
