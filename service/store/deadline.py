"""Waiting for the store within a deadline that the event loop's own delay does not use up.

A wait of 0.5 s on a loop busy with hundreds of requests wakes late, and the store's reply, already in the
socket, waits behind the same queue: a plain timeout then blames Redis for the loop's backlog (at 256
concurrent quotes: hundreds of store errors, the breaker open, quotes warning that prices may be stale,
with Redis idle). ``wait_for_store`` does not count the loop's delay: when its timer fires late, it waits
as long again for a reply queued meanwhile; only a timer that fires on time with no reply means the
store is slow. Past ``hard_limit_s`` it gives up either way (the loop is then too busy to tell).
"""

from __future__ import annotations

import asyncio
from typing import TypeVar

__all__ = ["LAG_TOLERANCE_S", "StoreSlow", "wait_for_store"]

T = TypeVar("T")

# A timer on a free loop fires within a millisecond or two; later than this, the loop was busy.
LAG_TOLERANCE_S = 0.02


class StoreSlow(Exception):
    """The store gave no answer within the deadline, counted in time the loop was free."""


async def wait_for_store(
    task: asyncio.Future[T], deadline_s: float, *, started_at: float | None = None, hard_limit_s: float
) -> T:
    """``task``'s result once it is done, within ``deadline_s`` of ``started_at`` (loop time; default now)
    plus the loop's own delays, at most ``hard_limit_s`` after it. The task is not cancelled: others may be
    waiting for it too. Raises ``StoreSlow`` past the deadline, and whatever the task raises."""
    loop = asyncio.get_running_loop()
    start = loop.time() if started_at is None else started_at
    end = start + deadline_s
    limit = start + max(hard_limit_s, deadline_s)
    while not task.done():
        remaining = min(end, limit) - loop.time()
        if remaining <= 0:
            raise StoreSlow(f"no answer within {deadline_s:g} s")
        await asyncio.wait({task}, timeout=remaining)
        if task.done():
            break
        late_s = loop.time() - min(end, limit)
        if late_s <= LAG_TOLERANCE_S or loop.time() >= limit:
            raise StoreSlow(f"no answer within {deadline_s:g} s")
        # The loop was busy elsewhere for that long: a reply that came meanwhile is still queued behind that
        # work. Wait as long again; a wake-up on time with no reply means the store is the slow part.
        end = loop.time() + late_s
    return task.result()
