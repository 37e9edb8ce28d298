"""The ``normbench`` command: one jsonargparse parser, one subcommand per function of :mod:`normbench.commands`.

* ``normbench fit --config <task or file> [--preset quick] [--model.arch.attn_norm.component project] ...``
  trains one run (LightningCLI: any ``--trainer.*`` option passes through).
* ``normbench sweep --config <task or file> [--preset quick] [--grid AXIS=V1,V2] [--seeds 0-9]
  [--workers N | --gpus 0,1 | --shard I/N | --vectorize K] [--section.key VALUE ...]`` trains a
  variant x grid x seed sweep (finished runs skipped, interrupted ones resumed) and writes its leaderboard.
* ``normbench bench <task> [sweep options] [--section.key VALUE ...]``: the task's own sweep (shorthand).
* ``normbench leaderboard <task> [--preset quick]`` rebuilds a sweep's leaderboard from the records.
* ``normbench rejudge results/<task>[/<name>]`` judges a published board's claims again from its per-seed values.
* ``normbench compare <task> A B [--name NAME]`` prints two variants' metrics, the difference and its interval.
* ``normbench cite <task> [--name NAME]`` prints BibTeX naming the commit that contains the leaderboard.
* ``normbench analyze decompose|geometry ...`` analyses trained runs.
* ``normbench random_grid`` runs the random-key experiment (Figure 1c/1d) into ``results/unselectable/``.
* ``normbench predict <run> <test.tsv> [--out SST-2.tsv]`` predicts a GLUE-layout file with a trained sst2 run.
* ``normbench tasks`` lists the registered tasks.

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

Run records and checkpoints are data: reading one imports only registered tasks, data modules and norms
(:mod:`normbench.tasks.trust`); ``--trust_record_code true``, which every command takes, lets them import
what they name.

Bad input ends with one line ``normbench: error: <field>: <what is allowed>`` and exit status 2. Ctrl-C
ends with ``normbench: interrupted ...`` and exit status 130, SIGTERM (SLURM, ``timeout``, ``docker stop``)
with ``normbench: terminated ...`` and 143; the runs they stop are recorded as ``interrupted`` and resume.

``normbench --help`` and ``normbench <command> --help`` import no torch or Lightning (the commands import what
they run when they run); ``normbench fit --config <task> --help`` lists every option of that task's model, data
and trainer, and so imports them.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import sys
from collections.abc import Callable, Collection
from typing import Any

from jsonargparse import ArgumentError, ArgumentParser, Namespace

from normbench import commands
from normbench.errors import one_line
from normbench.io import VERBOSE_ENV, quiet_third_party
from normbench.sweep.options import BAKE_OPTION_NAMES, OPTION_NAMES, BakeOptions, SweepOptions, split_overrides
from normbench.training.runlock import BUSY_STATUS, RunBusy
from normbench.training.sigterm import TERMINATED_STATUS, Terminated, sigterm_interrupts, sigterm_received

# every subcommand, with the one line `normbench --help` shows for it
COMMANDS: dict[str, str] = {
    "fit": "train one run (LightningCLI: `normbench fit --config <task> [--preset NAME] [--section.key VALUE ...]`)",
    "sweep": "train a variant x grid x seed sweep and write its leaderboard (`normbench sweep --help`)",
    "bench": "a task's own sweep: `normbench bench <task> [--preset quick] [--section.key VALUE ...]`",
    "leaderboard": "rebuild a sweep's leaderboard from its run records (nothing is trained)",
    "rejudge": "judge a published leaderboard's claims again from the per-seed values it holds",
    "compare": "two variants of a leaderboard side by side, with the difference and its interval",
    "cite": "BibTeX for a leaderboard, naming the commit that contains it",
    "analyze": "analyses of trained runs: `analyze decompose` (Mickus et al.), `analyze geometry` (d = 3 pictures)",
    "random_grid": "Figure 1c/1d: unselectable keys among random keys, raw and after LayerNorm",
    "predict": "predict a GLUE-layout TSV file with a trained sst2 run (GLUE's submission format)",
    "tasks": "list the registered tasks and their config files",
    "bake": "train the bake queue's runs within a time budget, into the run archive (`normbench bake --budget 60`)",
    "card": "a report card for a norm: its facts and its runs on every task against LayerNorm and RMSNorm",
    "norms": "the norm leaderboard: which norm is better on each task, on equal terms (results/norms.md)",
}
# the function behind each command parsed from its signature (sweep, bench and fit are parsed apart)
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "leaderboard": commands.leaderboard,
    "rejudge": commands.rejudge,
    "compare": commands.compare,
    "cite": commands.cite,
    "random_grid": commands.random_grid,
    "predict": commands.predict,
    "tasks": commands.tasks,
    "bake": commands.bake,
    "card": commands.card,
    "norms": commands.norms,
}
ANALYSES: dict[str, Callable[..., Any]] = {"decompose": commands.decompose, "geometry": commands.geometry}
TRUST_OPTION = "--trust_record_code"  # as normbench.tasks.trust names them (imported only when a command runs)
TRUST_ENV = "NORMBENCH_TRUST_RECORD_CODE"
BAKED = "bake_options"  # the parameter of a command taking a bake's options (:class:`BakeOptions`), flat on its line
ALIASES = {"card": {"--norm_options": "--options"}}  # other spellings of a command's options
TAKES_OVERRIDES = ("sweep", "bench", "geometry")  # commands whose other --section.key VALUE configure the runs
DRY_RUN = "--dry_run"
VERBOSE = "--verbose"
DRY_RUN_ENV = "NORMBENCH_DRY_RUN"  # =1: every normbench command is a dry run (e.g. under a nox session)
READ_ONLY = ("compare", "cite", "tasks")  # they write nothing: a dry run runs them
OVERRIDES_HELP = (
    "Any other --section.key VALUE (e.g. --trainer.max_steps 100, --model.arch.attn_norm.component scale, "
    "--trainer.strategy ddp --trainer.devices 4) overrides the config of every run, as for normbench fit."
)
#: the options every command takes (main() reads them before a command's parser; its --help lists them)
COMMON_OPTIONS = {
    "dry_run": f"check the arguments (and plan a sweep's runs), train and write nothing (or {DRY_RUN_ENV}=1); "
    "compare, cite and tasks, which write nothing, run",
    "verbose": f"Lightning's device banners, tips and model summary as well (or {VERBOSE_ENV}=1)",
    "trust_record_code": "let the run records and checkpoints it reads import the classes and norms they name "
    "(or NORMBENCH_TRUST_RECORD_CODE=1; otherwise registered ones only)",
}
COMPILE_HELP = (
    "train the network through torch.compile: none (eager, the default), default, reduce-overhead (CUDA graphs) "
    "or max-autotune"
)


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [
        "usage: normbench <command> [options]   (`normbench <command> --help` for its options)",
        "",
        "normbench: normalization ablations in Transformers.",
        "",
        "commands:",
    ]
    lines += [f"  {name:<{width}}  {text}" for name, text in COMMANDS.items()]
    lines += [
        "",
        "Config overrides have one form for every command: --section.key VALUE (e.g. --trainer.max_steps 100).",
        f"Any command takes {DRY_RUN} (or {DRY_RUN_ENV}=1 in the environment): check the arguments (and plan",
        "a sweep's runs), train and write nothing; compare, cite and tasks, which write nothing, run.",
        f"Any command takes {VERBOSE} (or {VERBOSE_ENV}=1): Lightning's device banners and tips as well.",
        f"Any command takes {TRUST_OPTION} true (or {TRUST_ENV}=1): let run records and checkpoints import",
        "the classes and norms they name; without it they may name registered ones only (records are data).",
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


def first_line(function: Callable[..., Any]) -> str:
    """The first line of a function's docstring (its one-line help)."""
    return (function.__doc__ or "").strip().splitlines()[0] if function.__doc__ else ""


