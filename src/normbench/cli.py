"""The ``normbench`` command: one table, :data:`COMMANDS`, of command name -> the function it calls.

Each entry (:class:`~normbench.commands.entry.Command`) names a function of :mod:`normbench.commands`; the command line
is parsed from it (jsonargparse), as litgpt's is: its parameters are the command's options (required ones positional; a
parameter whose type is a dataclass, :class:`SweepOptions` or :class:`BakeOptions`, gives its fields as options), the
first line of its docstring is the command's line in ``normbench --help``, and its docstring's text and ``Args:`` are
the command's ``--help``. The entry declares what the command writes, whether it takes config overrides and whether the
function does its own dry run. Adding a command is one entry (docs/extending.md); ``normbench --help`` lists them.
``fit`` parses its own arguments with LightningCLI's parser (any ``--trainer.*`` option passes through), and ``analyze``
is a group of analyses (:class:`~normbench.commands.entry.Group`).

A config override has one form everywhere: ``--section.key VALUE`` (or ``--section.key=VALUE``), e.g.
``--model.arch.attn_norm.component scale`` or ``--trainer.max_steps 100``, for ``fit``, ``sweep``, ``bench``
and ``analyze geometry`` alike; ``init_args`` may be spelled out (``--model.init_args.arch...``), and messages
use the short form (:func:`normbench.errors.short_key`). ``fit`` and the overrides of a sweep are parsed by
LightningCLI's parser (jsonargparse too), which knows every model, data and trainer option.

Every command takes ``--dry_run``: arguments checked (a sweep's runs planned), nothing trained or written,
and ``--verbose``: Lightning's device banners and tips too (normbench prints only its own lines otherwise).

Every command that writes under ``results/`` (sweep, bench, leaderboard, random_grid, analyze geometry)
replaces a published board only with a build that covers its finished runs and its settings; otherwise
it writes nothing and says so in one line, and ``--force`` replaces the board anyway.

An import path (``package.module:Class``) given on the command line or in a config resolves against the current
directory first and then the installed packages, as under ``python -m normbench`` and in every run a command starts.

Run records, checkpoints and the bake queue's configs are data: reading one imports only registered tasks, data
modules and norms (:mod:`normbench.tasks.trust`); ``--trust_record_code true``, which every command takes, lets them
import what they name.

Bad input ends with one line ``normbench: error: <field>: <what is allowed>`` and exit status 2. Ctrl-C
ends with ``normbench: interrupted ...`` and exit status 130, SIGTERM (SLURM, ``timeout``, ``docker stop``)
with ``normbench: terminated ...`` and 143; the runs they stop are recorded as ``interrupted`` and resume.

``normbench --help`` and ``normbench <command> --help`` import no torch or Lightning (the commands import what
they run when they run); ``normbench fit --config <task> --help`` lists every option of that task's model, data
and trainer, and so imports them.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Collection, Mapping

from jsonargparse import ArgumentParser, Namespace

from normbench import __version__
from normbench.commands.analyses import decompose, geometry, random_grid
from normbench.commands.argv import (
    DRY_RUN,
    DRY_RUN_ENV,
    TRUST_ENV,
    TRUST_OPTION,
    VERBOSE,
    aliased,
    flag_forms,
    take_switch,
    trust_option,
)
from normbench.commands.bake import bake
from normbench.commands.boards import bench, cite, compare, leaderboard, rejudge, sweep, tasks
from normbench.commands.card import card
from normbench.commands.entry import NOT_OPTIONS, Command, Group
from normbench.commands.help_cache import asks_config_help, config_help
from normbench.commands.norms import norms
from normbench.commands.predict import predict
from normbench.commands.process import errors_in_one_line, import_paths_from_here, leave_now
from normbench.io import VERBOSE_ENV, quiet_third_party
from normbench.sweep.options import SweepOptions, override_section, split_overrides
from normbench.training.run.runlock import BUSY_STATUS, RunBusy
from normbench.training.stopping.sigterm import TERMINATED_STATUS, sigterm_interrupts

COMPILE_HELP = (
    "train the network through torch.compile: none (eager, the default), default, reduce-overhead (CUDA graphs) "
    "or max-autotune"
)


# ----------------------------------------------------------------------------------------------------- fit


def fit(args: list[str], dry: bool) -> None:
    """Train one run (LightningCLI: `normbench fit --config <task> [--preset NAME] [--section.key VALUE ...]`).

    LightningCLI's parser reads ``args`` (sys.argv stays as it is: DDP re-launches this very command); without a
    config, ``--help`` is :func:`fit_help_parser`'s, which imports no torch.
    """
    if asks_fit_help(args):
        fit_help_parser().parse_args(["--help"])
        return
    for token in args:  # a mistyped trainer option, at once: before Lightning is imported
        if token.startswith("--trainer."):
            override_section(token, "fit")
    if asks_config_help(args):  # built once per config, code and library versions, then kept (seconds to build)
        print(config_help(args), end="")
        return
    from normbench.training.fit import train

    if dry:
        dry_fit(args)
        return
    try:
        print(f"normbench: run record {train(args)}")
    except RunBusy as exc:  # not an error: the other process trains the run
        print(f"normbench: {exc}", file=sys.stderr)
        raise SystemExit(BUSY_STATUS) from None


def dry_fit(args: list[str]) -> None:
    """``normbench fit ... --dry_run``: parse and build the run (model, data module, trainer), print where it goes."""
    from normbench.training.cli import NormbenchCLI
    from normbench.training.config import preset_args

    cli = NormbenchCLI(args=preset_args(args))
    print(
        f"normbench: dry run: {cli.recorder.meta['variant']} seed {cli.recorder.meta['seed']} -> {cli.run_dir} "
        f"(config {cli.config_hash})"
    )


def fit_help_parser() -> ArgumentParser:
    """What ``normbench fit --help`` shows without a config: the options of every run, no torch imported.
    ``normbench fit --config <task> --help`` is LightningCLI's own help, with every model, data and trainer option."""
    parser = ArgumentParser(
        prog="normbench fit",
        description="Train one run (LightningCLI). `normbench fit --config <task or file> --help` lists every "
        "option of that config's model, data and trainer, and --print_config the resolved config. Any "
        "--section.key VALUE (e.g. --trainer.max_steps 200, --model.arch.attn_norm.component project, "
        "--trainer.strategy ddp --trainer.devices 2) overrides the config.",
        exit_on_error=False,
    )
    parser.add_argument("--config", "-c", type=str, help="a registered task's name (e.g. majority) or a config file")
    parser.add_argument("--preset", type=str | None, default=None, help="a preset of the config (e.g. quick)")
    parser.add_argument("--seed_everything", type=int | None, default=None, help="the run's seed")
    parser.add_argument("--runs_dir", type=str, default="runs", help="root of logs, checkpoints and run records")
    parser.add_argument("--print_config", action="store_true", help="print the resolved config and exit")
    return with_common_options(parser, compile_option=True)


