"""Fixtures for the adapter tests: one client (the loopback ``fake_vendor`` is in tests/conftest.py), a fixed
clock, recorded sleeps."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from adapters import AdapterContext
from adapters.base import build_client
from tests.adapters.fake_vendor import FakeVendor
from tests.adapters.feeds import FETCHED_AT, PAYLOADS


@pytest.fixture
async def client(fake_vendor: FakeVendor) -> AsyncIterator[httpx.AsyncClient]:
    # Depends on the server so that it closes first: no keep-alive connection outlives the test.
    async with build_client() as vendor_client:
        yield vendor_client


@pytest.fixture
def context() -> AdapterContext:
    return AdapterContext(
        base_dir=PAYLOADS, clock=lambda: FETCHED_AT, environ={"JS_TOKEN": "s3cret"}, retry_backoff_s=0.001
    )


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The delays the retry loop asked for, in order; the test does not wait them out."""
    requested: list[float] = []

    async def record(delay_s: float) -> None:
        requested.append(delay_s)

    monkeypatch.setattr("adapters._http._sleep", record)
    return requested
