"""Freed memory given back to the system (L2): what glibc's allocator keeps otherwise.

A big message (up to the 8 MiB body limit) is copied several times on its way: the body,
its decoding, the task, the encoded reply. Once the request ends those buffers are free
again, but glibc's malloc keeps freed memory inside its heap for later allocations, and
the size above which it maps big buffers separately (memory that does return at once)
rises as big buffers come and go, up to 32 MiB. A server that answered a burst of large
messages so went on holding hundreds of MiB it no longer used (``bench/abuse.py
messages``: 347 MiB resident after the burst, for about 235 MiB of tasks and logs kept).

`FreedMemory` compares the resident set with what glibc has handed out (``mallinfo2``), and
when the difference grew by more than ``threshold``, gives the free memory back
(``malloc_trim(0)``: about 3 ms for a heap of 100 MiB, on the event loop's thread, which is
the one allocating). The server checks once per ``interval`` while it runs
(`FreedMemory.run`; one per process, however many servers run). Where the C library is
not glibc 2.33 or later, or there is no ``/proc`` (musl, macOS, Windows), `freed_memory`
gives ``None`` and nothing runs.
"""

from __future__ import annotations

import ctypes
import logging
import os
from typing import Final

import anyio

__all__ = ["FreedMemory", "freed_memory"]

logger: Final = logging.getLogger("a2a_core.server")

_MiB: Final = 1 << 20


class _MallInfo2(ctypes.Structure):
    # glibc's struct mallinfo2 (malloc.h), every field a size_t.
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


class FreedMemory:
    """Gives back what the heap holds free once that grew by ``threshold`` bytes.

    What is resident but not allocated is the resident set (``/proc/self/statm``) less what
    malloc has handed out (``mallinfo2``: ``uordblks`` in the heap, ``hblkhd`` mapped
    apart); its other parts (code, Python's own arenas) change slowly. Memory is given back
    when that difference grew by more than ``threshold`` since the last time (or since the
    first look), so a heap that stays large costs no trim at all, and one that keeps
    growing costs one per ``threshold`` of growth."""

    def __init__(
        self, libc: ctypes.CDLL, *, threshold: int = 32 * _MiB, interval: float = 1.0
    ) -> None:
        self.threshold = threshold
        self.interval = interval
        self._mallinfo2 = libc.mallinfo2
        self._mallinfo2.restype = _MallInfo2
        self._mallinfo2.argtypes = []
        self._trim = libc.malloc_trim
        self._trim.restype = ctypes.c_int
        self._trim.argtypes = [ctypes.c_size_t]
        self._page = os.sysconf("SC_PAGE_SIZE")
        # Opened once: a server out of file descriptors (a flood of connections) must not
        # fail here.
        self._statm = os.open("/proc/self/statm", os.O_RDONLY)
        self._baseline: int | None = None
        #: How many times memory was given back (for tests and metrics).
        self.trims = 0

    def resident_unallocated(self) -> int:
        """Resident bytes that malloc has not handed out (see the class docstring)."""
        resident = int(os.pread(self._statm, 256, 0).split()[1]) * self._page
        info = self._mallinfo2()
        return resident - int(info.uordblks) - int(info.hblkhd)

    def trim_if_over(self) -> bool:
        """Give the free memory back if it grew by more than ``threshold``; whether it
        did."""
        slack = self.resident_unallocated()
        baseline = self._baseline
        if baseline is None or slack < baseline:
            self._baseline = slack  # the first look, or memory went back on its own
            return False
        if slack - baseline <= self.threshold:
            return False
        self._trim(0)
        self.trims += 1
        self._baseline = self.resident_unallocated()
        return True

    async def run(self) -> None:
        """Check every ``interval`` seconds, until cancelled (the server's task group)."""
        while True:
            await anyio.sleep(self.interval)
            try:
                self.trim_if_over()
            except Exception as exc:  # never the server's end: it runs in its task group
                logger.debug("could not give freed memory back: %s", exc)


_PROCESS: list[FreedMemory | None] = []


def freed_memory() -> FreedMemory | None:
    """This process's `FreedMemory` (one, made at the first call: it keeps a file open),
    or ``None`` on another C library than glibc."""
    if not _PROCESS:
        _PROCESS.append(_make())
    return _PROCESS[0]


def _make() -> FreedMemory | None:
    if not os.path.exists("/proc/self/statm"):
        return None
    try:
        libc = ctypes.CDLL(None)
        if not (hasattr(libc, "mallinfo2") and hasattr(libc, "malloc_trim")):
            return None
        freed = FreedMemory(libc)
        freed.trim_if_over()  # the first look: the baseline
        return freed
    except (OSError, AttributeError, ValueError):  # no C library we know, no /proc
        return None