def asks_fit_help(args: list[str]) -> bool:
    """Whether ``normbench fit <args>`` asks for help without naming a config (the short help answers)."""
    helps = any(a in ("-h", "--help") for a in args)
    return helps and not any(a in ("-c", "--config") or a.startswith("--config=") for a in args)


# ------------------------------------------------------------------------------------------ the commands

#: where a board is written: its folder under the results root, named by its key (:mod:`normbench.archive.board_keys`)
BOARD_AT = "--results_dir/<key>/ (<key>: <task>, <task>/<name> or cards/<card>/<task>/...)"

#: every ``normbench`` command, in the order ``normbench --help`` lists them: adding a command is one entry here

COMMANDS: dict[str, Command | Group] = {
    "fit": Command(
        fit,
        writes="a run under --runs_dir: its logs, checkpoints and run record",
        overrides="train",
        dry_run=True,
        raw=True,
    ),
    "sweep": Command(
        sweep,
        writes=f"its runs under --runs_dir and its leaderboard under {BOARD_AT}",
        overrides="train",
        dry_run=True,
    ),
    "bench": Command(
        bench,
        writes=f"its runs under --runs_dir and its leaderboard under {BOARD_AT}",
        overrides="train",
        dry_run=True,
        skip={"config"},
    ),
    "leaderboard": Command(
        leaderboard,
        writes=f"the sweep's leaderboard under {BOARD_AT}",
        dry_run=True,
    ),
    "rejudge": Command(rejudge, writes="the board's leaderboard.json and leaderboard.md, where a verdict changed"),
    "compare": Command(compare),
    "cite": Command(cite),
    "analyze": Group(
        "Analyses of trained runs: `analyze decompose` (Mickus et al.), `analyze geometry` (d = 3 pictures).",
        {
            "decompose": Command(decompose, writes="decomposition.json and decomposition.png in the run's folder"),
            "geometry": Command(
                geometry, writes="geometry.json and its figures under --results_dir/majority/", overrides="read"
            ),
        },
        dest="analysis",
    ),
    "random_grid": Command(random_grid, writes="random_grid.json, two heatmaps and a leaderboard in unselectable/"),
    "predict": Command(predict, writes="the predictions file (--out)"),
    "tasks": Command(tasks),
    "bake": Command(bake, writes="the queued runs, into the run archive, and the boards they change", dry_run=True),
    "card": Command(
        card,
        writes="the card and its boards, results/cards/<norm>/, and its queue and configs, queues/cards/<norm>/",
        dry_run=True,
        aliases={"--norm_options": "--options"},
    ),
    "norms": Command(norms, writes="norms.md, norms.json and a figure per task under --results_dir", dry_run=True),
}
ANALYSES = COMMANDS["analyze"].commands  # the analyses of `normbench analyze`


