"""``normbench fit --config X --help``, kept once built: LightningCLI's help of a config takes seconds to build
(importing lightning alone is most of them) and changes only with what it is built from, so its text is kept in the
user's cache (``$NORMBENCH_CACHE/help/``, :func:`normbench.io.cache_root`) under the hash of all of it, and a later
call prints it at once:

* the arguments as given, and the terminal's width (the text is wrapped to it);
* every file an argument names (a config file), the shipped task configs and the package's own source;
* the versions of the libraries that build the help (lightning, jsonargparse, torch, normbench).

Anything else that changed the help would change one of these; a cached text that cannot be read is built again.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from normbench.io import atomic_write_text, cache_root

LIBRARIES = ("lightning", "jsonargparse", "torch", "normbench")


def help_key(args: list[str]) -> str:
    """The hash of everything ``fit <args> --help`` is built from (see the module docstring)."""
    import normbench
    import normbench.task_configs

    digest = hashlib.sha256()
    digest.update(repr([*args, shutil.get_terminal_size().columns, os.environ.get("COLUMNS")]).encode())
    for name in LIBRARIES:
        try:
            digest.update(f"{name}={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name}=none".encode())
    sources = [Path(normbench.__file__).parent, Path(normbench.task_configs.__file__).parent]
    files = sorted(p for root in sources for p in root.rglob("*") if p.suffix in (".py", ".yaml") and p.is_file())
    files += [Path(a) for a in args if not a.startswith("-") and Path(a).is_file()]
    for path in files:
        digest.update(str(path).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:32]


def help_file(args: list[str]) -> Path:
    """Where the help of ``fit <args>`` is kept."""
    return cache_root() / "help" / f"fit-{help_key(args)}.txt"


def cached_help(args: list[str]) -> str | None:
    """The kept help of ``fit <args>`` (``None``: not built yet, or unreadable)."""
    try:
        return help_file(args).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def keep_help(args: list[str], text: str) -> None:
    """Keep ``text`` as the help of ``fit <args>`` (written atomically; a cache that cannot be written: not kept)."""
    try:
        atomic_write_text(help_file(args), text)
    except OSError:
        pass


def asks_config_help(args: list[str]) -> bool:
    """Whether ``normbench fit <args>`` asks for a config's help (``--help`` beside ``--config``)."""
    helps = any(a in ("-h", "--help") for a in args)
    return helps and any(a in ("-c", "--config") or a.startswith("--config=") for a in args)


def lightning_help(args: list[str]) -> None:
    """LightningCLI's help of ``fit <args>``, printed (its parser exits)."""
    from normbench.training.fit import train

    train(args)


def config_help(args: list[str], build: Callable[[list[str]], object] = lightning_help) -> str:
    """The help of ``fit <args>``: the kept text, else what ``build(args)`` prints before it exits (LightningCLI's
    parser: ``SystemExit(0)``), kept for the next call. A parser that fails prints what it printed and exits so."""
    text = cached_help(args)
    if text is not None:
        return text
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            build(args)
    except SystemExit as exc:
        if exc.code not in (0, None):
            print(out.getvalue(), end="")
            raise
    text = out.getvalue()
    keep_help(args, text)
    return text
