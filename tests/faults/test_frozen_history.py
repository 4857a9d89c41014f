"""``GET /offers/{id}/history`` with Redis frozen (SIGSTOP: connections accepted, never answered) waits
``STORE_DEADLINE_S`` once, then answers at once while the shared breaker is open, and again from Redis
once it is back."""

from __future__ import annotations

import asyncio
import time

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from tests.servers import RedisServer

pytestmark = pytest.mark.redis

DEADLINE_S = 0.3
HISTORY = "/offers/js-suzhou-ref:4090/history"


async def test_history_keeps_to_the_store_deadline(private_redis: RedisServer) -> None:
    settings = Settings(redis_url=private_redis.url, store_deadline_s=DEADLINE_S)
    async with AsyncTestClient(create_app(services=build_services(settings))) as client:
        assert (await client.get(HISTORY)).status_code == 200
        private_redis.freeze()
        try:
            timings = []
            for _ in range(5):
                started = time.monotonic()
                response = await client.get(HISTORY)
                timings.append((time.monotonic() - started, response.status_code))
        finally:
            private_redis.thaw()
        # Within the breaker's probe interval (1 s) a call tries Redis again.
        after = await client.get(HISTORY)
        for _ in range(100):
            if after.status_code == 200:
                break
            await asyncio.sleep(0.05)
            after = await client.get(HISTORY)
    first_s, first_status = timings[0]
    assert first_status == 503 and first_s < DEADLINE_S + 0.5, timings
    assert all(status == 503 and seconds < 0.1 for seconds, status in timings[1:]), timings
    assert after.status_code == 200 and [e["change"] for e in after.json()["changes"]] == ["new"]
