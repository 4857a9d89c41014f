"""A failing vendor's error: its category and time on the public ``GET /vendors``, the detail only on the
admin view, and no credential from the vendor's URL anywhere."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.memory import MemoryPriceStore
from tests.builders import static_feed, static_row
from tests.net import free_port

ADMIN_KEY = "vendor-errors-admin-key-0123"
SECRETS = ("s3cretpw", "tok-123456")

Client = AsyncTestClient[Any]


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    (tmp_path / "good.json").write_bytes(static_feed([static_row()]))
    (tmp_path / "broken.json").write_text("INTERNAL_SECRET=s3cretpw\n{", encoding="utf-8")
    closed = free_port()  # nothing listens there: a connection error
    (tmp_path / "vendors.toml").write_text(
        f"""
[[vendors]]
id = "good"
name = "Good"
region = "jiangsu"
city = "suzhou"
format = "static"
path = "good.json"

[[vendors]]
id = "broken"
name = "Broken"
region = "jiangsu"
city = "suzhou"
format = "static"
path = "broken.json"

[[vendors]]
id = "unreachable"
name = "Unreachable"
region = "jiangsu"
city = "nanjing"
format = "card_hour_json"
url = "http://admin:s3cretpw@127.0.0.1:{closed}/gpus?access_token=tok-123456"
timeout_s = 1
retries = 0
""",
        encoding="utf-8",
    )
    settings = Settings(vendors_file=tmp_path / "vendors.toml", admin_api_keys=(ADMIN_KEY,))
    app = create_app(services=build_services(settings, store=MemoryPriceStore()))
    async with AsyncTestClient(app) as test_client:
        yield test_client


async def test_public_view_shows_the_category_and_time_only(client: Client) -> None:
    response = await client.get("/vendors")
    assert response.status_code == 200
    vendors = {status["vendor"]: status for status in response.json()["vendors"]}
    assert vendors["good"].get("last_error_category") is None
    assert vendors["broken"]["last_error_category"] == "malformed"
    assert vendors["unreachable"]["last_error_category"] == "connect"
    for vendor in ("broken", "unreachable"):
        assert "last_error" not in vendors[vendor]
        assert vendors[vendor]["last_error_at"]
    for secret in (*SECRETS, "INTERNAL_SECRET", "admin:"):
        assert secret not in response.text


async def test_admin_view_has_the_detail_without_credentials(client: Client) -> None:
    assert (await client.get("/admin/vendors")).status_code == 401
    assert (await client.get("/admin/vendors", headers={"X-API-Key": "wrong"})).status_code == 403
    response = await client.get("/admin/vendors", headers={"X-API-Key": ADMIN_KEY})
    assert response.status_code == 200
    vendors = {status["vendor"]: status for status in response.json()["vendors"]}
    assert vendors["unreachable"]["last_error"]
    assert "127.0.0.1" in vendors["unreachable"]["last_error"]
    assert vendors["broken"]["last_error"]
    for secret in (*SECRETS, "INTERNAL_SECRET"):
        assert secret not in response.text