def function_parser(function: Callable[..., Any], skip: set[str] | None = None) -> ArgumentParser:
    """A subcommand's parser from a function's signature and docstring: required arguments positional."""
    parser = ArgumentParser(description=(function.__doc__ or "").split("\n\n")[0], exit_on_error=False)
    params = inspect.signature(function).parameters
    baked = BAKED in params  # a bake's options (bake, card): their fields are the command's own options
    parser.add_function_arguments(
        function, as_group=False, as_positional=True, skip=(skip or set()) | ({BAKED} if baked else set())
    )
    if baked:
        parser.add_class_arguments(BakeOptions, as_group=False)
    return with_common_options(parser, has=params)


def sweep_parser(positional_task: bool = False) -> ArgumentParser:
    """``normbench sweep`` (``bench``: the task first, instead of ``--config``): the fields of :class:`SweepOptions`."""
    what = "a task's own sweep" if positional_task else "a config's variant x grid x seed sweep"
    parser = ArgumentParser(
        description=f"Train {what} (finished runs are skipped, interrupted ones resume from their last "
        f"checkpoint) and write the leaderboard. {OVERRIDES_HELP}",
        exit_on_error=False,
    )
    if positional_task:
        parser.add_argument("task", type=str, help="registered task name (see `normbench tasks`)")
    parser.add_class_arguments(SweepOptions, as_group=False, skip={"config"} if positional_task else None)
    return with_common_options(parser, compile_option=True)


