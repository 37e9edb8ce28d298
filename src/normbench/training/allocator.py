"""Host memory for training: freed tensors stay in the process heap, so the next step reuses them.

glibc serves an allocation above its mmap threshold (32 MiB at most) with a fresh ``mmap`` and returns it with
``munmap`` when it is freed. A language-model step makes several such tensors (at the quick preset the logits of 16 x
256 tokens over 4096 entries are 64 MiB, and so are their log-softmax and its gradient), so every step page-faults
them in again. On one CPU thread that was about a third of the step (``benchmarks/test_allocator.py``). With mmap
off (``M_MMAP_MAX = 0``) and the heap never trimmed (``M_TRIM_THRESHOLD``), the same tensors come from memory the
process holds. The kernels and torch's 64-byte alignment do not change, so neither do the numbers
(``tests/training/test_allocator.py``). The cost: the process's resident memory stays at its peak.

``NORMBENCH_MALLOC=system`` keeps glibc's own behaviour. Elsewhere than Linux with glibc nothing changes.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys
from functools import cache

ENV = "NORMBENCH_MALLOC"
M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # <malloc.h>
MMAP_MAX_DEFAULT = 65536  # glibc's own M_MMAP_MAX
TRIM_NEVER = 2**31 - 1  # mallopt takes an int: the heap is trimmed only above 2 GiB free at its top


@cache
def glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (the only one whose ``mallopt`` this module knows), else None."""
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def allow_mmap(allowed: bool) -> bool:
    """Let glibc serve large allocations with mmap (its default) or not; True where glibc took the setting."""
    libc = glibc()
    if libc is None:
        return False
    mmap_max = MMAP_MAX_DEFAULT if allowed else 0
    return bool(libc.mallopt(M_MMAP_MAX, mmap_max)) and (allowed or bool(libc.mallopt(M_TRIM_THRESHOLD, TRIM_NEVER)))


def keep_freed_memory() -> str:
    """Keep freed host memory for reuse (see the module docstring); the allocator in use:
    ``heap`` (freed memory kept) or ``system`` (glibc's defaults: ``NORMBENCH_MALLOC=system``, or not glibc)."""
    choice = os.environ.get(ENV, "heap")
    if choice not in ("heap", "system"):
        raise ValueError(f"{ENV}: {choice!r} is not allowed; choose heap or system")
    if choice == "system":
        return "system"
    return "heap" if allow_mmap(False) else "system"
