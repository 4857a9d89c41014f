"""Redis comes back empty while vendor b's feed fails, and the refresh CronJob (holding no snapshot) refills
it: b's offers are missing from the store, not withdrawn. Every replica must then serve the same catalog,
one started afterwards too: a replica that held b's offers writes them back, on its next request or on
the refresh it is asked for."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.redis import RedisPriceStore, connect_redis
from tests.adapters.fake_vendor import FakeVendor
from tests.builders import card_hour_feed
from tests.servers import RedisServer, write_vendors_file

pytestmark = pytest.mark.redis

ADMIN = {"X-API-Key": "converge-admin-key"}
PRICES_A = {f"a-{i}": 5.0 + i / 10 for i in range(7)}
PRICES_B = {f"b-{i}": 6.0 + i / 10 for i in range(6)}


@asynccontextmanager
async def _replica(settings: Settings) -> AsyncIterator[AsyncTestClient[Any]]:
    async with AsyncTestClient(create_app(services=build_services(settings))) as client:
        yield client


async def _ids(client: AsyncTestClient[Any]) -> list[str]:
    return sorted(
        offer["id"] for offer in (await client.get("/offers", params={"limit": 1000})).json()["items"]
    )


async def _stored_vendors(url: str) -> dict[str, int]:
    store = RedisPriceStore(connect_redis(url))
    try:
        contents = await store.read()
    finally:
        await store.aclose()
    return {vendor: len(offers) for vendor, offers in contents.offers_by_vendor.items()}


async def _empty_redis_refilled_without_b(
    redis: RedisServer, fake_vendor: FakeVendor, settings: Settings
) -> None:
    await asyncio.to_thread(redis.stop)
    await asyncio.to_thread(redis.start)  # back, empty
    fake_vendor.withdraw("/b.json")
    cronjob = build_services(settings)  # `gpuquote refresh`: a process that holds no snapshot
    try:
        report = await cronjob.refresher.refresh()
    finally:
        await cronjob.aclose()
    assert {outcome.vendor: outcome.ok for outcome in report.vendors} == {"a": True, "b": False}
    assert await _stored_vendors(redis.url) == {"a": 7}


@pytest.fixture
def settings(private_redis: RedisServer, fake_vendor: FakeVendor, tmp_path: Path) -> Settings:
    fake_vendor.publish("/a.json", card_hour_feed(PRICES_A))
    fake_vendor.publish("/b.json", card_hour_feed(PRICES_B))
    return Settings(
        redis_url=private_redis.url,
        vendors_file=write_vendors_file(tmp_path, fake_vendor.base_url, ["a", "b"], timeout_s=2),
        admin_api_keys=("converge-admin-key",),
    )


async def test_a_replica_holding_lost_offers_writes_them_back(
    private_redis: RedisServer, fake_vendor: FakeVendor, settings: Settings
) -> None:
    async with _replica(settings) as old:
        held = await _ids(old)
        assert len(held) == 13
        await _empty_redis_refilled_without_b(private_redis, fake_vendor, settings)

        deadline = time.monotonic() + 10
        while (await _stored_vendors(private_redis.url)).get("b") != 6:
            assert time.monotonic() < deadline, "the held offers of b were never written back"
            assert await _ids(old) == held  # the old replica serves them meanwhile
            await asyncio.sleep(0.05)
        async with _replica(settings) as new:
            assert await _ids(new) == held
        assert await _ids(old) == held


async def test_a_refresh_on_a_replica_holding_lost_offers_writes_them_back(
    private_redis: RedisServer, fake_vendor: FakeVendor, settings: Settings
) -> None:
    async with _replica(settings) as old:
        held = await _ids(old)
        await _empty_redis_refilled_without_b(private_redis, fake_vendor, settings)
        refresh = await old.post("/admin/refresh", headers=ADMIN)  # before it served anything else
        assert {o["vendor"]: o["ok"] for o in refresh.json()["vendors"]} == {"a": True, "b": False}
        assert await _stored_vendors(private_redis.url) == {"a": 7, "b": 6}
        async with _replica(settings) as new:
            assert await _ids(new) == held == await _ids(old)