def build_parser() -> ArgumentParser:
    """The one parser of every subcommand but ``fit`` (whose parser is LightningCLI's, :func:`fit`)."""
    parser = ArgumentParser(prog="normbench", description=usage(), exit_on_error=False)
    sub = parser.add_subcommands(dest="command")
    sub.add_subcommand("sweep", sweep_parser(), help=COMMANDS["sweep"])
    sub.add_subcommand("bench", sweep_parser(positional_task=True), help=COMMANDS["bench"])
    for name, function in FUNCTIONS.items():
        sub.add_subcommand(name, function_parser(function), help=COMMANDS[name])
    analyze = with_common_options(ArgumentParser(description=COMMANDS["analyze"], exit_on_error=False))
    sub.add_subcommand("analyze", analyze, help=COMMANDS["analyze"])
    analyses = analyze.add_subcommands(dest="analysis")
    for name, function in ANALYSES.items():
        analyses.add_subcommand(name, function_parser(function, skip={"overrides"}), help=first_line(function))
    return parser


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


def flag_forms(argv: list[str], flags: set[str]) -> list[str]:
    """Options as jsonargparse takes them: bare ``--force`` -> ``--force=true``, ``--no-progress`` (or
    ``--no_progress``) -> ``--progress=false``, and each ``--grid AXIS=V1,V2`` appended to the list of axes."""
    out = []
    for i, arg in enumerate(argv):
        if arg == "--grid" or arg.startswith("--grid="):
            out.append(arg.replace("--grid", "--grid+", 1))
            continue
        name = arg[2:].replace("-", "_") if arg.startswith("--") and "=" not in arg else None
        bare = i + 1 == len(argv) or argv[i + 1].startswith("-") or argv[i + 1] not in ("true", "false")
        if name in flags and bare:
            out.append(f"--{name}=true")
        elif name and name.startswith("no_") and name[3:] in flags:
            out.append(f"--{name[3:]}=false")
        else:
            out.append(arg)
    return out


BOOLEAN_OPTIONS = {f.name for f in dataclasses.fields(SweepOptions) if f.type in ("bool", bool)} | {"force", "progress"}


def overrides_of(argv: list[str]) -> tuple[list[str], list[str]]:
    """(the command's own arguments, the runs' config overrides) of ``sweep``/``bench``/``analyze geometry``."""
    command = argv[0]
    if command == "analyze" and (len(argv) == 1 or argv[1] not in (*ANALYSES, "-h", "--help")):
        given = f"{argv[1]!r} is not one; " if len(argv) > 1 else ""
        raise ValueError(
            f"analysis: {given}choose one of {', '.join(ANALYSES)} (`normbench analyze <analysis> --help`)"
        )
    if command in ("sweep", "bench"):
        own, rest = split_overrides(argv[1:], OPTION_NAMES | {"task"})
        return [command, *own], rest
    if command == "analyze" and len(argv) > 1 and argv[1] == "geometry":
        names = frozenset(inspect.signature(commands.geometry).parameters) - {"overrides"}
        own, rest = split_overrides(argv[2:], names)
        return [command, "geometry", *own], rest
    return argv, []


