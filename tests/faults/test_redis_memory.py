"""Redis at ``maxmemory`` (``noeviction``, as shipped): price writes never fail for history's sake, history
stays inside its share of the memory, and a Redis already full of an older release's history streams is
made room in by the next refresh."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
import redis

from schemas.offer import CardHourPricing, Offer
from service.store.base import HistoryBounds
from service.store.redis import RedisPriceStore, connect_redis
from tests.builders import make_offer, ok_status
from tests.servers import RedisServer

pytestmark = pytest.mark.redis

MAXMEMORY = 16 * 1024 * 1024
NAMESPACE = "gpuquote"


@pytest.fixture
def small_redis() -> Iterator[RedisServer]:
    with RedisServer("--maxmemory", str(MAXMEMORY), "--maxmemory-policy", "noeviction") as server:
        yield server


def _used_bytes(server: RedisServer) -> int:
    client = redis.Redis.from_url(server.url)
    try:
        return int(client.info("memory")["used_memory"])
    finally:
        client.close()


def _offers(round_: int, count: int) -> list[Offer]:
    """A vendor that renames every SKU each refresh: every offer new, every previous one removed."""
    return [
        make_offer(
            "churn", f"r{round_}-{index}", pricing=CardHourPricing(cny_per_card_hour=2 + index % 50 / 10)
        )
        for index in range(count)
    ]


async def test_sku_churn_never_fails_a_price_write_and_history_keeps_to_its_share(
    small_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisPriceStore(connect_redis(small_redis.url), namespace=NAMESPACE, history=HistoryBounds())
    try:
        with caplog.at_level(logging.WARNING, logger="gpuquote.store"):
            for round_ in range(10):
                offers = _offers(round_, 4_000)
                await store.write_vendor("churn", offers, ok_status("churn", len(offers)))  # never raises
                contents = await store.read()
                assert [offer.id for offer in contents.offers_by_vendor["churn"]] == [o.id for o in offers]
                assert await store.try_lock(f"round-{round_}", 30)
                await store.unlock(f"round-{round_}")
    finally:
        await store.aclose()
    used = _used_bytes(small_redis)
    skipped = [record for record in caplog.records if "not added to the history" in record.getMessage()]
    # History stopped once Redis passed half its maxmemory (plus at most one chunk): prices had room.
    assert skipped, "history was never held back, so the churn did not reach the memory limit"
    assert used < MAXMEMORY * 0.8, used


async def test_a_redis_full_of_old_history_streams_is_made_room_in(
    small_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    raw = redis.Redis.from_url(small_redis.url)
    try:
        index = 0
        while True:  # an older release's stream per offer, 4 KB each, until Redis refuses more
            try:
                raw.xadd(f"{NAMESPACE}:{{prices}}:history:old:{index}", {"e": b"x" * 64})
            except redis.exceptions.OutOfMemoryError:
                break
            index += 1
    finally:
        raw.close()
    store = RedisPriceStore(connect_redis(small_redis.url), namespace=NAMESPACE)
    offers = [make_offer("fresh", "4090")]
    try:
        with caplog.at_level(logging.WARNING, logger="gpuquote.store"):
            assert await store.try_lock("refresher", 30)
            version = await store.write_vendor("fresh", offers, ok_status("fresh"))
        contents = await store.read()
        history = await store.history("fresh:4090")
    finally:
        await store.aclose()
    assert version > 0
    assert list(contents.offers_by_vendor["fresh"]) == offers
    assert [entry.change for entry in history] == ["new"]
    assert any(
        "deleted" in record.getMessage() and "history" in record.getMessage() for record in caplog.records
    )
    assert _used_bytes(small_redis) < MAXMEMORY / 2
