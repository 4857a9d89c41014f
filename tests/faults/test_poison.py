"""Poisoned values in Redis: every read route still answers (from the held snapshot where it must), a
replica started meanwhile serves every vendor that is sound, and the next refresh repairs the store.

A poison is anything another writer could leave: undecodable bytes, a key of the wrong type, a value that
decodes but cannot be used (a time without its offset, duplicated offers, a price no vendor means) and
data that is simply gone (the status hash, one vendor's offers)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.redis import RedisClient, RedisPriceStore, connect_redis

pytestmark = pytest.mark.redis

ADMIN = {"X-API-Key": "poison-admin-key"}
VENDOR = "js-suzhou-ref"
QUOTE = {"workload": {"gpu_hours": 48}, "gpus": ["rtx4090"], "card_counts": [1, 4]}
Client = AsyncTestClient[Litestar]
Poison = Callable[[RedisClient, str], Awaitable[None]]


def _key(namespace: str, suffix: str) -> str:
    return f"{namespace}:{{prices}}:{suffix}"


async def _bump(client: RedisClient, namespace: str) -> None:
    """Readers rebuild only when the version moves."""
    await client.incr(_key(namespace, "version"))


async def version_text(client: RedisClient, ns: str) -> None:
    await client.set(_key(ns, "version"), b"not-a-number")


async def version_negative(client: RedisClient, ns: str) -> None:
    await client.set(_key(ns, "version"), b"-5")


async def version_huge(client: RedisClient, ns: str) -> None:
    await client.set(_key(ns, "version"), b"9" * 40)


async def version_list(client: RedisClient, ns: str) -> None:
    await client.delete(_key(ns, "version"))
    await client.rpush(_key(ns, "version"), b"1", b"2")


async def vendor_truncated(client: RedisClient, ns: str) -> None:
    raw = await client.get(_key(ns, f"vendor:{VENDOR}"))
    assert raw
    await client.set(_key(ns, f"vendor:{VENDOR}"), raw[: len(raw) // 2])
    await _bump(client, ns)


async def vendor_wrong_schema(client: RedisClient, ns: str) -> None:
    await client.set(_key(ns, f"vendor:{VENDOR}"), msgspec.msgpack.encode([{"id": 1, "price": "x"}]))
    await _bump(client, ns)


async def vendor_wrong_type(client: RedisClient, ns: str) -> None:
    await client.delete(_key(ns, f"vendor:{VENDOR}"))
    await client.hset(_key(ns, f"vendor:{VENDOR}"), "a", "b")
    await _bump(client, ns)


async def _rewrite_offers(client: RedisClient, ns: str, change: Callable[[list[Any]], list[Any]]) -> None:
    """The vendor's stored offers decoded as plain values, changed, written back, the version bumped."""
    raw = await client.get(_key(ns, f"vendor:{VENDOR}"))
    assert isinstance(raw, bytes)
    await client.set(
        _key(ns, f"vendor:{VENDOR}"), msgspec.msgpack.encode(change(msgspec.msgpack.decode(raw)))
    )
    await _bump(client, ns)


async def offer_naive_time(client: RedisClient, ns: str) -> None:
    """Well-formed, schema-valid but for one offer's fetched_at, which has no UTC offset."""

    def naive(offers: list[Any]) -> list[Any]:
        offers[0]["fetched_at"] = "2026-01-01T00:00:00"
        return offers

    await _rewrite_offers(client, ns, naive)


async def offers_duplicated(client: RedisClient, ns: str) -> None:
    await _rewrite_offers(client, ns, lambda offers: offers + offers)


async def offer_price_absurd(client: RedisClient, ns: str) -> None:
    def absurd(offers: list[Any]) -> list[Any]:
        for offer in offers:
            if offer["pricing"]["kind"] == "card_hour":
                offer["pricing"]["cny_per_card_hour"] = 1e308
        return offers

    await _rewrite_offers(client, ns, absurd)


async def offer_of_another_vendor(client: RedisClient, ns: str) -> None:
    def moved(offers: list[Any]) -> list[Any]:
        offers[0]["vendor"] = "someone-else"
        return offers

    await _rewrite_offers(client, ns, moved)