def aliased(argv: list[str]) -> list[str]:
    """``argv`` with each alias of its command's options (:data:`ALIASES`: ``card --norm_options``) as the option."""
    names = ALIASES.get(argv[0], {}) if argv else {}
    out = []
    for arg in argv:
        option, eq, value = arg.partition("=")
        out.append(names[option] + eq + value if option in names else arg)
    return out


def arguments(args: Namespace) -> dict[str, Any]:
    """A parsed command's arguments, less the options of every command (main() has read those)."""
    return {k: v for k, v in vars(args).items() if k not in COMMON_OPTIONS}


def dispatch(parsed: Namespace, overrides: list[str], dry: bool) -> None:
    """Call the function of the parsed command."""
    command = parsed.command
    args = parsed[command]
    if command in ("sweep", "bench"):
        values = {k: v for k, v in vars(args).items() if k in OPTION_NAMES}
        options = SweepOptions(**values)
        if command == "bench":
            commands.bench(args.task, options, overrides, dry_run=dry)
        else:
            from normbench.sweep.run import run_sweep

            run_sweep(options, overrides, dry_run=dry)
        return
    if command == "analyze":
        name = args.analysis
        kwargs = arguments(args[name])
        if name == "geometry":
            kwargs["overrides"] = overrides
        if dry:
            print(f"normbench: dry run: `normbench analyze {name}` is valid")
            return
        ANALYSES[name](**kwargs)
        return
    kwargs = arguments(args)
    if BAKED in inspect.signature(FUNCTIONS[command]).parameters:
        kwargs[BAKED] = BakeOptions(**{k: kwargs.pop(k) for k in BAKE_OPTION_NAMES})
    if command in ("leaderboard", "bake", "card"):
        kwargs["dry_run"] = dry
    elif dry and command not in READ_ONLY:
        print(f"normbench: dry run: `normbench {command}` is valid")
        return
    FUNCTIONS[command](**kwargs)


def dry_fit(args: list[str]) -> None:
    """``normbench fit ... --dry_run``: parse and build the run (model, data module, trainer), print where it goes."""
    from normbench.training.cli import NormbenchCLI
    from normbench.training.config import preset_args

    cli = NormbenchCLI(args=preset_args(args))
    print(
        f"normbench: dry run: {cli.recorder.meta['variant']} seed {cli.recorder.meta['seed']} -> {cli.run_dir} "
        f"(config {cli.config_hash})"
    )


def fit(args: list[str], dry: bool) -> None:
    """``normbench fit``: LightningCLI's parser (sys.argv stays as it is: DDP re-launches this very command)."""
    if asks_fit_help(args):
        fit_help_parser().parse_args(["--help"])
        return
    from normbench.training.cli import train

    if dry:
        dry_fit(args)
        return
    try:
        print(f"normbench: run record {train(args)}")
    except RunBusy as exc:  # not an error: the other process trains the run
        print(f"normbench: {exc}", file=sys.stderr)
        raise SystemExit(BUSY_STATUS) from None


def trust_option(argv: list[str]) -> list[str]:
    """``argv`` without ``--trust_record_code [true|false]`` (any command's option), which sets
    :func:`normbench.tasks.trust.trust_record_code` for this process and its subprocesses."""
    from normbench.tasks.trust import trust_record_code  # Lightning: only when a command runs

    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == TRUST_OPTION or arg.startswith(f"{TRUST_OPTION}="):
            value = arg.partition("=")[2] if "=" in arg else None
            if value is None and i + 1 < len(argv) and argv[i + 1] in ("true", "false"):
                value, i = argv[i + 1], i + 1
            if value not in (None, "true", "false"):
                raise ValueError(f"trust_record_code: must be true or false, got {value!r}")
            trust_record_code(value != "false")
        else:
            out.append(arg)
        i += 1
    return out


def raised_by(module: str, name: str) -> tuple[type[BaseException], ...]:
    """The exception class ``module.name`` when ``module`` is imported, else none: an exception of a module
    that no command imported cannot have been raised (so ``--help`` need not import Lightning to catch it)."""
    loaded = sys.modules.get(module)
    return (getattr(loaded, name),) if loaded is not None else ()


