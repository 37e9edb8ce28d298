"""One process trains a run at a time: a lock file per run directory.

Two sweeps (or a sweep and a ``normbench fit``) on one runs directory would otherwise train the same
run twice at once, into one folder: two TensorBoard runs, and a ``last-v1.ckpt`` beside the other's
``last.ckpt``. :func:`run_lock` takes ``<run dir>/.lock`` (an OS file lock: released when its process
ends, however it ends) without waiting; a run whose lock is held is skipped by the caller
(:class:`RunBusy`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

LOCK_NAME = ".lock"
BUSY_STATUS = 75  # exit status of `normbench fit` for a run another process holds (sysexits' EX_TEMPFAIL)


class RunBusy(Exception):
    """Another process holds the run's lock: it is training that run now."""

    def __init__(self, run_dir: Path) -> None:
        super().__init__(f"{run_dir} is being trained by another process; skipped")
        self.run_dir = run_dir


@contextmanager
def run_lock(run_dir: str | Path) -> Iterator[None]:
    """Hold ``<run_dir>/.lock`` for the block (the folder is created); raises :class:`RunBusy` at once when
    another process holds it."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(run_dir / LOCK_NAME)
    try:
        lock.acquire(blocking=False)
    except Timeout:
        raise RunBusy(run_dir) from None
    try:
        yield
    finally:
        lock.release()


def is_locked(run_dir: str | Path) -> bool:
    """True when another process holds ``run_dir``'s lock now (nothing is created)."""
    path = Path(run_dir) / LOCK_NAME
    if not path.exists():
        return False
    lock = FileLock(path)
    try:
        lock.acquire(blocking=False)
    except Timeout:
        return True
    lock.release()
    return False
