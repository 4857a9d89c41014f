"""With no admin key configured, admin routes say admin is disabled, whatever key is sent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.memory import MemoryPriceStore

Client = AsyncTestClient[Any]


@pytest.fixture
async def no_admin() -> AsyncIterator[Client]:
    services = build_services(Settings(admin_api_keys=()), store=MemoryPriceStore())
    async with AsyncTestClient(create_app(services=services)) as client:
        yield client


@pytest.mark.parametrize(("method", "path"), [("POST", "/admin/refresh"), ("GET", "/admin/vendors")])
@pytest.mark.parametrize("headers", [{}, {"X-API-Key": "any-key-at-all"}], ids=["no-key", "a-key"])
async def test_admin_routes_say_admin_is_disabled(
    no_admin: Client, method: str, path: str, headers: dict[str, str]
) -> None:
    response = await no_admin.request(method, path, headers=headers)

    assert response.status_code == 403
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["title"] == "Admin is disabled"
    assert problem["type"].endswith("/admin-is-disabled")
    assert problem["detail"].startswith("admin is disabled: no admin API key is configured")
    assert "GPUQUOTE_ADMIN_API_KEYS" in problem["detail"]
    assert "send an admin API key" not in response.text


async def test_with_a_key_configured_a_missing_key_is_still_asked_for() -> None:
    services = build_services(Settings(admin_api_keys=("k-0123456789abcdef",)), store=MemoryPriceStore())
    async with AsyncTestClient(create_app(services=services)) as client:
        missing = await client.post("/admin/refresh")
    assert missing.status_code == 401
    assert missing.json()["detail"] == "send an admin API key in the X-API-Key header"
