"""Redis goes away under a running service: reads and quotes carry on from the held snapshot, readiness
says degraded (not 503), writes fail cleanly, and a restarted, empty Redis is refilled by the next refresh."""

from __future__ import annotations

import asyncio
import os
import subprocess

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from tests.examples import JIANGSU_EXAMPLE
from tests.servers import GPUQUOTE, RedisServer

pytestmark = pytest.mark.redis

ADMIN = {"X-API-Key": "fault-admin-key"}


async def test_service_rides_out_a_redis_outage(private_redis: RedisServer) -> None:
    settings = Settings(redis_url=private_redis.url, admin_api_keys=("fault-admin-key",))
    app = create_app(services=build_services(settings))
    async with AsyncTestClient(app) as client:
        before = (await client.get("/offers", params={"limit": 1000})).json()
        assert before["total"] == 20

        private_redis.stop()

        during = await client.get("/offers", params={"limit": 1000})
        assert during.status_code == 200
        assert during.json()["items"] == before["items"]
        quote = await client.post("/quote", json=JIANGSU_EXAMPLE)
        assert quote.status_code == 200
        body = quote.json()
        assert sorted(q["cost_cny"]["expected"] for q in body["quotes"]) == [384.0, 512.0]
        warnings = [*body.get("warnings", []), *(w for q in body["quotes"] for w in q.get("warnings", []))]
        assert any("store" in warning.lower() and "stale" in warning.lower() for warning in warnings), (
            warnings
        )
        ready = await client.get("/ready")
        assert ready.status_code == 200
        assert ready.json()["status"] == "degraded"
        assert ready.json()["store_reachable"] is False
        refresh = await client.post("/admin/refresh", headers=ADMIN)
        assert refresh.status_code == 503
        assert refresh.json()["title"] == "Price store unreachable"

        private_redis.start()  # back, but empty: it keeps nothing on disk

        still = await client.get("/offers", params={"limit": 1000})
        assert still.json()["items"] == before["items"]
        refilled = await client.post("/admin/refresh", headers=ADMIN)
        assert refilled.status_code == 200
        assert refilled.json()["ok"] is True, refilled.json()
        after = (await client.get("/offers", params={"limit": 1000})).json()
        assert after["total"] == 20
        assert after["snapshot_version"] > before["snapshot_version"]
        assert (await client.get("/ready")).json()["status"] == "ready"


async def test_refresh_command_fails_cleanly_when_redis_is_down(private_redis: RedisServer) -> None:

    private_redis.stop()
    result = await asyncio.to_thread(
        subprocess.run,
        [GPUQUOTE, "refresh"],
        env={**os.environ, "GPUQUOTE_REDIS_URL": private_redis.url},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert "redis" in result.stderr.lower()
    assert "Traceback" not in result.stderr


async def test_a_replica_holds_prices_from_its_start_not_its_first_quote(private_redis: RedisServer) -> None:
    # A replica that has answered nothing yet still rides out an outage: it took its snapshot at start.
    app = create_app(services=build_services(Settings(redis_url=private_redis.url)))
    async with AsyncTestClient(app) as client:
        private_redis.stop()

        ready = await client.get("/ready")
        assert ready.status_code == 200
        assert ready.json()["status"] == "degraded"
        quote = await client.post("/quote", json=JIANGSU_EXAMPLE)
        assert quote.status_code == 200
        assert [item["cost_cny"]["expected"] for item in quote.json()["quotes"]] == [384.0, 512.0]