async def status_naive_time(client: RedisClient, ns: str) -> None:
    raw = await client.hget(_key(ns, "status"), VENDOR)
    assert isinstance(raw, bytes)
    status = msgspec.msgpack.decode(raw)
    status["last_success_at"] = "2026-01-01T00:00:00"
    await client.hset(_key(ns, "status"), VENDOR, msgspec.msgpack.encode(status))
    await _bump(client, ns)


async def status_deleted(client: RedisClient, ns: str) -> None:
    await client.delete(_key(ns, "status"))
    await _bump(client, ns)


async def vendor_deleted(client: RedisClient, ns: str) -> None:
    await client.delete(_key(ns, f"vendor:{VENDOR}"))
    await _bump(client, ns)


async def index_and_status_deleted(client: RedisClient, ns: str) -> None:
    await client.delete(_key(ns, "status"), _key(ns, "vendors"))
    await _bump(client, ns)


async def vendor_oversize(client: RedisClient, ns: str) -> None:
    await client.set(_key(ns, f"vendor:{VENDOR}"), b"\xc1" * (64 * 1024 * 1024))
    await _bump(client, ns)


async def status_garbage(client: RedisClient, ns: str) -> None:
    await client.hset(_key(ns, "status"), VENDOR, b"\xff\x00garbage")
    await _bump(client, ns)


async def status_wrong_type(client: RedisClient, ns: str) -> None:
    await client.delete(_key(ns, "status"))
    await client.set(_key(ns, "status"), b"garbage")
    await _bump(client, ns)


async def history_garbage(client: RedisClient, ns: str) -> None:
    key = _key(ns, f"history:{VENDOR}:4090")
    await client.rpush(key, b"\xff garbage", b"1764600000\xc1\xc1", b"")


async def history_wrong_type(client: RedisClient, ns: str) -> None:
    key = _key(ns, f"history:{VENDOR}:4090")
    await client.delete(key)
    await client.set(key, b"garbage")


async def history_old_stream(client: RedisClient, ns: str) -> None:
    """The layout of an older release: a stream per offer, with garbage among its entries."""
    key = _key(ns, f"history:{VENDOR}:4090")
    await client.delete(key)
    await client.xadd(key, {"e": b"\xff garbage"})
    await client.xadd(key, {"other": b"field"})


async def lock_wrong_type(client: RedisClient, ns: str) -> None:
    await client.rpush(_key(ns, "refresh-lock"), b"x")


async def lock_without_expiry(client: RedisClient, ns: str) -> None:
    """A lock no refresher set (they all set an expiry): it would make every refresh skip, forever."""
    await client.set(_key(ns, "refresh-lock"), b"left-behind")


POISONS: list[Poison] = [
    version_text,
    version_negative,
    version_huge,
    version_list,
    vendor_truncated,
    vendor_wrong_schema,
    vendor_wrong_type,
    pytest.param(vendor_oversize, marks=pytest.mark.slow),  # type: ignore[list-item]
    offer_naive_time,
    offers_duplicated,
    offer_price_absurd,
    offer_of_another_vendor,
    vendor_deleted,
    status_garbage,
    status_wrong_type,
    status_naive_time,
    status_deleted,
    index_and_status_deleted,
    history_garbage,
    history_wrong_type,
    history_old_stream,
    lock_wrong_type,
    lock_without_expiry,
]
# Poisons of one vendor's offers: a replica started meanwhile serves every other vendor.
VENDOR_POISONS: list[Poison] = [
    vendor_truncated,
    offer_naive_time,
    offers_duplicated,
    offer_price_absurd,
    offer_of_another_vendor,
    vendor_deleted,
]


@pytest.fixture
async def client(redis_url: str, redis_namespace: str) -> AsyncIterator[Client]:
    settings = Settings(
        redis_url=redis_url,
        redis_namespace=redis_namespace,
        admin_api_keys=("poison-admin-key",),
        rate_limit_per_minute=10_000,
    )
    app = create_app(services=build_services(settings))
    async with AsyncTestClient(app) as test_client:
        yield test_client


async def _read_routes(client: Client, offer_id: str) -> dict[str, int]:
    return {
        "/ready": (await client.get("/ready")).status_code,
        "/quote": (await client.post("/quote", json=QUOTE)).status_code,
        "/offers": (await client.get("/offers")).status_code,
        "/offers/{id}": (await client.get(f"/offers/{offer_id}")).status_code,
        "/offers/{id}/history": (await client.get(f"/offers/{offer_id}/history")).status_code,
        "/vendors": (await client.get("/vendors")).status_code,
    }