def take_switch(argv: list[str], option: str) -> tuple[list[str], bool | None]:
    """``argv`` without ``option`` in any of its forms (``--dry_run``, ``--dry_run true|false``,
    ``--dry_run=true|false``), and its value (``None``: not given)."""
    out, value, i = [], None, 0
    while i < len(argv):
        arg = argv[i]
        if arg == option or arg.startswith(f"{option}="):
            given = arg.partition("=")[2] if "=" in arg else None
            if given is None and i + 1 < len(argv) and argv[i + 1] in ("true", "false"):
                given, i = argv[i + 1], i + 1
            if given not in (None, "true", "false"):
                raise SystemExit(f"normbench: error: {option[2:]}: must be true or false, got {given!r}")
            value = given != "false"
        else:
            out.append(arg)
        i += 1
    return out, value


def import_paths_from_here() -> None:
    """Import paths (``package.module:Class``, e.g. ``examples.pnorm_example:PNorm`` in a clone) resolve against the
    current directory first, as under ``python -m normbench`` (and in every run a command starts, each a ``python -m``
    process); the console script's ``sys.path`` lacks it. Not under ``-P``/``PYTHONSAFEPATH`` or ``-I``."""
    if sys.flags.safe_path or sys.flags.isolated:
        return
    try:
        here = os.getcwd()
    except OSError:  # the directory was removed: nothing to import from
        return
    if not {"", ".", here} & set(sys.path):
        sys.path.insert(0, here)


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
    argv, verbose = take_switch(argv, VERBOSE)
    if verbose:  # third-party banners and tips too, here and in every subprocess
        os.environ[VERBOSE_ENV] = "1"
    quiet_third_party()
    argv, dry_run = take_switch(argv, DRY_RUN)
    dry = bool(dry_run) or (dry_run is None and os.environ.get(DRY_RUN_ENV) == "1")
    if not argv or any(a in ("-h", "--help") for a in argv):  # help imports no torch or Lightning
        run_command(argv, dry)
        return
    with sigterm_interrupts():
        run_command(argv, dry)


def leave_now(status: int) -> None:
    """Flush the standard streams and end the process with ``status``, skipping interpreter clean-up."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


def run_command(argv: list[str], dry: bool) -> None:
    """Run ``normbench <argv>``; every error a user can fix ends as one ``normbench:`` line and an exit status."""
    try:
        argv = trust_option(argv) if any(a.startswith(TRUST_OPTION) for a in argv) else argv
        if not argv or argv[0] in ("-h", "--help"):
            print(usage())
        elif argv[0] == "fit":
            fit(argv[1:], dry)
        elif argv[0] not in COMMANDS:
            raise ValueError(f"command: {argv[0]!r} is not a normbench command; choose one of {', '.join(COMMANDS)}")
        else:
            own, overrides = overrides_of(aliased(argv))
            parsed = build_parser().parse_args(flag_forms(own, BOOLEAN_OPTIONS))
            dispatch(parsed, overrides, dry)
    except (
        ArgumentError,
        ValueError,
        FileNotFoundError,
        *raised_by("lightning.fabric.utilities.exceptions", "MisconfigurationException"),
    ) as exc:
        print(f"normbench: error: {one_line(str(exc))}", file=sys.stderr)
        raise SystemExit(2) from None
    except raised_by("normbench.sweep.run", "SweepFailed") as exc:
        print(f"normbench: error: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt as exc:
        if isinstance(exc, Terminated) or sigterm_received():
            print(
                "normbench: terminated (SIGTERM); running runs are recorded as interrupted, and the same command "
                "resumes where this one stopped",
                file=sys.stderr,
            )
            raise SystemExit(TERMINATED_STATUS) from None
        print("normbench: interrupted; the same command resumes where this one stopped", file=sys.stderr)
        raise SystemExit(130) from None
    except BrokenPipeError:  # e.g. `normbench --help | head`: the reader left; no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1) from None
    except OSError as exc:  # e.g. the disk filled up during a write (checked before the work): atomic writes
        # left every file as it was; one line, naming the file
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"normbench: error: {where}{exc.strerror or exc} (that file is left as it was)", file=sys.stderr)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
