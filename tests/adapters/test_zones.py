"""Feeds that list stock per data-centre zone: each zone's offer is in the zone's city, with its own stock.

Served from the loopback vendor like every feed. The vendor is configured in Wuxi; its zones are in
Changzhou (常州C区), Shanghai (another province: the region follows the city) and somewhere the zone's
name does not say (``zone-x``), which keeps Wuxi and is marked ``city_assumed``.
"""

from __future__ import annotations

import json

import httpx
import pytest

from adapters import AdapterContext, build_adapter
from adapters.places import city_region, zone_city
from tests.adapters.fake_vendor import FakeVendor
from tests.adapters.feeds import vendor

_CARD_HOUR = {
    "code": 0,
    "data": {
        "gpu_skus": [
            {
                "sku_id": "l20",
                "gpu_type": "NVIDIA L20",
                "price": 3700,
                "max_gpu_num": 8,
                "regions": [
                    {"region_id": "cz-c", "region_name": "常州C区", "idle_gpu_num": 3, "total_gpu_num": 8},
                    {"region_id": "shanghai-1", "idle_gpu_num": 11, "total_gpu_num": 16},
                    {"region_id": "zone-x", "region_name": "X区", "idle_gpu_num": 5, "total_gpu_num": 8},
                    {"region_id": "wuxi-2", "region_name": "无锡二区", "idle_gpu_num": 6, "total_gpu_num": 8},
                ],
            }
        ]
    },
}

_PER_SECOND = {
    "data": [
        {
            "gpu_name": "RTX 4090",
            "gpu_count": 8,
            "regions": [
                {"region_name": "changzhou-3", "inventory": 9, "price": 600},
                {"region_name": "az-9", "inventory": 2, "price": 650},
            ],
        }
    ],
    "next": None,
}


async def test_card_hour_zones_each_keep_their_city_region_and_stock(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve("/skus", json.dumps(_CARD_HOUR, ensure_ascii=False).encode())
    config = vendor("card_hour_json", url=url, city="wuxi", region="jiangsu")

    result = await build_adapter(config, client=client, context=context).fetch()

    assert result.rejected == []
    placed = [
        (o.sku, o.city, o.region, o.zone, o.available_cards, o.city_assumed, o.pricing.cny_per_card_hour)  # type: ignore[union-attr]
        for o in result.offers
    ]
    assert placed == [
        ("l20-cz-c", "changzhou", "jiangsu", "常州C区", 3, False, 3.7),
        ("l20-shanghai-1", "shanghai", "shanghai", "shanghai-1", 11, False, 3.7),
        ("l20-zone-x", "wuxi", "jiangsu", "X区", 5, True, 3.7),
        ("l20-wuxi-2", "wuxi", "jiangsu", "无锡二区", 6, False, 3.7),
    ]


async def test_per_second_zones_take_the_city_their_name_says(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve("/prices", json.dumps(_PER_SECOND).encode())
    config = vendor("per_second_json", url=url, city="wuxi", region="jiangsu")

    result = await build_adapter(config, client=client, context=context).fetch()

    assert [(o.sku, o.city, o.available_cards, o.city_assumed) for o in result.offers] == [
        ("rtx-4090-8x-changzhou-3", "changzhou", 9, False),
        ("rtx-4090-8x-az-9", "wuxi", 2, True),
    ]


@pytest.mark.parametrize(
    ("names", "vendor_city", "city"),
    [
        (("南京B区", "nanjing-b"), "suzhou", "nanjing"),
        (("江苏南京一区", "js-1"), "suzhou", "nanjing"),  # a province name is not a city
        (("连云港1号机房",), "", "lianyungang"),
        (("", "cn-wuxi-2"), "suzhou", "wuxi"),
        (("苏州A区", "nanjing-a"), "", "suzhou"),  # the display name is read first
        (("苏州-无锡互联区", "sz-wx"), "", None),  # two cities: it names none
        (("yangzhou-east",), "yangzhou", "yangzhou"),
        (("hz2",), "hangzhou", None),
        (("taizhou-1",), "", None),  # 泰州 or 台州: left to the vendor's city
        (("zone-a",), "suzhou", None),
    ],
)
def test_a_zone_is_placed_by_a_city_its_names_say(
    names: tuple[str, ...], vendor_city: str, city: str | None
) -> None:
    assert zone_city(names, vendor_city=vendor_city) == city


@pytest.mark.parametrize(
    ("city", "vendor_region", "region"),
    [
        ("nanjing", "jiangsu", "jiangsu"),
        ("shanghai", "jiangsu", "shanghai"),
        ("shenzhen", "guangdong", "guangdong"),
        ("shenzhen", "jiangsu", "shenzhen"),
        ("guangzhou", "shenzhen", "guangdong"),
        ("somewhere", "jiangsu", "jiangsu"),
    ],
)
def test_the_region_follows_the_city_into_another_province(
    city: str, vendor_region: str, region: str
) -> None:
    assert city_region(city, vendor_region) == region


async def test_a_zone_name_is_shown_printable_and_bounded(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    document = json.loads(json.dumps(_CARD_HOUR))
    regions = document["data"]["gpu_skus"][0]["regions"]
    regions[0]["region_name"] = "常州\x00C区\n" + "x" * 500
    regions[1]["region_name"] = " \t "  # blank: the id is the name shown
    url = fake_vendor.serve("/skus", json.dumps(document, ensure_ascii=False).encode())

    result = await build_adapter(
        vendor("card_hour_json", url=url, city="wuxi"), client=client, context=context
    ).fetch()

    first, second = result.offers[:2]
    assert first.city == "changzhou"
    assert first.zone.startswith("常州 C区 xxx") and len(first.zone) == 64
    assert second.zone == "shanghai-1" and second.city == "shanghai"
