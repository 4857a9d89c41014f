"""CPU work a request must not wait for, on a thread of its own at the lowest CPU priority.

A snapshot build (seconds at market scale) or a catalog decode on a thread at the event loop's priority
takes half the loop's CPU, and worse, the GIL: it takes the GIL each time the loop's thread lets it go
(inside numpy and polars calls), and the loop then waits a switch interval (5 ms) to get it back, many
times per quote. At nice 19 the scheduler runs the thread on the CPU the loop leaves idle (and for about
1.5 % of a CPU the loop keeps busy), so it seldom holds the GIL when the loop wants it. Measured on one
CPU, the quote p99 while snapshots are built over the p99 without: at 96,000 offers 6.5 at the loop's
priority, 1.2 at nice 19; at 12,000 offers 8.0, 6.6 at nice 10, 1.5 at nice 19.

A thread inherits the priority of the thread that starts it, so the threads polars starts on first use
are started before the first background thread is, when polars is loaded (by the price-sheet adapter,
whose parsing runs on the event loop: loaded later, its threads are started there): started by a build,
they would run every later polars call at the lowest priority too.

Its priority does not keep it off the GIL in the idle moments the loop leaves (waiting for the next
request), and a request that arrives then waits for the GIL a switch interval before the thread is made
to give it up: 5 ms by default, a third of a quote at market scale, paid again after each idle moment.
A process with background threads switches after 0.1 ms instead (``SWITCH_INTERVAL_S``). At 96,000
offers on one CPU under a steady load (``bench/market.py`` measure 6), the quote p99 while a snapshot
was built 31.5-32 ms at 5 ms, 21.3-21.4 ms at 0.5 ms, beside 17-19 ms with nothing built; the build
then took 72-75 s instead of 46-56 s under that load. Later, with quotes faster (p99 3.8-6.2 ms with
nothing built), three runs at 0.5 ms alternating with three at 0.1 ms, then two more at 0.1 ms and
two at 0.05 ms: the p99 from the refresh's end until the new snapshot was served 8.0-10.7 ms at 0.5 ms,
5.6-7.8 ms at 0.1 ms (5.5-6.3 at 0.05 ms), the new version served 22-25 s after the refresh started at
0.5 ms, 31-36 s at 0.1 ms (42-46 s at 0.05 ms). A lower priority still (``SCHED_IDLE``) changed
neither figure.

The price of the priority: under a load that keeps the CPU busy, the work takes longer (the held
snapshot, whose quotes say how old their prices are, serves meanwhile).

While work runs there, the cyclic garbage collector is paused: the work allocates hundreds of thousands
of long-lived objects, which set off full collections that hold the GIL (tens of milliseconds at 12,000
offers, up to 160 ms at 96,000) in the middle of quotes. Pausing it keeps nothing alive: what the work
builds is freed by reference counting (a snapshot built, quoted 280 times and dropped leaves no cyclic
garbage), and the collector runs again as usual once the work ends.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, suppress
from typing import ParamSpec, TypeVar

__all__ = ["BACKGROUND_NICE", "BackgroundThread"]

P = ParamSpec("P")
T = TypeVar("T")

BACKGROUND_NICE = 19
# Seconds a thread waiting for the GIL lets the thread holding it run before it asks for it.
SWITCH_INTERVAL_S = 0.0001


class BackgroundThread:
    """One worker thread at ``nice`` (on Linux, where a thread has a priority of its own); ``name`` names
    it in thread dumps and logs. Work handed to it runs one piece at a time, in order."""

    def __init__(self, name: str, *, nice: int = BACKGROUND_NICE) -> None:
        _start_library_pools()
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        self._executor = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=name, initializer=_lower_priority, initargs=(nice,)
        )

    async def run(self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``function(*args, **kwargs)`` on the thread, the collector paused meanwhile, awaited on the
        loop (a cancelled wait does not stop it: it ends in the background)."""
        call = functools.partial(_without_collector, functools.partial(function, *args, **kwargs))
        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    def close(self) -> None:
        """No more work; what runs ends on its own, what waits is dropped."""
        self._executor.shutdown(wait=False, cancel_futures=True)


def _start_library_pools() -> None:
    """polars' threads (its compute pool, and the runtime its first query starts), when polars is loaded,
    started by this thread at its priority rather than by a background thread's first query at nice 19."""
    polars = sys.modules.get("polars")
    if polars is not None:
        polars.DataFrame({"started": [0]}).select(polars.col("started").sum())


class _CollectorPause(AbstractContextManager[None]):
    """The cyclic collector off while any background work runs (threads of several ``BackgroundThread``
    may overlap), back to what it was when the last one ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders = 0
        self._was_enabled = False

    def __enter__(self) -> None:
        with self._lock:
            if self._holders == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._holders += 1

    def __exit__(self, *exc_info: object) -> None:
        with self._lock:
            self._holders -= 1
            if self._holders == 0 and self._was_enabled:
                gc.enable()


_collector_pause = _CollectorPause()


def _without_collector(call: Callable[[], T]) -> T:
    with _collector_pause:
        return call()


def _lower_priority(nice: int) -> None:
    # On Linux a thread is a task with a nice value of its own; elsewhere PRIO_PROCESS would renice the
    # whole process, so the thread keeps the process's priority there.
    if sys.platform != "linux" or nice <= 0:
        return
    thread_id = threading.get_native_id()
    with suppress(OSError):  # never fatal: the work only runs at the process's priority
        os.setpriority(os.PRIO_PROCESS, thread_id, max(nice, os.getpriority(os.PRIO_PROCESS, thread_id)))
