"""One snapshot rebuild at a time, shared by every caller that asks for one while it runs.

A rebuild reads the store and builds the engine's tables (seconds at market scale), so callers never
start a second one beside it: they get the running one back. A caller that saw a version the running
rebuild was not asked for marks it to run once more when it ends (reading the store as it is then), so
a burst of store writes costs one rebuild after the one in flight, not one per write.

The build runs on a thread of its own at the lowest CPU priority (``service.background``), so it takes
the CPU the event loop leaves idle rather than half of it.

A rebuild that fails by an exception (not a store outage, which the breaker paces, nor a store fault,
which ``SnapshotCache`` remembers per version) is not retried for ``retry_after_s``: a fault that would
fail again does not cost the process a build per request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from contextlib import suppress

from service.errors import StoreUnreachable
from service.quote import Snapshot

__all__ = ["Rebuilds"]

logger = logging.getLogger("gpuquote.snapshots")

# A rebuild of the store at one version: the snapshot now served (raises ``StoreUnreachable`` when
# there is none to serve).
RebuildAt = Callable[[int], Awaitable[Snapshot]]


class Rebuilds:
    def __init__(self, rebuild_at: RebuildAt, *, retry_after_s: float) -> None:
        self._rebuild_at = rebuild_at
        self._retry_after_s = retry_after_s
        self._task: asyncio.Task[Snapshot] | None = None
        self._asked: int | None = None  # the version the running rebuild is building
        self._latest: int | None = None  # the newest version a caller asked for meanwhile
        self._retry_at = float("-inf")  # loop time, after a failed rebuild
        self.last_error: str | None = None

    @property
    def running(self) -> asyncio.Task[Snapshot] | None:
        """The rebuild in flight, if any."""
        task = self._task
        return task if task is not None and not task.done() else None

    def start(self, version: int) -> asyncio.Task[Snapshot] | None:
        """The rebuild that serves ``version``: the one running (to run once more after it when it was
        asked for another version), a new one, or None while a failed rebuild waits to be retried."""
        if (running := self.running) is not None:
            if version != self._asked:
                self._latest = version
            return running
        if asyncio.get_running_loop().time() < self._retry_at:
            return None
        self._asked, self._latest = version, None
        task = self._task = asyncio.create_task(self._rebuilds())
        task.add_done_callback(_retrieve)
        return task

    async def _rebuilds(self) -> Snapshot:
        while True:
            asked = self._asked
            assert asked is not None  # set by ``start`` before the task runs
            try:
                snapshot = await self._rebuild_at(asked)
            except StoreUnreachable:
                raise  # nothing held and the store gave nothing: the caller's breaker paces the retry
            except Exception as error:
                self._retry_at = asyncio.get_running_loop().time() + self._retry_after_s
                self.last_error = f"snapshot rebuild failed: {error!r}"[:300]
                logger.exception("snapshot rebuild at version %d failed; retried in %g s", asked,
                                 self._retry_after_s)  # fmt: skip
                raise StoreUnreachable(f"price snapshot could not be built: {error!r}"[:300]) from error
            self.last_error = None
            if self._latest is None:
                return snapshot
            # The store moved while this one was built: once more, reading the store as it is now.
            self._asked, self._latest = self._latest, None

    async def aclose(self) -> None:
        task = self._task
        if task is not None and not task.done():
            task.cancel()
            with suppress(asyncio.CancelledError, StoreUnreachable):
                await task


def _retrieve(task: asyncio.Task[Snapshot]) -> None:
    """A task nobody waited for to the end still has its error looked at (and not logged as lost)."""
    if not task.cancelled():
        task.exception()
