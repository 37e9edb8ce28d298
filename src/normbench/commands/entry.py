"""An entry of the command table (:data:`normbench.cli.COMMANDS`): a function, and what the command line needs to know.

A :class:`Command` is read from its function: its parameters are the command's options, the first line of its
docstring its line in ``normbench --help`` and the docstring's text its ``--help``. A :class:`Group` is a command whose
first argument names one of its own commands (``normbench analyze <analysis>``).
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from jsonargparse import Namespace

OVERRIDES_HELP = (
    "Any other --section.key VALUE (e.g. --trainer.max_steps 100, --model.arch.attn_norm.component scale, "
    "--trainer.strategy ddp --trainer.devices 4) overrides the config of every run, as for normbench fit."
)
NOT_OPTIONS = ("overrides",)  # parameters of a command's function that are no options of its own (see Command)


def docstring_prose(function: Callable[..., Any]) -> list[str]:
    """The paragraphs of a function's docstring before its ``Args:`` (or ``Returns:``) section."""
    prose = []
    for paragraph in (inspect.getdoc(function) or "").split("\n\n"):
        if paragraph.lstrip().startswith(("Args:", "Returns:", "Raises:")):
            break
        prose.append(paragraph.strip())
    return [p for p in prose if p]


@dataclass(frozen=True)
class Command:
    """One ``normbench`` command: the function it calls, and what the command line needs to know about it.

    Attributes:
        function: what the command does. Its parameters are the command's options (a parameter without a default is
            positional), each described in its docstring's ``Args:``; a parameter whose type is a dataclass
            (:class:`SweepOptions`, :class:`BakeOptions`) gives each of its fields as an option, and receives them
            as one object. The docstring's first line is the command's one line in ``normbench --help``; its text
            before ``Args:`` opens ``normbench <command> --help``.
        writes: what the command writes, as its ``--help`` says (``None``: nothing; a dry run runs it).
        overrides: whether every other ``--section.key VALUE`` is a config override, given as the function's
            ``overrides`` (a list of those arguments): ``"train"``, overrides of the runs it trains (LightningCLI's:
            ``--trainer.max_steps 100``; its ``--help`` says so and lists ``--compile``); ``"read"``, the overrides
            the runs it reads were trained with (part of their keys); ``None``: it takes none.
        dry_run: the function does its own dry run: ``--dry_run`` (or ``NORMBENCH_DRY_RUN=1``) is its ``dry_run``
            argument. Otherwise a dry run of a command that writes checks its arguments and calls nothing.
        skip: fields of its dataclass parameters that are not its options (``bench``: ``config``, its task instead).
        aliases: other spellings of its options (``card``: ``--norm_options`` for ``--options``).
        raw: the function parses its own arguments (``fit``: LightningCLI's parser), called as
            ``function(argv, dry_run)`` with the words after the command's name.
    """

    function: Callable[..., Any]
    writes: str | None = None
    overrides: Literal["train", "read"] | None = None
    dry_run: bool = False
    skip: Collection[str] = ()
    aliases: Mapping[str, str] = field(default_factory=dict)
    raw: bool = False

    def __post_init__(self) -> None:
        name = getattr(self.function, "__name__", repr(self.function))
        prose = docstring_prose(self.function)
        if not prose or "\n" in prose[0]:
            raise TypeError(f"command {name}: its docstring must open with a one-line summary (its --help line)")
        if self.raw:
            return
        params = self.parameters
        for given, parameter in ((self.overrides, "overrides"), (self.dry_run, "dry_run")):
            if given and parameter not in params:
                raise TypeError(f"command {name}: its entry gives it {parameter}, but it takes no {parameter!r}")

    @property
    def parameters(self) -> Mapping[str, inspect.Parameter]:
        return inspect.signature(self.function).parameters

    @property
    def summary(self) -> str:
        """The command's line in ``normbench --help``: the first line of its function's docstring."""
        return docstring_prose(self.function)[0]

    @property
    def description(self) -> str:
        """What ``normbench <command> --help`` says first: its docstring's text before ``Args:``."""
        return "\n\n".join(docstring_prose(self.function)) + (f" {OVERRIDES_HELP}" if self.overrides == "train" else "")

    def dataclass_parameters(self) -> dict[str, type]:
        """The parameters whose type is a dataclass (``options: SweepOptions | None``), with that class."""
        hints = typing.get_type_hints(self.function)
        found = {}
        for name in self.parameters:
            hint = hints.get(name)
            classes = [t for t in (hint, *typing.get_args(hint)) if isinstance(t, type) and dataclasses.is_dataclass(t)]
            if classes:
                found[name] = classes[0]
        return found

    def own_options(self) -> frozenset[str]:
        """The option names that are the command's own (the others are overrides, where it takes them)."""
        flat = self.dataclass_parameters()
        fields = {f.name for cls in flat.values() for f in dataclasses.fields(cls)}
        return frozenset(self.parameters) - set(NOT_OPTIONS) - set(flat) | fields

    def arguments(self, args: Namespace, common: Collection[str]) -> dict[str, Any]:
        """The function's keyword arguments from its parsed command (the options of every command, ``common``, left
        out: main() has read them)."""
        flat = self.dataclass_parameters()
        kwargs: dict[str, Any] = {}
        for name in self.parameters:
            if name in flat:
                fields = [f.name for f in dataclasses.fields(flat[name])]
                kwargs[name] = flat[name](**{f: args[f] for f in fields if f not in self.skip and f in args})
            elif name not in NOT_OPTIONS and name not in common and name in args:
                kwargs[name] = args[name]
        return kwargs


@dataclass(frozen=True)
class Group:
    """A command whose first argument names one of its own commands (``normbench analyze <analysis> ...``).

    Attributes:
        summary: its line in ``normbench --help`` (and its ``--help``).
        commands: its commands, as :data:`COMMANDS` holds the top-level ones.
        dest: what one of its commands is called, in messages and in the parsed arguments (``analysis``).
    """

    summary: str
    commands: dict[str, Command]
    dest: str
