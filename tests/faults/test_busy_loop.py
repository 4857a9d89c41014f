"""Under load, the event loop's own delay is not the store's: with Redis answering in a millisecond and
the loop busy for longer than the store deadline between turns, requests neither report Redis
unreachable nor count rate limits in-process, and a frozen Redis still costs a request one deadline."""

from __future__ import annotations

import asyncio
import time

import pytest

from service.http.limits import RateLimiter
from service.services.snapshots import SnapshotCache
from service.store.breaker import StoreBreaker
from service.store.redis import RedisPriceStore, connect_redis
from tests.builders import make_offer, ok_status
from tests.servers import RedisServer

pytestmark = pytest.mark.redis

DEADLINE_S = 0.2


@pytest.fixture
async def store(redis_store: RedisPriceStore) -> RedisPriceStore:
    """The shared test Redis under this test's namespace (deleted after), holding one vendor."""
    await redis_store.write_vendor("js-test", [make_offer()], ok_status("js-test"))
    return redis_store


async def _busy(until: float, chunk_s: float) -> None:
    """Hold the loop for ``chunk_s`` at a time (the CPU work of a request) until ``until``."""
    while time.monotonic() < until:
        time.sleep(chunk_s)  # noqa: ASYNC251 - blocking on purpose: this is the load
        await asyncio.sleep(0)


async def test_a_busy_loop_is_not_a_slow_store(store: RedisPriceStore, redis_namespace: str) -> None:
    breaker = StoreBreaker()
    errors: list[str] = []
    cache = SnapshotCache(store, deadline_s=DEADLINE_S, breaker=breaker, on_store_error=errors.append)
    held = await cache.current()
    limiter = RateLimiter(
        1_000_000,
        client=store.client,
        namespace=redis_namespace,
        deadline_s=DEADLINE_S,
        breaker=breaker,
    )
    until = time.monotonic() + 1.5
    # 40 requests' worth of work, 15 ms each: a turn of the loop takes ~0.6 s, three times the deadline.
    load = [asyncio.create_task(_busy(until, 0.015)) for _ in range(40)]
    snapshots, hits = [], []
    while time.monotonic() < until:
        snapshots.append(asyncio.create_task(cache.current()))
        hits.append(asyncio.create_task(limiter.hit("one-caller")))
        await asyncio.sleep(0.05)
    await asyncio.gather(*load)
    served = await asyncio.gather(*snapshots)
    counted = await asyncio.gather(*hits)
    assert all(snapshot is held for snapshot in served)
    assert (cache.store_reachable, breaker.closed, errors) == (True, True, [])
    # Every hit was counted in Redis, once, in order of arrival: none fell back to in-process counts.
    assert sorted(allowed for allowed, _ in counted) == [True] * len(counted)
    keys = [key async for key in store.client.scan_iter(match=f"{redis_namespace}:ratelimit:*")]
    assert len(keys) == 1
    assert int(await store.client.get(keys[0]) or 0) == len(counted)


async def test_a_frozen_store_still_costs_one_deadline(private_redis: RedisServer) -> None:
    store = RedisPriceStore(connect_redis(private_redis.url, timeout_s=5))
    try:
        await store.write_vendor("js-test", [make_offer()], ok_status("js-test"))
        cache = SnapshotCache(store, deadline_s=DEADLINE_S)
        held = await cache.current()
        private_redis.freeze()
        try:
            started = time.monotonic()
            assert await cache.current() is held
            waited_s = time.monotonic() - started
        finally:
            private_redis.thaw()
    finally:
        await store.aclose()
    assert DEADLINE_S <= waited_s < DEADLINE_S + 0.3, waited_s
    assert cache.store_reachable is False
