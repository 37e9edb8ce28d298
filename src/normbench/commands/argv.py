"""A command line's words before its parser reads them: the switches of every command taken out, flags and aliases put
in the forms jsonargparse takes.

``--dry_run`` and ``--verbose`` (:func:`take_switch`) and ``--trust_record_code`` (:func:`trust_option`) are read
first, each in any of its forms (bare, ``true|false`` after it, ``=true|false``); a bare flag is ``--flag=true`` and
``--no-flag`` is ``--flag=false`` (:func:`flag_forms`); an alias of an option is the option (:func:`aliased`).
"""

from __future__ import annotations

from normbench.commands.entry import Command, Group

TRUST_OPTION = "--trust_record_code"  # as normbench.tasks.trust names them (imported only when a command runs)
TRUST_ENV = "NORMBENCH_TRUST_RECORD_CODE"
DRY_RUN = "--dry_run"
VERBOSE = "--verbose"
DRY_RUN_ENV = "NORMBENCH_DRY_RUN"  # =1: every normbench command is a dry run (e.g. under a nox session)


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


def aliased(command: Command | Group, argv: list[str]) -> list[str]:
    """``argv`` with each alias of the command's options (``card --norm_options``) as the option it stands for."""
    names = command.aliases if isinstance(command, Command) else {}
    out = []
    for arg in argv:
        option, eq, value = arg.partition("=")
        out.append(names[option] + eq + value if option in names else arg)
    return out


def trust_option(argv: list[str]) -> list[str]:
    """``argv`` without ``--trust_record_code [true|false]`` (any command's option), which sets
    :func:`normbench.tasks.trust.trust_record_code` for this process and its subprocesses."""
    from normbench.tasks.trust import trust_record_code  # Lightning: only when a command runs

    out, value = take_switch(argv, TRUST_OPTION)
    if value is not None:
        trust_record_code(value)
    return out


def take_switch(argv: list[str], option: str) -> tuple[list[str], bool | None]:
    """``argv`` without ``option`` in any of its forms (``--dry_run``, ``--dry_run true|false``,
    ``--dry_run=true|false``), and its value (``None``: not given); a ValueError naming the option for another value."""
    out, value, i = [], None, 0
    while i < len(argv):
        arg = argv[i]
        if arg == option or arg.startswith(f"{option}="):
            given = arg.partition("=")[2] if "=" in arg else None
            if given is None and i + 1 < len(argv) and argv[i + 1] in ("true", "false"):
                given, i = argv[i + 1], i + 1
            if given not in (None, "true", "false"):
                raise ValueError(f"{option[2:]}: must be true or false, got {given!r}")
            value = given != "false"
        else:
            out.append(arg)
        i += 1
    return out, value
