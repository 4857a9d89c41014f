"""Operations surface: metrics, request ids, JSON logs, rate limiting, CORS, body size."""

from __future__ import annotations

import json
import logging
import re

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.logs import JsonFormatter, request_id_var
from service.services import build_services
from service.settings import Settings
from service.store.base import PriceStore
from service.store.redis import RedisPriceStore

QUOTE = {"workload": {"gpu_hours": 48}, "gpus": ["rtx4090"], "card_counts": [1, 4]}


def _sample(metrics_text: str, name: str, **labels: str) -> float:
    for line in metrics_text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{key}="{value}"' in line for key, value in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no sample {name} {labels}")


async def test_metrics_count_quotes_requests_refreshes_and_offers() -> None:
    async with AsyncTestClient(create_app(Settings())) as client:
        before = (await client.get("/metrics")).text
        quoted_before = (
            _sample(before, "gpuquote_quotes_total", outcome="quoted")
            if "gpuquote_quotes_total{" in before
            else 0.0
        )
        assert (await client.post("/quote", json=QUOTE)).status_code == 200
        await client.get("/offers")
        response = await client.get("/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain")
        text = response.text
    assert _sample(text, "gpuquote_quotes_total", outcome="quoted") == quoted_before + 1
    assert _sample(text, "gpuquote_request_duration_seconds_count", path="/quote") >= 1
    assert _sample(text, "gpuquote_refresh_total", vendor="js-nanjing-ref", outcome="ok") >= 1
    assert _sample(text, "gpuquote_offers", vendor="js-nanjing-ref") == 6
    assert _sample(text, "gpuquote_snapshot_version") >= 1


async def test_request_id_is_echoed_or_made() -> None:
    async with AsyncTestClient(create_app(Settings())) as client:
        echoed = await client.get("/health", headers={"X-Request-ID": "trace-abc.123"})
        made = await client.get("/health")
        unsafe = await client.get("/health", headers={"X-Request-ID": "bad id\twith spaces"})
    assert echoed.headers["X-Request-ID"] == "trace-abc.123"
    assert re.fullmatch(r"[0-9a-f]{32}", made.headers["X-Request-ID"])
    assert unsafe.headers["X-Request-ID"] != "bad id\twith spaces"


def test_log_lines_are_json_with_the_request_id() -> None:
    record = logging.LogRecord(
        "gpuquote.refresh", logging.WARNING, __file__, 1, "vendor %s failed", ("x",), None
    )
    token = request_id_var.set("req-42")
    try:
        line = json.loads(JsonFormatter().format(record))
    finally:
        request_id_var.reset(token)
    assert line["message"] == "vendor x failed"
    assert line["level"] == "warning"
    assert line["request_id"] == "req-42"


@pytest.mark.parametrize("store", ["memory", "redis"], indirect=True)
@pytest.mark.redis
async def test_rate_limit_answers_429_with_retry_after(
    store: PriceStore, redis_url: str, redis_namespace: str
) -> None:
    settings = Settings(
        rate_limit_per_minute=3,
        redis_url=redis_url if isinstance(store, RedisPriceStore) else None,
        redis_namespace=redis_namespace,
        admin_api_keys=("a-configured-key",),
    )
    app = create_app(services=build_services(settings, store=store))
    async with AsyncTestClient(app) as client:
        statuses = [(await client.post("/quote", json=QUOTE)).status_code for _ in range(3)]
        limited = await client.post("/quote", json=QUOTE)
        made_up_key = await client.post("/quote", json=QUOTE, headers={"X-API-Key": "made-up"})
        other_caller = await client.post("/quote", json=QUOTE, headers={"X-API-Key": "a-configured-key"})
        health = await client.get("/health")
    assert statuses == [200, 200, 200]
    assert limited.status_code == 429
    assert int(limited.headers["Retry-After"]) > 0
    assert limited.json()["status"] == 429
    assert made_up_key.status_code == 429  # an unknown key counts as the address it came from
    assert other_caller.status_code == 200
    assert health.status_code == 200


async def test_cors_is_off_by_default_and_allows_configured_origins() -> None:
    preflight = {"Origin": "https://tools.example", "Access-Control-Request-Method": "POST"}
    async with AsyncTestClient(create_app(Settings())) as client:
        closed = await client.options("/quote", headers=preflight)
    async with AsyncTestClient(create_app(Settings(cors_allow_origins=("https://tools.example",)))) as client:
        opened = await client.options("/quote", headers=preflight)
    assert "access-control-allow-origin" not in closed.headers
    assert opened.headers["access-control-allow-origin"] == "https://tools.example"


async def test_body_over_the_limit_is_413_naming_the_body() -> None:
    async with AsyncTestClient(create_app(Settings())) as client:
        response = await client.post(
            "/quote",
            content=b'{"workload": {"gpu_hours": 1}, "x": "' + b"a" * 70_000 + b'"}',
            headers={"Content-Type": "application/json"},
        )
    assert response.status_code == 413
    assert response.json()["errors"][0]["field"] == "body"


async def test_requests_no_route_matches_are_counted_logged_and_carry_an_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with AsyncTestClient(create_app(Settings())) as client:
        before = (await client.get("/metrics")).text
        with caplog.at_level(logging.INFO, logger="gpuquote.access"):
            missing = await client.get("/no-such-route", headers={"X-Request-ID": "trace-404"})
            wrong_method = await client.delete("/quote", headers={"X-Request-ID": "trace-405"})
        after = (await client.get("/metrics")).text

    def unrouted(text: str, status: str) -> float:
        try:
            return _sample(text, "gpuquote_requests_total", path="<unrouted>", status_code=status)
        except AssertionError:  # none counted yet
            return 0.0

    assert (missing.status_code, wrong_method.status_code) == (404, 405)
    assert missing.headers["X-Request-ID"] == "trace-404"
    assert unrouted(after, "404") == unrouted(before, "404") + 1
    assert unrouted(after, "405") == unrouted(before, "405") + 1
    lines = {
        (record.__dict__["path"], record.__dict__["status"])
        for record in caplog.records
        if record.name == "gpuquote.access"
    }
    assert {("/no-such-route", 404), ("/quote", 405)} <= lines
