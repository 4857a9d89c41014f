"""Rate-limit counts in Redis, many requests per round trip.

Each request adds one hit to its caller's key; hits that arrive while a round trip is in flight are sent
together in the next one, one ``INCRBY`` + ``EXPIRE`` script per key (atomic per key, so a key never
lives without its expiry; one key each, so a cluster routes them). Each request then gets its own count
back: the key's new total, less the hits queued after its own in the same round trip. Under the heaviest
traffic the limiter thus keeps one connection busy, not one per request, and the pool a quote's version
check needs stays free.

Waiting does not count the event loop's own delay (``service.store.deadline``): a loop busy with
hundreds of requests must not make the limiter give up on a Redis that answers, fall back to counting in
each process, and so let every caller through N times over.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from service.store.deadline import wait_for_store
from service.store.redis import RedisClient

__all__ = ["SharedCounts"]

_HIT_SCRIPT = """
local total = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return total
"""


@dataclass
class _Round:
    """The hits of one round trip: per key how many, and the future of the keys' new totals."""

    hits: dict[str, int] = field(default_factory=dict)
    totals: asyncio.Future[dict[str, int]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    def add(self, key: str) -> int:
        self.hits[key] = self.hits.get(key, 0) + 1
        return self.hits[key]


class SharedCounts:
    def __init__(self, client: RedisClient, *, ttl_s: int, deadline_s: float) -> None:
        self._client = client
        self._ttl_s = ttl_s
        self._deadline_s = deadline_s
        self._hard_limit_s = max(2.0, 4 * deadline_s)
        self._next: _Round | None = None
        self._sender: asyncio.Task[None] | None = None

    async def hit(self, key: str) -> int:
        """The key's count including this hit. Raises ``StoreSlow`` past the deadline and what the
        client raises (``RedisError``, ``OSError``)."""
        loop = asyncio.get_running_loop()
        started_at = loop.time()
        round_ = self._next = self._next or _Round()
        position = round_.add(key)
        if self._sender is None or self._sender.done():
            self._sender = loop.create_task(self._send())
        totals = await wait_for_store(
            round_.totals, self._deadline_s, started_at=started_at, hard_limit_s=self._hard_limit_s
        )
        return totals[key] - round_.hits[key] + position

    async def _send(self) -> None:
        """Send the queued round, and the one queued meanwhile, until none waits."""
        while (round_ := self._next) is not None:
            self._next = None
            try:
                async with asyncio.timeout(self._hard_limit_s):
                    pipe = self._client.pipeline(transaction=False)
                    for key, hits in round_.hits.items():
                        pipe.eval(_HIT_SCRIPT, 1, key, hits, self._ttl_s)
                    results = await pipe.execute()
                round_.totals.set_result(
                    {key: int(total) for key, total in zip(round_.hits, results, strict=True)}
                )
            except asyncio.CancelledError:
                round_.totals.cancel()
                raise
            except Exception as error:  # every waiter of the round learns why
                round_.totals.set_exception(error)
                round_.totals.exception()  # looked at: a round its waiters gave up on is no lost error

    async def aclose(self) -> None:
        if self._sender is not None and not self._sender.done():
            self._sender.cancel()
