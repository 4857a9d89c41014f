"""Giving the memory quotes free back to the system, where the C heap would keep it.

A quote at market scale allocates and frees arrays of megabytes (a layout of a million cells, bounds
per row), and the engine's caches drop layouts of tens of MB when new request shapes push them out.
glibc's malloc then serves such arrays from its heap (its threshold for mapping a block of its own rises
with every large block freed, up to 32 MB), and a heap shrinks only from its top: measured in process at
96,000 offers, 200 varied requests left the process at 678 MB, 251 MB of it freed memory the heap still
held (427 MB once trimmed). ``malloc_trim(0)`` hands free pages back from anywhere in the heap.

Trimming costs the next requests the page faults of taking that memory again: trimmed after every
request, the default quote at 96,000 offers took 12.7 ms instead of 6.2. So ``HeapTrimmer.trim`` trims
only when the heap holds more than ``min_free_bytes`` unused (read by ``mallinfo2``, about 0.1 ms), and
the service asks it at most once per interval while quotes or snapshot builds run
(``AppServices.running``), on a thread of its own (the call releases the GIL; the loop waits only when
it allocates while an arena is being trimmed, a few ms at most). Elsewhere than glibc it does nothing.

numpy advises the kernel to back every array of 4 MB or more with transparent huge pages. Where the
kernel's THP defrag setting is ``madvise`` (the common default), the first touch of such an array waits
for the kernel to compact memory into a free 2 MB page: the first independent-runs quote of a request
shape at 96,000 offers (1.5 million cells, arrays of 12 MB) took 320 to 370 ms with the advice and
140 ms without, in process; the default quote's steady state did not move (3.14 to 3.24 ms either way).
``no_huge_page_advice`` turns the advice off for the process (``AppServices.running``); an operator who
sets numpy's ``NUMPY_MADVISE_HUGEPAGE`` keeps what it says.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["HeapTrimmer", "Trimmed", "huge_page_switch", "no_huge_page_advice"]


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (2.33 and later): sizes in bytes, as ``size_t``."""

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


@dataclass(frozen=True, slots=True)
class Trimmed:
    """One look at the heap: the bytes it held unused, and whether it was trimmed."""

    free_bytes: int
    trimmed: bool


class HeapTrimmer:
    """Trims glibc's heap when it holds more than ``min_free_bytes`` unused; does nothing elsewhere."""

    def __init__(self, *, min_free_bytes: int) -> None:
        self.min_free_bytes = min_free_bytes
        self._libc = _glibc()

    @property
    def available(self) -> bool:
        return self._libc is not None

    def free_bytes(self) -> int:
        """The bytes glibc's arenas hold unused (0 where this is not glibc)."""
        if self._libc is None:
            return 0
        info: _MallInfo2 = self._libc.mallinfo2()
        return int(info.fordblks)

    def trim(self) -> Trimmed:
        """Give the heap's free pages back when it holds more than ``min_free_bytes`` unused."""
        free = self.free_bytes()
        if self._libc is None or free <= self.min_free_bytes:
            return Trimmed(free, trimmed=False)
        self._libc.malloc_trim(0)
        return Trimmed(free, trimmed=True)


def no_huge_page_advice() -> bool:
    """Stop numpy advising huge pages for the arrays it allocates from now on (module docstring), unless
    the environment sets numpy's own ``NUMPY_MADVISE_HUGEPAGE``, which then decides; whether it advised
    them before (False where this numpy has no such switch, or the environment decides)."""
    switch = huge_page_switch()
    if switch is None or _NUMPY_HUGE_PAGES in os.environ:
        return False
    return bool(switch(False))


# numpy's environment variable for its huge-page advice, read when it is imported.
_NUMPY_HUGE_PAGES = "NUMPY_MADVISE_HUGEPAGE"


def huge_page_switch() -> Callable[[bool], bool] | None:
    """numpy's switch of its huge-page advice, which returns the setting it replaces; None where this
    numpy has none (a private function: in ``numpy._core`` from numpy 2, ``numpy.core`` before)."""
    for name in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        switch: Callable[[bool], bool] | None = getattr(module, "_set_madvise_hugepage", None)
        return switch
    return None


def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc with ``mallinfo2`` and ``malloc_trim``; None otherwise."""
    if sys.platform != "linux":
        return None
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        libc = ctypes.CDLL(name)
        libc.mallinfo2.restype = _MallInfo2
        libc.mallinfo2.argtypes = []
        libc.malloc_trim.restype = ctypes.c_int
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):  # musl and others: no mallinfo2 or malloc_trim
        return None
    return libc
