"""A feed listing stock per data-centre zone: each zone's offer is in the zone's city on every surface.

The vendor is configured in Wuxi; its ``card_hour_json`` feed (served from the loopback vendor) lists an
L40S in four zones: 常州C区 (3 idle), 无锡二区 (14 idle), ``shanghai-1`` (7 idle, another province) and
``zone-x`` (2 idle, a name that places it nowhere: it keeps Wuxi, marked ``city_assumed``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import AppServices, build_services
from service.settings import Settings
from service.store.memory import MemoryPriceStore
from service.tools.mcp import call_tool
from tests.adapters.fake_vendor import FakeVendor

Client = AsyncTestClient[Any]

_FEED = {
    "code": 0,
    "data": {
        "gpu_skus": [
            {
                "sku_id": "l40s",
                "gpu_type": "NVIDIA L40S",
                "price": 4800,
                "max_gpu_num": 8,
                "regions": [
                    {"region_id": "cz-c", "region_name": "常州C区", "idle_gpu_num": 3, "total_gpu_num": 8},
                    {
                        "region_id": "wuxi-2",
                        "region_name": "无锡二区",
                        "idle_gpu_num": 14,
                        "total_gpu_num": 16,
                    },
                    {"region_id": "shanghai-1", "idle_gpu_num": 7, "total_gpu_num": 8},
                    {"region_id": "zone-x", "idle_gpu_num": 2, "total_gpu_num": 8},
                ],
            }
        ]
    },
}
V = "js-wuxi-zones:"


@pytest.fixture
async def surfaces(tmp_path: Path, fake_vendor: FakeVendor) -> AsyncIterator[tuple[Client, AppServices]]:
    url = fake_vendor.serve("/gpus", json.dumps(_FEED, ensure_ascii=False).encode())
    (tmp_path / "vendors.toml").write_text(
        f'[[vendors]]\nid = "js-wuxi-zones"\nname = "Wuxi zones"\nregion = "jiangsu"\ncity = "wuxi"\n'
        f'format = "card_hour_json"\nurl = "{url}"\ntimeout_s = 2\n',
        encoding="utf-8",
    )
    services = build_services(Settings(vendors_file=tmp_path / "vendors.toml"), store=MemoryPriceStore())
    async with AsyncTestClient(create_app(services=services)) as client:
        yield client, services


async def test_each_zone_is_an_offer_in_its_own_city_with_its_own_stock(
    surfaces: tuple[Client, AppServices],
) -> None:
    client, _ = surfaces
    items = (await client.get("/offers", params={"sort": "-stock"})).json()["items"]
    assert [
        (item["id"], item["city"], item["region"], item["available_cards"], item.get("city_assumed", False))
        for item in items
    ] == [
        (V + "l40s-wuxi-2", "wuxi", "jiangsu", 14, False),
        (V + "l40s-shanghai-1", "shanghai", "shanghai", 7, False),
        (V + "l40s-cz-c", "changzhou", "jiangsu", 3, False),
        (V + "l40s-zone-x", "wuxi", "jiangsu", 2, True),
    ]


@pytest.mark.parametrize(
    ("params", "arguments", "expected"),
    [
        ({"city": "changzhou"}, {"city": "changzhou"}, [V + "l40s-cz-c"]),
        ({"city": "常州"}, {"city": ["常州市"]}, [V + "l40s-cz-c"]),
        ({"region": "shanghai"}, {"region": "上海"}, [V + "l40s-shanghai-1"]),
        ({"city": "wuxi"}, {"cities": ["Wuxi"]}, [V + "l40s-wuxi-2", V + "l40s-zone-x"]),
    ],
)
async def test_a_city_any_offer_is_in_is_a_known_city_over_http_and_mcp(
    surfaces: tuple[Client, AppServices],
    params: dict[str, str],
    arguments: dict[str, Any],
    expected: list[str],
) -> None:
    client, services = surfaces
    page = (await client.get("/offers", params=params)).json()
    assert [item["id"] for item in page["items"]] == expected
    tool = await call_tool(services, "list_offers", arguments)
    assert not tool.is_error, tool.content
    assert tool.structured_content is not None
    assert [item["id"] for item in tool.structured_content["items"]] == expected


async def test_an_unknown_city_stays_a_422_listing_the_cities_offers_are_in(
    surfaces: tuple[Client, AppServices],
) -> None:
    client, services = surfaces
    response = await client.get("/offers", params={"city": "hangzhou"})
    assert response.status_code == 422
    reason = "unknown city 'hangzhou'; valid: changzhou, shanghai, wuxi"
    assert response.json()["errors"][0]["reason"] == reason
    tool = await call_tool(services, "list_offers", {"city": "hangzhou"})
    assert [block.text for block in tool.content] == [f"city: {reason}"]  # type: ignore[union-attr]


async def test_a_quote_for_one_city_uses_only_the_stock_in_that_city(
    surfaces: tuple[Client, AppServices],
) -> None:
    client, services = surfaces
    body = {"workload": {"gpu_hours": 20}, "cities": ["changzhou"], "card_counts": [1, 2]}
    over_http = (await client.post("/quote", json=body)).json()
    tool = await call_tool(services, "quote", body)
    assert tool.structured_content is not None

    for response in (over_http, tool.structured_content):
        assert {(quote["offer_id"], quote["city"]) for quote in response["quotes"]} == {
            (V + "l40s-cz-c", "changzhou")
        }
    quoted_wuxi = (await client.post("/quote", json={**body, "cities": ["wuxi"]})).json()
    assert {quote["offer_id"] for quote in quoted_wuxi["quotes"]} == {V + "l40s-wuxi-2", V + "l40s-zone-x"}


async def test_vendors_tell_where_their_offers_are_and_how_many_cities_are_assumed(
    surfaces: tuple[Client, AppServices],
) -> None:
    client, _ = surfaces
    (vendor,) = (await client.get("/vendors")).json()["vendors"]
    assert vendor["city"] == "wuxi"  # as configured
    assert vendor["cities"] == ["changzhou", "shanghai", "wuxi"]
    assert vendor["offers_city_assumed"] == 1
    assert vendor.get("stale", False) is False
