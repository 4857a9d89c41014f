"""Readiness when the price store cannot be reached."""

from __future__ import annotations

import socket

from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.redis import RedisPriceStore, connect_redis


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_ready_is_503_with_a_reason_when_redis_is_down_and_nothing_is_held() -> None:
    store = RedisPriceStore(connect_redis(f"redis://127.0.0.1:{_closed_port()}/0", timeout_s=0.5))
    app = create_app(services=build_services(Settings(), store=store))
    async with AsyncTestClient(app) as client:
        ready = await client.get("/ready")
        assert ready.status_code == 503
        assert ready.json()["status"] == "unavailable"
        assert "redis" in ready.json()["reason"].lower()
        offers = await client.get("/offers")
        assert offers.status_code == 503
        assert offers.json()["title"] == "Price store unreachable"
        assert (await client.get("/health")).status_code == 200
