"""SIGTERM as a Ctrl-C of its own kind, for every command: :func:`sigterm_interrupts` installs a handler raising
:class:`Terminated` (a ``KeyboardInterrupt``), so SLURM's time limit, ``timeout`` or ``docker stop`` stops a run, a
sweep and its subprocesses the way Ctrl-C does, and the command exits ``TERMINATED_STATUS`` (143).

No torch or Lightning here: ``normbench`` installs the handler before any command (``cite`` and ``compare`` too), and
importing Lightning would add seconds to each of them. What a run does when interrupted is
:mod:`normbench.training.stopping.interrupts`.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

TERMINATED_STATUS = 128 + signal.SIGTERM  # 143: the shell's status of a command ended by SIGTERM


class Terminated(KeyboardInterrupt):  # noqa: N818 - a signal, named like KeyboardInterrupt
    """SIGTERM received: the run stops as for Ctrl-C, and the command exits ``TERMINATED_STATUS``."""


_received: list[int] = []  # the SIGTERMs this process has received


def sigterm_received() -> bool:
    """Whether this process has received SIGTERM (once it has, it is stopping)."""
    return bool(_received)


def _raise_terminated(signum: int, frame: Any) -> None:
    if _received:  # the first one stops the command; later ones must not interrupt its clean-up
        return
    _received.append(signum)
    raise Terminated


@contextmanager
def sigterm_interrupts() -> Iterator[None]:
    """Inside (in the main thread), SIGTERM raises :class:`Terminated`; the previous handler is put back on leaving."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        _received.clear()