async def _degraded(client: Client, wait_s: float = 10.0) -> dict[str, Any]:
    """``/ready``'s answer once it says degraded (the rebuild that found the fault ended), or the last one
    when ``wait_s`` ran out."""
    deadline = asyncio.get_running_loop().time() + wait_s
    while True:
        ready: dict[str, Any] = (await client.get("/ready")).json()
        if ready["status"] == "degraded" or asyncio.get_running_loop().time() > deadline:
            return ready
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("poison", POISONS, ids=lambda poison: poison.__name__)
async def test_poisoned_store_never_takes_a_route_down_and_refresh_repairs_it(
    client: Client, redis_url: str, redis_namespace: str, poison: Poison
) -> None:
    before = (await client.get("/offers", params={"limit": 1000})).json()
    offer_id = f"{VENDOR}:4090"
    assert any(item["id"] == offer_id for item in before["items"])
    raw = connect_redis(redis_url)
    try:
        await poison(raw, redis_namespace)
        for _ in range(3):  # the first request finds the fault, the next ones serve what is held
            statuses = await _read_routes(client, offer_id)
            assert all(status < 500 for status in statuses.values()), statuses
            assert statuses["/offers/{id}"] == 200
        during = (await client.get("/offers", params={"limit": 1000})).json()
        assert during["total"] == before["total"]

        refresh = await client.post("/admin/refresh", headers=ADMIN)
        assert refresh.status_code == 200, refresh.text
        assert refresh.json()["ok"] is True

        contents = await RedisPriceStore(raw, namespace=redis_namespace).read()
        assert dict(contents.faults) == {}
        assert contents.version > 0
        after = (await client.get("/offers", params={"limit": 1000})).json()
        assert after["total"] == before["total"]
        ready = (await client.get("/ready")).json()
        assert ready["status"] == "ready", ready
        assert all(status == 200 for status in (await _read_routes(client, offer_id)).values())
    finally:
        await raw.aclose()


@pytest.mark.parametrize("poison", VENDOR_POISONS, ids=lambda poison: poison.__name__)
async def test_a_corrupt_vendor_hides_nothing_else_and_reports_degraded(
    client: Client, redis_url: str, redis_namespace: str, poison: Poison
) -> None:
    assert (await client.get("/offers")).status_code == 200  # a snapshot is held
    raw = connect_redis(redis_url)
    try:
        await poison(raw, redis_namespace)
        ready = (await client.get("/ready")).json()
        held = {offer["vendor"] for offer in (await client.get("/offers?limit=1000")).json()["items"]}
        # A replica starting now holds nothing: it serves every vendor that decodes.
        fresh_settings = Settings(redis_url=redis_url, redis_namespace=redis_namespace)
        async with AsyncTestClient(create_app(services=build_services(fresh_settings))) as fresh:
            fresh_statuses = await _read_routes(fresh, "js-wuxi-ref:4090")
            fresh_page = (await fresh.get("/offers?limit=1000")).json()
            fresh_ready = (await fresh.get("/ready")).json()
    finally:
        await raw.aclose()
    assert ready["status"] == "degraded"
    assert f"vendor:{VENDOR}" in ready["reason"]
    assert VENDOR in held and len(held) == 5
    assert {offer["vendor"] for offer in fresh_page["items"]} == held - {VENDOR}
    assert fresh_ready["status"] == "degraded"
    assert all(status == 200 for status in fresh_statuses.values()), fresh_statuses


@pytest.mark.slow
async def test_an_oversize_value_is_read_once_per_version(
    client: Client, redis_url: str, redis_namespace: str
) -> None:
    raw = connect_redis(redis_url)
    try:
        await vendor_oversize(raw, redis_namespace)
        assert (await client.get("/offers")).status_code == 200  # starts the rebuild that reads it once
        assert (await _degraded(client))["status"] == "degraded"  # ... and failed to decode it
        sent_before = (await raw.info("stats"))["total_net_output_bytes"]
        for _ in range(20):
            assert (await client.get("/offers")).status_code == 200
            assert (await client.post("/quote", json=QUOTE)).status_code == 200
        sent = (await raw.info("stats"))["total_net_output_bytes"] - sent_before
    finally:
        await raw.aclose()
    assert sent < 1024 * 1024, f"{sent} bytes read from Redis for 40 requests"
