"""The rate limit counts per configured key or client address, and fails open when its store does."""

from __future__ import annotations

import logging
import uuid

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient
from litestar.types import Scope

from service.app import create_app
from service.http.limits import ClientAddress
from service.services import build_services
from service.settings import Settings, SettingsError
from tests.servers import RedisServer

QUOTE = {"workload": {"gpu_hours": 48}, "gpus": ["rtx4090"], "card_counts": [1]}
MID_WINDOW_S = 1_800_000_030.0  # 30 s into a one-minute window


def _app(settings: Settings) -> Litestar:
    """Every request of a test counts in one window (a fixed clock): a test that ran across a minute
    boundary would see its counts start again half-way."""
    return create_app(services=build_services(settings), clock=lambda: MID_WINDOW_S)


def _scope(peer: str, forwarded: str | None = None) -> Scope:
    headers = [(b"x-forwarded-for", forwarded.encode())] if forwarded else []
    return {"type": "http", "client": (peer, 5000), "headers": headers}  # type: ignore[return-value]


def test_client_address_is_the_peer_unless_the_peer_is_a_trusted_proxy() -> None:
    address = ClientAddress(["10.0.0.0/8", "192.0.2.7"])
    assert address(_scope("198.51.100.1", "203.0.113.9")) == "198.51.100.1"
    assert address(_scope("10.1.2.3", "203.0.113.9")) == "203.0.113.9"
    # The nearest hop a trusted proxy did not add; what the client wrote before it is ignored.
    assert address(_scope("10.1.2.3", "1.1.1.1, 203.0.113.9, 192.0.2.7")) == "203.0.113.9"
    assert address(_scope("10.1.2.3")) == "10.1.2.3"
    assert ClientAddress([])(_scope("198.51.100.1", "203.0.113.9")) == "198.51.100.1"


def test_a_bad_trusted_proxy_entry_is_a_settings_error() -> None:
    with pytest.raises(SettingsError, match="TRUSTED_PROXIES"):
        ClientAddress(["not-an-address"])


async def test_made_up_keys_and_forwarded_headers_do_not_buy_fresh_buckets() -> None:
    settings = Settings(rate_limit_per_minute=10, admin_api_keys=("configured-key",))
    async with AsyncTestClient(_app(settings)) as client:
        statuses = [
            (
                await client.post(
                    "/quote",
                    json=QUOTE,
                    headers={"X-API-Key": uuid.uuid4().hex, "X-Forwarded-For": f"203.0.113.{i}"},
                )
            ).status_code
            for i in range(15)
        ]
        configured = await client.post("/quote", json=QUOTE, headers={"X-API-Key": "configured-key"})
    assert statuses.count(200) == 10
    assert statuses.count(429) == 5
    assert configured.status_code == 200


def _local_counts(metrics_text: str) -> float:
    for line in metrics_text.splitlines():
        if line.startswith("gpuquote_rate_limit_local_total "):
            return float(line.split()[1])
    return 0.0


@pytest.mark.redis
async def test_rate_limit_fails_open_to_local_counts_when_redis_goes(
    private_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(redis_url=private_redis.url, rate_limit_per_minute=3)
    async with AsyncTestClient(_app(settings)) as client:
        assert (await client.post("/quote", json=QUOTE)).status_code == 200  # counted in Redis
        before = _local_counts((await client.get("/metrics")).text)
        private_redis.stop()
        with caplog.at_level(logging.WARNING, logger="gpuquote.limits"):
            responses = [await client.post("/quote", json=QUOTE) for _ in range(5)]
        after = _local_counts((await client.get("/metrics")).text)
    statuses = [response.status_code for response in responses]
    assert statuses == [200, 200, 200, 429, 429]
    assert responses[-1].headers["Retry-After"] == "30"
    assert after - before == 5
    outage_lines = [r for r in caplog.records if "counting in-process" in r.getMessage()]
    assert len(outage_lines) == 1
