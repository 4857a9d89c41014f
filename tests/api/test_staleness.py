"""One rule for "stale" on every surface: a price fetched (or, from a static feed, observed) longer ago than
``PRICE_MAX_AGE_S``. ``/vendors``, ``/offers``, ``POST /quote`` and the MCP tools say the same for the
same prices, whatever the vendor's last successful fetch says."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.memory import MemoryPriceStore
from service.tools.mcp import call_tool
from tests.api.listing import listing_settings

Client = AsyncTestClient[Any]


async def test_a_vendor_is_stale_when_its_prices_are_old_however_recent_its_fetch(tmp_path: Path) -> None:
    services = build_services(listing_settings(tmp_path), store=MemoryPriceStore())
    async with AsyncTestClient(create_app(services=services)) as client:
        http = {vendor["vendor"]: vendor for vendor in (await client.get("/vendors")).json()["vendors"]}
        tool = await call_tool(services, "vendor_status", {})

    assert tool.structured_content is not None
    mcp = {vendor["vendor"]: vendor for vendor in tool.structured_content["vendors"]}
    assert mcp == http
    old, fresh = http["js-yangzhou-old"], http["js-changzhou-t"]
    # Fetched a moment ago, observed on 2024-06-01: stale, and its age in days.
    assert old["last_success_at"] and old["stale"] is True
    assert (old["stale_offers"], old["oldest_price_at"]) == (1, "2024-05-31T16:00:00Z")
    age_days = (datetime.now(UTC) - datetime(2024, 5, 31, 16, tzinfo=UTC)).days
    assert old["oldest_price_age"] in {f"{age_days:,} days", f"{age_days + 1:,} days"}
    assert fresh.get("stale", False) is False and fresh.get("stale_offers", 0) == 0
    assert fresh["oldest_price_age"] == "under a minute"
    assert fresh["cities"] == ["changzhou"]


def _observed_two_hours_ago(folder: Path) -> Path:
    observed_at = (datetime.now(UTC) - timedelta(hours=2)).isoformat()
    offers = {
        "observed_at": observed_at,
        "offers": [{"sku": "l40s", "gpu": "L40S", "pricing": {"kind": "card_hour", "price_cny": 6.6}}],
    }
    (folder / "offers.json").write_text(json.dumps(offers), encoding="utf-8")
    vendors = folder / "vendors.toml"
    vendors.write_text(
        '[[vendors]]\nid = "js-nantong-t"\nname = "Nantong"\nregion = "jiangsu"\ncity = "nantong"\n'
        'format = "static"\npath = "offers.json"\n',
        encoding="utf-8",
    )
    return vendors


@pytest.fixture(params=[3600.0, 3 * 3600.0], ids=["max-age-1h", "max-age-3h"])
async def two_hour_old(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[tuple[Client, float]]:
    settings = Settings(vendors_file=_observed_two_hours_ago(tmp_path), price_max_age_s=request.param)
    async with AsyncTestClient(
        create_app(services=build_services(settings, store=MemoryPriceStore()))
    ) as client:
        yield client, request.param


async def test_the_max_age_setting_decides_stale_alike_on_vendors_offers_and_quotes(
    two_hour_old: tuple[Client, float],
) -> None:
    client, max_age_s = two_hour_old
    expected = max_age_s < 2 * 3600

    (vendor,) = (await client.get("/vendors")).json()["vendors"]
    (offer,) = (await client.get("/offers")).json()["items"]
    quoted = (await client.post("/quote", json={"workload": {"gpu_hours": 10}, "card_counts": [1]})).json()

    assert vendor.get("stale", False) is expected
    assert vendor["oldest_price_age"] == "2 h"
    assert offer["stale"] is expected
    assert [quote.get("stale", False) for quote in quoted["quotes"]] == [expected]


async def test_vendors_filter_by_the_same_name_over_http_and_mcp(tmp_path: Path) -> None:
    services = build_services(listing_settings(tmp_path), store=MemoryPriceStore())
    async with AsyncTestClient(create_app(services=services)) as client:
        one = (await client.get("/vendors", params={"vendor": "JS-Yangzhou-Old"})).json()
        unknown = await client.get("/vendors", params={"vendor": "js-nowhere"})
        misspelt = await client.get("/vendors", params={"vendors": "js-yangzhou-old"})
        by_name = await call_tool(services, "vendor_status", {"vendor": "js-yangzhou-old"})
        by_earlier_name = await call_tool(services, "vendor_status", {"vendors": ["js-yangzhou-old"]})
        unknown_tool = await call_tool(services, "vendor_status", {"vendor": ["js-nowhere"]})

    assert [vendor["vendor"] for vendor in one["vendors"]] == ["js-yangzhou-old"]
    assert by_name.structured_content == by_earlier_name.structured_content == one
    assert unknown.status_code == 422
    reason = "unknown vendor 'js-nowhere'; valid: js-changzhou-t, js-yangzhou-old"
    assert unknown.json()["errors"] == [{"field": "vendor", "reason": reason, "in": "query"}]
    assert [block.text for block in unknown_tool.content] == [f"vendor: {reason}"]  # type: ignore[union-attr]
    assert misspelt.status_code == 400
    assert misspelt.json()["errors"][0]["field"] == "vendors"
