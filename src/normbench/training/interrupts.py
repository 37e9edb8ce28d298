"""Ctrl-C during training: the run is recorded as ``interrupted`` (resumable) and the command exits 130.

Lightning catches a ``KeyboardInterrupt`` inside ``Trainer.fit`` / ``validate`` / ``test`` itself: it
tells the callbacks (``on_exception``), tears down, ignores SIGINT from then on and calls
``sys.exit(1)``. :class:`InterruptFlag` notes the ``KeyboardInterrupt`` it is told of, so the caller
tells that exit apart from a failure (:func:`was_interrupted`) and raises ``KeyboardInterrupt`` again;
:func:`sigint_restored` puts back the SIGINT handler Lightning replaced.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import lightning as L


class InterruptFlag(L.Callback):
    """Notes whether the trainer stopped for a ``KeyboardInterrupt`` (Ctrl-C)."""

    def __init__(self) -> None:
        self.interrupted = False

    def on_exception(self, trainer: L.Trainer, pl_module: L.LightningModule, exception: BaseException) -> None:
        if isinstance(exception, KeyboardInterrupt):
            self.interrupted = True


def was_interrupted(exc: BaseException, flag: InterruptFlag | None) -> bool:
    """True when ``exc`` ends a run because of Ctrl-C: a ``KeyboardInterrupt``, or the ``SystemExit``
    Lightning raises after handling one."""
    return isinstance(exc, KeyboardInterrupt) or (isinstance(exc, SystemExit) and flag is not None and flag.interrupted)


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
