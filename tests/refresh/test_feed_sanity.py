"""Prices from a real feed server that no vendor means never reach a quote, and a vendor's real new price
level does, even when it jitters.

- A new offer has no stored price for the quarantine to compare with: ``1e308`` would overflow every sum
  a quote makes, ``1e-300`` would be every quote's cheapest option at ¥0.00. Such rows are dropped, and
  counted per row like the other drops (``implausible_price``).
- A price that jumps is held back until seen again; a vendor whose new level jitters (×0.1, then ×0.11,
  alternating) has moved to it, and it is released on the second sighting.
- ``FEED_MAX_BYTES`` caps a paginated feed as a whole, not each of its pages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from adapters import AdapterContext, VendorFetchError, build_adapter
from adapters.base import build_client
from schemas.vendor import VendorConfig
from service.app import create_app
from service.refresh import RefreshService
from service.services import build_services
from service.settings import Settings
from service.store.base import PriceStore
from service.store.memory import MemoryPriceStore
from tests.adapters.fake_vendor import FakeVendor
from tests.adapters.feeds import vendor
from tests.builders import card_hour_feed, static_feed, static_row
from tests.servers import write_vendors_file


def _refresher(store: PriceStore, fake_vendor: FakeVendor) -> RefreshService:
    vendor = VendorConfig(
        id="jit",
        name="jit",
        region="jiangsu",
        city="suzhou",
        format="static",
        url=fake_vendor.url("/jit.json"),
    )
    return RefreshService(store=store, vendors=[vendor], context=AdapterContext())


async def _price(store: PriceStore) -> float:
    (offer,) = (await store.read()).offers_by_vendor["jit"]
    return offer.pricing.cny_per_card_hour  # type: ignore[union-attr]


async def test_absurd_new_prices_are_dropped_per_row_and_quotes_stay_sound(
    fake_vendor: FakeVendor, tmp_path: Path
) -> None:
    rows: list[dict[str, Any]] = [
        static_row("4090", 8.0),
        static_row("huge", 1e308),
        static_row("tiny", 1e-300),
        {
            "sku": "node",
            "gpu": "H800",
            "pricing": {"kind": "node_hour", "price_cny": 320.0, "network_premium_cny": 1e300},
        },
        {
            "sku": "month",
            "gpu": "RTX 4090",
            "pricing": {"kind": "term", "period": "month", "price_cny": 1e-9},
        },
    ]
    fake_vendor.publish("/sane.json", static_feed(rows))
    settings = Settings(
        vendors_file=write_vendors_file(tmp_path, fake_vendor.base_url, ["sane"], timeout_s=2)
    )
    async with AsyncTestClient(create_app(services=build_services(settings))) as client:
        offers = (await client.get("/offers")).json()["items"]
        (status,) = (await client.get("/vendors")).json()["vendors"]
        quote = await client.post("/quote", json={"workload": {"gpu_hours": 48}, "card_counts": [1]})
    assert [offer["sku"] for offer in offers] == ["4090"]
    assert (status["rows_dropped"], status["drop_reasons"]) == (4, {"implausible_price": 4})
    assert quote.status_code == 200
    assert [q["cost_cny"]["expected"] for q in quote.json()["quotes"]] == [384.0]


async def test_a_jittering_new_level_is_released_on_its_second_sighting(
    store: PriceStore, fake_vendor: FakeVendor
) -> None:
    refresher = _refresher(store, fake_vendor)
    fake_vendor.publish("/jit.json", card_hour_feed({"4090": 40.0}))
    await refresher.refresh()
    served = []
    for factor in (0.1, 0.11, 0.1, 0.11, 0.1, 0.11, 0.1):
        fake_vendor.publish("/jit.json", card_hour_feed({"4090": round(40.0 * factor, 2)}))
        await refresher.refresh()
        served.append(await _price(store))
    # Held back once (¥4.00 is 90 % below ¥40.00), then the vendor's new level is served as it moves.
    assert served == [40.0, 4.4, 4.0, 4.4, 4.0, 4.4, 4.0]


async def test_a_price_that_keeps_jumping_is_never_released(fake_vendor: FakeVendor) -> None:
    store = MemoryPriceStore()
    refresher = _refresher(store, fake_vendor)
    fake_vendor.publish("/jit.json", card_hour_feed({"4090": 40.0}))
    await refresher.refresh()
    for factor in (0.1, 0.3, 0.1, 0.3):  # no level: each sighting 3 times or a third of the one before
        fake_vendor.publish("/jit.json", card_hour_feed({"4090": 40.0 * factor}))
        await refresher.refresh()
        assert await _price(store) == 40.0


async def test_the_feed_byte_cap_holds_for_all_pages_together(fake_vendor: FakeVendor) -> None:
    regions = [
        {"region_name": f"r{i}", "inventory": 1, "price": 550, "discount_price": None} for i in range(300)
    ]

    def page(number: int) -> bytes:
        gpus = [{"gpu_name": "RTX 4090", "gpu_count": 8, "regions": regions}]
        return json.dumps({"data": gpus, "next": f"/p?page={number + 1}"}).encode()

    first = page(1)
    for number in range(1, 10):
        fake_vendor.serve(f"/p?page={number}", page(number))
    cap = int(len(first) * 2.5)  # each page is well under the cap; three of them are not
    config = vendor("per_second_json", url=fake_vendor.url("/p?page=1"))
    async with build_client() as client:
        adapter = build_adapter(config, client=client, context=AdapterContext(max_feed_bytes=cap))
        with pytest.raises(VendorFetchError) as failed:
            await adapter.fetch()
    assert failed.value.category == "too_large"
    assert fake_vendor.hits("/p?page=3") == 1
    assert fake_vendor.hits("/p?page=4") == 0  # stopped at the third page, which passes the cap
