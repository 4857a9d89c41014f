"""The service on a real Redis Cluster: refresh and reads work, and survive a master's death."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from tests.cluster.conftest import LocalCluster
from tests.examples import JIANGSU_EXAMPLE

pytestmark = pytest.mark.redis

ADMIN_KEY = "cluster-admin-key"


async def _refresh_until_ok(client: AsyncTestClient[Any], timeout_s: float = 30.0) -> None:
    """The cluster client rediscovers the topology on its own; a refresh may fail until it has."""
    deadline = time.monotonic() + timeout_s
    while True:
        response = await client.post("/admin/refresh", headers={"X-API-Key": ADMIN_KEY})
        if response.status_code == 200 and response.json()["ok"]:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"refresh kept failing after failover: {response.text}")
        await asyncio.sleep(0.5)


async def test_refresh_and_reads_survive_a_master_failover(redis_cluster: LocalCluster) -> None:
    settings = Settings(
        redis_url=redis_cluster.url, redis_namespace="gpuquote-cluster-test", admin_api_keys=(ADMIN_KEY,)
    )
    services = build_services(settings)
    assert services.store_kind == "redis-cluster"
    app = create_app(services=services)
    async with AsyncTestClient(app) as client:
        offers = await client.get("/offers", params={"limit": 1000})
        assert offers.status_code == 200
        assert offers.json()["total"] == 20
        version_before = offers.json()["snapshot_version"]

        quote = await client.post("/quote", json=JIANGSU_EXAMPLE)
        assert quote.status_code == 200
        costs = sorted(q["cost_cny"]["expected"] for q in quote.json()["quotes"])
        assert costs == [384.0, 512.0]

        victim = redis_cluster.master_of("gpuquote-cluster-test:{prices}:version")
        redis_cluster.kill(victim)

        # While the replica is being promoted, answers come from the snapshot held in memory.
        during = await client.get("/offers", params={"gpu": "rtx4090", "vendor": "js-suzhou-ref"})
        assert during.status_code == 200
        assert [item["id"] for item in during.json()["items"]] == [
            "js-suzhou-ref:4090",
            "js-suzhou-ref:4090-month",
        ]
        quote_during = await client.post("/quote", json=JIANGSU_EXAMPLE)
        assert quote_during.status_code == 200
        assert sorted(q["cost_cny"]["expected"] for q in quote_during.json()["quotes"]) == [384.0, 512.0]
        ready = await client.get("/ready")
        assert ready.status_code == 200

        await asyncio.to_thread(
            redis_cluster.wait_for_failover, "gpuquote-cluster-test:{prices}:version", victim
        )
        await _refresh_until_ok(client)

        after = await client.get("/offers", params={"limit": 1000})
        assert after.status_code == 200
        assert after.json()["total"] == 20
        assert after.json()["snapshot_version"] > version_before
        assert (await client.get("/ready")).json()["status"] == "ready"
