"""Ctrl-C or SIGTERM during training: the run is recorded as ``interrupted`` (resumable) and the command exits
130 (Ctrl-C) or 143 (SIGTERM: SLURM at the time limit, ``timeout``, ``docker stop``).

Lightning catches a ``KeyboardInterrupt`` inside ``Trainer.fit`` / ``validate`` / ``test`` itself: it
tells the callbacks (``on_exception``), tears down, ignores SIGINT from then on and calls
``sys.exit(1)``. :class:`InterruptFlag` notes the ``KeyboardInterrupt`` it is told of, so the caller
tells that exit apart from a failure (:func:`was_interrupted`) and raises ``KeyboardInterrupt`` again;
:func:`sigint_restored` puts back the SIGINT handler Lightning replaced.

SIGTERM is made a Ctrl-C of its own kind (:mod:`normbench.training.stopping.sigterm`): it raises :class:`Terminated`,
a ``KeyboardInterrupt``, so it stops a run, a sweep and its subprocesses the way Ctrl-C does. Lightning keeps
that handler when it adds its own during a fit; without it (the library used directly) Lightning's
``SIGTERMException``, a ``SystemExit``, is recognised too.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import lightning as L
from lightning.pytorch.utilities.exceptions import SIGTERMException

from normbench.training.stopping.sigterm import Terminated, sigterm_received


class InterruptFlag(L.Callback):
    """Notes whether the trainer stopped for a ``KeyboardInterrupt`` (Ctrl-C)."""

    def __init__(self) -> None:
        self.interrupted = False

    def on_exception(self, trainer: L.Trainer, pl_module: L.LightningModule, exception: BaseException) -> None:
        if isinstance(exception, (KeyboardInterrupt, SIGTERMException)):
            self.interrupted = True


def was_interrupted(exc: BaseException, flag: InterruptFlag | None) -> bool:
    """True when ``exc`` ends a run because of Ctrl-C or SIGTERM: a ``KeyboardInterrupt`` (:class:`Terminated`
    too), Lightning's ``SIGTERMException``, or the ``SystemExit`` Lightning raises after handling either."""
    return isinstance(exc, (KeyboardInterrupt, SIGTERMException)) or (
        isinstance(exc, SystemExit) and flag is not None and flag.interrupted
    )


def interruption(exc: BaseException) -> KeyboardInterrupt:
    """What to raise for an interrupted run: :class:`Terminated` after a SIGTERM, else ``KeyboardInterrupt``."""
    if isinstance(exc, (Terminated, SIGTERMException)) or sigterm_received():
        return Terminated()
    return KeyboardInterrupt()


@contextmanager
def sigint_restored() -> Iterator[None]:
    """Restore the SIGINT handler on leaving (Lightning sets it to ignore after a Ctrl-C)."""
    main = threading.current_thread() is threading.main_thread()
    handler: Any = signal.getsignal(signal.SIGINT) if main else None
    try:
        yield
    finally:
        if main and handler is not None:
            signal.signal(signal.SIGINT, handler)
