"""Session fixtures: a real Redis for the tests that need one, and stores isolated per test.

Redis comes from, in order: ``GPUQUOTE_TEST_REDIS_URL``; a container via testcontainers when a Docker engine
answers; a private ``redis-server`` started here on a free port. Under ``CI=true`` a missing Redis fails the
run instead of skipping. Tests only ever delete keys under their own random namespace: they never flush a
Redis they did not start. A test that crashes or freezes Redis gets one of its own (``private_redis``).

Every test that needs a Redis server carries ``@pytest.mark.redis``, so ``pytest -m "not redis"`` runs on a
machine without one; collection fails on a test that uses a Redis fixture without the marker.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient
from testcontainers.community.redis import RedisContainer

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.memory import MemoryPriceStore
from service.store.redis import RedisPriceStore, connect_redis
from tests.adapters.fake_vendor import FakeVendor
from tests.net import docker_answers, wait_for_redis
from tests.servers import RedisServer

# Fixtures that start or reach a Redis server: a test using one must be marked ``redis``.
REDIS_FIXTURES = frozenset({"redis_url", "private_redis", "redis_store", "redis_cluster"})


def _needs_redis(item: pytest.Item) -> bool:
    if REDIS_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and callspec.params.get("store") == "redis"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    unmarked = [
        item.nodeid for item in items if _needs_redis(item) and item.get_closest_marker("redis") is None
    ]
    if unmarked:
        raise pytest.UsageError(
            "tests that need a Redis server must be marked @pytest.mark.redis: " + ", ".join(unmarked)
        )


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    if url := os.environ.get("GPUQUOTE_TEST_REDIS_URL"):
        wait_for_redis(url)
        yield url
        return
    if docker_answers():
        with RedisContainer("redis:7-alpine") as container:
            host, port = container.get_container_host_ip(), container.get_exposed_port(6379)
            yield f"redis://{host}:{port}/0"
        return
    with RedisServer(hint=" (and no GPUQUOTE_TEST_REDIS_URL or Docker engine)") as server:
        yield server.url


@pytest.fixture
def private_redis() -> Iterator[RedisServer]:
    """A redis-server of the test's own, which it may kill, restart empty, freeze and thaw."""
    with RedisServer() as server:
        yield server


@pytest.fixture
def redis_namespace() -> str:
    return f"gpuquote-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def redis_store(redis_url: str, redis_namespace: str) -> AsyncIterator[RedisPriceStore]:
    store = RedisPriceStore(connect_redis(redis_url), namespace=redis_namespace, history_max_entries=50)
    try:
        yield store
    finally:
        await _delete_namespace(redis_url, redis_namespace)
        await store.aclose()


async def _delete_namespace(url: str, namespace: str) -> None:
    client = connect_redis(url)
    try:
        keys = [key async for key in client.scan_iter(match=f"{namespace}:*", count=500)]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
def store(request: pytest.FixtureRequest) -> MemoryPriceStore | RedisPriceStore:
    """Each store implementation in turn: the contract tests run against both."""
    if request.param == "memory":
        return MemoryPriceStore(history_max_entries=50)
    redis_store: RedisPriceStore = request.getfixturevalue("redis_store")
    return redis_store


@pytest.fixture
def fake_vendor() -> Iterator[FakeVendor]:
    """The loopback vendor: replies scripted per path, or feeds the test publishes and rewrites."""
    server = FakeVendor()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def vendors_file() -> Path | None:
    """The vendors file of the app ``client`` serves; None for the bundled reference catalog. A test module
    overrides it to serve its own vendors."""
    return None


@pytest.fixture
async def client(vendors_file: Path | None) -> AsyncIterator[AsyncTestClient[Any]]:
    """The app on the embedded in-memory store, loaded from ``vendors_file`` at start."""
    settings = Settings() if vendors_file is None else Settings(vendors_file=vendors_file)
    services = build_services(settings, store=MemoryPriceStore())
    async with AsyncTestClient(create_app(services=services)) as test_client:
        yield test_client
