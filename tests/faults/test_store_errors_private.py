"""What Redis said when it failed stays private: no route and no log line names its host or port, nor
echoes the arguments of a failed command (a vendor's msgpack offers)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
import redis
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from tests.net import free_port
from tests.servers import RedisServer

ADMIN = {"X-API-Key": "private-admin-key"}
QUOTE = {"workload": {"gpu_hours": 48}, "gpus": ["rtx4090"], "card_counts": [1]}


def _leaks(text: str, port: int) -> list[str]:
    return [fragment for fragment in ("127.0.0.1", f":{port}", str(port), "localhost") if fragment in text]


async def _routes(client: AsyncTestClient[Any]) -> dict[str, Any]:
    return {
        "/offers": await client.get("/offers"),
        "/vendors": await client.get("/vendors"),
        "/quote": await client.post("/quote", json=QUOTE),
        "/ready": await client.get("/ready"),
        "/offers/{id}/history": await client.get("/offers/js-suzhou-ref:4090/history"),
        "/admin/refresh": await client.post("/admin/refresh", headers=ADMIN),
        "/admin/vendors": await client.get("/admin/vendors", headers=ADMIN),
    }


async def test_no_route_and_no_log_line_names_the_store(caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()  # nothing listens there: every call is refused
    settings = Settings(redis_url=f"redis://127.0.0.1:{port}/0", admin_api_keys=("private-admin-key",))
    with caplog.at_level(logging.DEBUG):
        async with AsyncTestClient(create_app(services=build_services(settings))) as client:
            responses = await _routes(client)
    statuses = {route: response.status_code for route, response in responses.items()}
    assert statuses["/offers"] == statuses["/vendors"] == statuses["/quote"] == 503, statuses
    assert statuses["/ready"] == 503 and statuses["/offers/{id}/history"] == 503, statuses
    assert all(status < 500 or status == 503 for status in statuses.values()), statuses
    assert "connection refused" in responses["/offers"].text.lower()
    leaks = {route: _leaks(response.text, port) for route, response in responses.items()}
    assert not any(leaks.values()), leaks
    logged = "\n".join(f"{record.getMessage()} {record.exc_text or ''}" for record in caplog.records)
    assert not _leaks(logged, port), [line for line in logged.splitlines() if _leaks(line, port)][:3]


@pytest.mark.redis
async def test_a_failed_command_is_described_without_its_arguments(private_redis: RedisServer) -> None:
    from service.store.redis_errors import describe  # noqa: PLC0415

    client = redis.asyncio.Redis.from_url(private_redis.url)
    try:
        await client.rpush("not-a-string", b"x")
        pipe = client.pipeline(transaction=True)
        pipe.set("other", b"\x93\xa4binary offers \xff" * 100)
        pipe.incr("not-a-string")
        with pytest.raises(redis.exceptions.ResponseError) as raised:
            await pipe.execute()
    finally:
        await client.aclose()
    assert "binary offers" in str(raised.value) or "Command #" in str(raised.value)  # what redis-py says
    assert describe(raised.value) == "WRONGTYPE Operation against a key holding the wrong kind of value"