def listed(names: list[str]) -> str:
    """``a, b and c``."""
    return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else "".join(names)


def read_only() -> str:
    """The commands that write nothing (a dry run runs them), as a phrase: ``compare, cite and tasks``."""
    return listed([name for name, c in COMMANDS.items() if isinstance(c, Command) and c.writes is None])


#: the options every command takes (main() reads them before a command's parser; its --help lists them)
COMMON_OPTIONS = {
    "dry_run": f"check the arguments (and plan a sweep's runs), train and write nothing (or {DRY_RUN_ENV}=1); "
    f"{read_only()}, which write nothing, run",
    "verbose": f"Lightning's device banners, tips and model summary as well (or {VERBOSE_ENV}=1)",
    "trust_record_code": "let the run records, checkpoints and bake-queue configs it reads import the classes and "
    "norms they name (or NORMBENCH_TRUST_RECORD_CODE=1; otherwise registered ones only)",
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [
        "usage: normbench <command> [options]   (`normbench <command> --help` for its options; --version)",
        "",
        "normbench: normalization ablations in Transformers.",
        "",
        "commands:",
    ]
    lines += [f"  {name:<{width}}  {command.summary}" for name, command in COMMANDS.items()]
    lines += [
        "",
        "Config overrides have one form for every command: --section.key VALUE (e.g. --trainer.max_steps 100).",
        f"Any command takes {DRY_RUN} (or {DRY_RUN_ENV}=1 in the environment): check the arguments (and plan",
        f"a sweep's runs), train and write nothing; {read_only()}, which write nothing, run.",
        f"Any command takes {VERBOSE} (or {VERBOSE_ENV}=1): Lightning's device banners and tips as well.",
        f"Any command takes {TRUST_OPTION} true (or {TRUST_ENV}=1): let run records, checkpoints and bake-queue",
        "configs import the classes and norms they name; without it they may name registered ones only.",
        "Bad input ends with one line `normbench: error: <field>: <what is allowed>` and exit status 2.",
    ]
    return "\n".join(lines)


def with_common_options(
    parser: ArgumentParser, compile_option: bool = False, has: Collection[str] = ()
) -> ArgumentParser:
    """``parser`` with the options of every command in its help (and ``--compile``, an option of every run), but
    those it ``has`` already (e.g. ``leaderboard``'s own ``dry_run``)."""
    group = parser.add_argument_group("options of every command")
    for name, text in COMMON_OPTIONS.items():
        if name not in has:
            group.add_argument(f"--{name}", action="store_true", help=text)
    if compile_option:
        group.add_argument("--compile", metavar="MODE", type=str | None, default=None, help=COMPILE_HELP)
    return parser


def command_parser(command: Command) -> ArgumentParser:
    """A command's parser, from its function's signature and docstring (:class:`Command`)."""
    flat = command.dataclass_parameters()
    parser = ArgumentParser(
        description=command.description,
        epilog=f"Writes {command.writes}." if command.writes else "Writes nothing (a dry run runs it).",
        exit_on_error=False,
    )
    parser.add_function_arguments(command.function, as_group=False, as_positional=True, skip={*NOT_OPTIONS, *flat})
    for cls in flat.values():
        parser.add_class_arguments(cls, as_group=False, skip=set(command.skip) or None)
    return with_common_options(parser, compile_option=command.overrides == "train", has=command.parameters)


def add_commands(parser: ArgumentParser, table: Mapping[str, Command | Group], dest: str) -> None:
    """The commands of ``table`` as subcommands of ``parser`` (a group's, recursively); ``fit`` parses itself."""
    sub = parser.add_subcommands(dest=dest)
    for name, command in table.items():
        if isinstance(command, Group):
            group = with_common_options(ArgumentParser(description=command.summary, exit_on_error=False))
            sub.add_subcommand(name, group, help=command.summary)
            add_commands(group, command.commands, command.dest)
        elif not command.raw:
            sub.add_subcommand(name, command_parser(command), help=command.summary)


def build_parser() -> ArgumentParser:
    """The one parser of every command of :data:`COMMANDS` but ``fit`` (whose parser is LightningCLI's, :func:`fit`)."""
    parser = ArgumentParser(prog="normbench", description=usage(), exit_on_error=False)
    add_commands(parser, COMMANDS, "command")
    return parser


BOOLEAN_OPTIONS = {f.name for f in dataclasses.fields(SweepOptions) if f.type in ("bool", bool)} | {"force", "progress"}


def resolve(argv: list[str]) -> tuple[list[str], Command | Group, list[str]]:
    """``normbench <argv>`` as (the command's words, its entry, the arguments after them): a group's command is the
    word after the group's name (a one-line error where it is none of them; the group itself for its ``--help``)."""
    words, command, rest = [argv[0]], COMMANDS[argv[0]], argv[1:]
    while isinstance(command, Group) and not (rest and rest[0] in ("-h", "--help")):
        if not rest or rest[0] not in command.commands:
            given = f"{rest[0]!r} is not one; " if rest else ""
            raise ValueError(
                f"{command.dest}: {given}choose one of {', '.join(command.commands)} "
                f"(`normbench {' '.join(words)} <{command.dest}> --help`)"
            )
        words.append(rest[0])
        command, rest = command.commands[rest[0]], rest[1:]
    return words, command, rest


def overrides_of(argv: list[str]) -> tuple[list[str], list[str]]:
    """(the command's own arguments, the runs' config overrides) of ``normbench <argv>``: overrides only for a
    command that takes them (:attr:`Command.overrides`)."""
    words, command, rest = resolve(argv)
    rest = aliased(command, rest)
    if not isinstance(command, Command) or command.overrides is None:
        return [*words, *rest], []
    own, overrides = split_overrides(rest, command.own_options())
    for token in overrides:  # a mistyped option, at once: before the command imports what it runs
        if token.startswith("--"):
            override_section(token)
    return [*words, *own], overrides


def dispatch(parsed: Namespace, overrides: list[str], dry: bool) -> None:
    """Call the function of the parsed command with its arguments (and the overrides, and the dry run, where it
    takes them); a dry run of a command that writes, without a dry run of its own, stops at the checked arguments."""
    words, command, args = [parsed.command], COMMANDS[parsed.command], parsed[parsed.command]
    while isinstance(command, Group):
        words.append(args[command.dest])
        command, args = command.commands[words[-1]], args[words[-1]]
    kwargs = command.arguments(args, COMMON_OPTIONS)
    if command.overrides is not None:
        kwargs["overrides"] = overrides
    if command.dry_run:
        kwargs["dry_run"] = dry
    elif dry and command.writes is not None:
        print(f"normbench: dry run: `normbench {' '.join(words)}` is valid")
        return
    command.function(**kwargs)


def main(argv: list[str] | None = None) -> None:
    """``normbench <argv>`` (default: this process's command line). As the process itself (``argv`` not given), a
    command stopped by SIGTERM leaves at once with status 143 once its one line is out: its records and checkpoints
    are written by then, and waiting on third-party clean-up at interpreter exit could outlast SLURM's or
    ``docker stop``'s grace period (it was seen to hang for minutes on a loaded machine)."""
    if argv is None:
        try:
            main(sys.argv[1:])
        except SystemExit as exc:
            if exc.code == TERMINATED_STATUS:
                leave_now(TERMINATED_STATUS)
            raise
        return
    argv = list(argv)
    import_paths_from_here()
    with errors_in_one_line():
        argv, verbose = take_switch(argv, VERBOSE)
        argv, dry_run = take_switch(argv, DRY_RUN)
    if verbose:  # third-party banners and tips too, here and in every subprocess
        os.environ[VERBOSE_ENV] = "1"
    quiet_third_party()
    dry = bool(dry_run) or (dry_run is None and os.environ.get(DRY_RUN_ENV) == "1")
    if not argv or any(a in ("-h", "--help") for a in argv):  # help imports no torch or Lightning
        run_command(argv, dry)
        return
    with sigterm_interrupts():
        run_command(argv, dry)


def run_command(argv: list[str], dry: bool) -> None:
    """Run ``normbench <argv>``; every error a user can fix ends as one ``normbench:`` line and an exit status
    (:func:`~normbench.commands.process.errors_in_one_line`)."""
    with errors_in_one_line():
        argv = trust_option(argv) if any(a.startswith(TRUST_OPTION) for a in argv) else argv
        if not argv or argv[0] in ("-h", "--help"):
            print(usage())
        elif argv[0] in ("-V", "--version"):
            print(f"normbench {__version__}")
        elif argv[0] not in COMMANDS:
            raise ValueError(f"command: {argv[0]!r} is not a normbench command; choose one of {', '.join(COMMANDS)}")
        elif isinstance(command := COMMANDS[argv[0]], Command) and command.raw:
            command.function(argv[1:], dry)
        else:
            own, overrides = overrides_of(argv)
            parsed = build_parser().parse_args(flag_forms(own, BOOLEAN_OPTIONS))
            dispatch(parsed, overrides, dry)


if __name__ == "__main__":
    main()
