"""The ``normbench`` process around a command: where its import paths resolve, how its errors end (one line and an
exit status), and how it leaves at once.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from jsonargparse import ArgumentError

from normbench.errors import one_line
from normbench.training.stopping.sigterm import TERMINATED_STATUS, Terminated, sigterm_received


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


@contextmanager
def errors_in_one_line() -> Iterator[None]:
    """Every error a user can fix, raised inside, ends as one ``normbench:`` line on stderr and an exit status: 2 for
    bad input, 1 for a failed sweep or write, 130 for Ctrl-C and 143 for SIGTERM (:data:`TERMINATED_STATUS`)."""
    try:
        yield
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


def raised_by(module: str, name: str) -> tuple[type[BaseException], ...]:
    """The exception class ``module.name`` when ``module`` is imported, else none: an exception of a module
    that no command imported cannot have been raised (so ``--help`` need not import Lightning to catch it)."""
    loaded = sys.modules.get(module)
    return (getattr(loaded, name),) if loaded is not None else ()


def leave_now(status: int) -> None:
    """Flush the standard streams and end the process with ``status``, skipping interpreter clean-up."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)
