"""A refresh writing many vendors at once appends their price history one bounded script at a time.

Redis runs a script to its end before it answers any other client, so a replica's version check waits
behind every history script already queued: each call carries at most ``HISTORY_CHUNK`` changes, and one
store runs one call at a time, however many vendor writes run concurrently.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from schemas.offer import CardHourPricing
from service.store._redis_history import HISTORY_CHUNK
from service.store.redis import RedisPriceStore, connect_redis
from tests.builders import make_offer, ok_status
from tests.conftest import _delete_namespace

pytestmark = pytest.mark.redis

VENDORS = 5
OFFERS_PER_VENDOR = 2 * HISTORY_CHUNK + 37  # three script calls each


class _WatchedScripts:
    """A Redis client that records each script call's changes and how many calls were in flight."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.in_flight = 0
        self.most_in_flight = 0
        self.changes_per_call: list[int] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def eval(self, script: str, key_count: int, *args: Any) -> Any:
        sizes = args[-2]  # ``append_history``: the parts' sizes, two parts (id, entry) per change
        self.changes_per_call.append(len(sizes.split(",")) // 2)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.002)  # a slow script: the other writes reach theirs meanwhile
            return await self._client.eval(script, key_count, *args)
        finally:
            self.in_flight -= 1


@pytest.fixture
async def watched(
    redis_url: str, redis_namespace: str
) -> AsyncIterator[tuple[RedisPriceStore, _WatchedScripts]]:
    client = _WatchedScripts(connect_redis(redis_url))
    store = RedisPriceStore(client, namespace=redis_namespace)  # type: ignore[arg-type]
    try:
        yield store, client
    finally:
        await _delete_namespace(redis_url, redis_namespace)
        await store.aclose()


def _offers(vendor: str, rate_cny: float) -> list[Any]:
    return [
        make_offer(vendor, f"sku-{index}", pricing=CardHourPricing(cny_per_card_hour=rate_cny + index / 1000))
        for index in range(OFFERS_PER_VENDOR)
    ]


async def test_concurrent_vendor_writes_append_history_one_bounded_call_at_a_time(
    watched: tuple[RedisPriceStore, _WatchedScripts],
) -> None:
    store, client = watched
    vendors = [f"js-vendor-{index}" for index in range(VENDORS)]
    for rate_cny in (2.0, 2.5):  # every offer new, then every price changed
        await asyncio.gather(
            *(
                store.write_vendor(vendor, _offers(vendor, rate_cny), ok_status(vendor, OFFERS_PER_VENDOR))
                for vendor in vendors
            )
        )
    assert client.most_in_flight == 1
    assert max(client.changes_per_call) == HISTORY_CHUNK
    assert sum(client.changes_per_call) == 2 * VENDORS * OFFERS_PER_VENDOR
    assert len(client.changes_per_call) == 2 * VENDORS * 3
    for vendor in (vendors[0], vendors[-1]):
        for sku in ("sku-0", f"sku-{OFFERS_PER_VENDOR - 1}"):
            history = await store.history(f"{vendor}:{sku}")
            assert [entry.change for entry in history] == ["new", "changed"], (vendor, sku)
