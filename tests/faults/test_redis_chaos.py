"""Redis killed, restarted empty and frozen under a steady, bounded load of distinct quotes with the rate
limiter on: every quote is a 200, /ready always answers within 1 s, quotes stay within 1 s (p99) while
Redis is frozen, and no vendor is lost when Redis comes back empty and one vendor's feed is failing."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.redis import RedisPriceStore, connect_redis
from tests.adapters.fake_vendor import FakeVendor
from tests.builders import card_hour_feed
from tests.servers import RedisServer, write_vendors_file

pytestmark = pytest.mark.redis

ADMIN = {"X-API-Key": "chaos-admin-key"}
Client = AsyncTestClient[Litestar]
PRICES_A = {f"a-{i}": 5.0 + i / 10 for i in range(5)}
PRICES_B = {f"b-{i}": 6.0 + i / 10 for i in range(4)}
_WORKERS = 4
_MAX_REQUESTS = 5_000  # per load phase, whatever the timing


@dataclass
class Load:
    """Quote and readiness timings gathered while a phase runs."""

    quotes: list[tuple[float, float, int]] = field(default_factory=list)  # (start, seconds, status)
    ready: list[tuple[float, float, int]] = field(default_factory=list)
    sent: int = 0

    async def _quotes(self, client: Client, until: float) -> None:
        while time.monotonic() < until and self.sent < _MAX_REQUESTS:
            self.sent += 1
            body = {"workload": {"gpu_hours": 1 + self.sent / 1000}, "gpus": ["rtx4090"], "card_counts": [1]}
            started = time.monotonic()
            response = await client.post("/quote", json=body)
            self.quotes.append((started, time.monotonic() - started, response.status_code))
            await asyncio.sleep(0.01)

    async def _ready(self, client: Client, until: float) -> None:
        while time.monotonic() < until:
            started = time.monotonic()
            response = await client.get("/ready")
            self.ready.append((started, time.monotonic() - started, response.status_code))
            await asyncio.sleep(0.1)

    async def run(self, client: Client, seconds: float) -> None:
        until = time.monotonic() + seconds
        await asyncio.gather(
            *(self._quotes(client, until) for _ in range(_WORKERS)), self._ready(client, until)
        )


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


async def _vendor_counts(client: Client) -> dict[str, int]:
    counts: dict[str, int] = {}
    for offer in (await client.get("/offers", params={"limit": 1000})).json()["items"]:
        counts[offer["vendor"]] = counts.get(offer["vendor"], 0) + 1
    return counts


@pytest.mark.parametrize("freeze_s", [3.0, pytest.param(20.0, marks=pytest.mark.slow)])
async def test_service_stays_up_through_redis_killed_emptied_and_frozen(
    private_redis: RedisServer, fake_vendor: FakeVendor, tmp_path: Path, freeze_s: float
) -> None:
    fake_vendor.publish("/a.json", card_hour_feed(PRICES_A))
    fake_vendor.publish("/b.json", card_hour_feed(PRICES_B))
    settings = Settings(
        redis_url=private_redis.url,
        vendors_file=write_vendors_file(tmp_path, fake_vendor.base_url, ["a", "b"], timeout_s=2),
        admin_api_keys=("chaos-admin-key",),
        rate_limit_per_minute=1_000_000,
    )
    async with AsyncTestClient(create_app(services=build_services(settings))) as client:
        assert await _vendor_counts(client) == {"a": 5, "b": 4}

        # Killed: quotes carry on from the held snapshot.
        killed = Load()
        stop = asyncio.get_running_loop().call_later(0.3, private_redis.stop)
        await killed.run(client, 2.0)
        stop.cancel()
        assert [status for _, _, status in killed.quotes if status != 200] == []
        assert all(seconds < 1.0 and status == 200 for _, seconds, status in killed.ready), killed.ready

        # Back, empty, with vendor b's feed failing: the refill keeps b's held offers.
        await asyncio.to_thread(private_redis.start)
        deadline = time.monotonic() + 5
        while "store empty" not in ((await client.get("/ready")).json().get("reason") or ""):
            assert time.monotonic() < deadline, "an empty store was never reported"
            await asyncio.sleep(0.2)
        quote = (await client.post("/quote", json={"workload": {"gpu_hours": 7}, "lang": "en"})).json()
        assert any("empty" in warning for warning in quote["warnings"]), quote["warnings"]
        fake_vendor.withdraw("/b.json")
        refill = await client.post("/admin/refresh", headers=ADMIN)
        assert refill.status_code == 200
        assert {o["vendor"]: o["ok"] for o in refill.json()["vendors"]} == {"a": True, "b": False}
        assert await _vendor_counts(client) == {"a": 5, "b": 4}
        store = RedisPriceStore(connect_redis(private_redis.url))
        try:
            contents = await store.read()
        finally:
            await store.aclose()
        assert {vendor: len(offers) for vendor, offers in contents.offers_by_vendor.items()} == {
            "a": 5,
            "b": 4,
        }
        assert contents.statuses["b"].last_error is not None
        assert (await client.get("/ready")).json()["status"] == "ready"

        # Frozen: answers come from the snapshot within the store deadline.
        frozen = Load()
        loop = asyncio.get_running_loop()
        freeze_at = time.monotonic() + 0.5
        loop.call_later(0.5, private_redis.freeze)
        thaw = loop.call_later(0.5 + freeze_s, private_redis.thaw)
        try:
            await frozen.run(client, freeze_s + 1.5)
        finally:
            thaw.cancel()
            private_redis.thaw()
        during = [s for start, s, _ in frozen.quotes if freeze_at <= start <= freeze_at + freeze_s]
        assert [status for _, _, status in frozen.quotes if status != 200] == []
        print(  # the figures, for `pytest -s`
            f"freeze {freeze_s} s: {len(during)} quotes, p99 {_p99(during):.3f} s, max {max(during):.3f} s; "
            f"/ready max {max(s for _, s, _ in frozen.ready):.3f} s over {len(frozen.ready)}; "
            f"killed: {len(killed.quotes)} quotes, max {max(s for _, s, _ in killed.quotes):.3f} s"
        )
        assert len(during) >= 20
        assert _p99(during) <= 1.0, sorted(during)[-5:]
        assert all(seconds < 1.0 and status == 200 for _, seconds, status in frozen.ready), frozen.ready
        assert await _vendor_counts(client) == {"a": 5, "b": 4}
