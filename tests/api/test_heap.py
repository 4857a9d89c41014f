"""The served app moves what start-up built out of the cyclic collector's reach; other apps leave the heap."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.settings import Settings


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()  # the test process keeps collecting what later tests leave


async def test_the_served_app_freezes_what_start_up_built(unfrozen: None) -> None:
    app = create_app(Settings(), freeze_heap=True)
    assert gc.get_freeze_count() == 0
    async with AsyncTestClient(app) as client:
        frozen = gc.get_freeze_count()
        assert frozen > 10_000  # modules, the app and the first snapshot
        assert (await client.post("/quote", json={"workload": {"gpu_hours": 48}})).status_code == 200
        assert gc.get_freeze_count() <= frozen  # what requests allocate is never frozen


async def test_an_app_built_for_tests_leaves_the_heap_alone(unfrozen: None) -> None:
    async with AsyncTestClient(create_app(Settings())) as client:
        assert (await client.get("/health")).status_code == 200
        assert gc.get_freeze_count() == 0
