"""Every feed format, served from the loopback vendor, yields exactly the offers its recorded payload means.

Amounts are checked in CNY as a user reads them (milli-yuan 1980 → ¥1.98 per card-hour, micro-yuan 550
per second → ¥1.98 per hour), region and city come from the vendor config or, for a feed listing stock
per data-centre zone, from the zone (无锡B区 is in Wuxi); GPU names are canonical.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import msgspec
import pytest

from adapters import ADAPTERS, AdapterContext, build_adapter
from schemas.offer import (
    BundlePricing,
    CardHourPricing,
    Interconnect,
    NodeHourPricing,
    Offer,
    Pricing,
    TermPricing,
)
from schemas.vendor import FeedFormat
from tests.adapters.fake_vendor import FakeVendor
from tests.adapters.feeds import FETCHED_AT, payload, vendor


def _offer(
    sku: str,
    gpu: str,
    gpu_memory_gb: int,
    pricing: Pricing,
    *,
    interconnect: Interconnect = "pcie",
    available_cards: int | None = None,
    region: str = "jiangsu",
    city: str = "suzhou",
    zone: str = "",
) -> Offer:
    return Offer(
        id=f"js-test:{sku}",
        vendor="js-test",
        sku=sku,
        region=region,
        city=city,
        gpu=gpu,
        gpu_memory_gb=gpu_memory_gb,
        interconnect=interconnect,
        pricing=pricing,
        fetched_at=FETCHED_AT,
        source="(the feed URL)",
        available_cards=available_cards,
        zone=zone,
    )


@dataclass(frozen=True)
class Case:
    feed_format: FeedFormat
    routes: dict[str, str]  # path served → recorded payload file; the first is the vendor's url
    offers: list[Offer]
    region: str = "jiangsu"
    city: str = "suzhou"


CASES = [
    Case(
        "static",
        {"/prices.json": "static.json"},
        [
            _offer(
                "4090",
                "rtx4090",
                24,
                CardHourPricing(cny_per_card_hour=8.0, max_cards=8, granularity_s=3600),
                available_cards=12,
            ),
            _offer("4090x4", "rtx4090", 24, BundlePricing(cards=4, cny_per_bundle_hour=22.0)),
            _offer(
                "h800-node",
                "h800",
                80,
                NodeHourPricing(
                    cny_per_node_hour=300.0,
                    cards_per_node=8,
                    min_nodes=2,
                    network_premium_cny_per_node_hour=20.0,
                ),
                interconnect="infiniband",
            ),
            _offer("4090-month", "rtx4090", 24, TermPricing(period="month", cny_per_period=1052.0, cards=1)),
        ],
    ),
    Case(
        "card_hour_json",
        {"/api/v2/gpu/skus": "card_hour.json"},
        [
            _offer(
                "4090-pcie-suzhou-a",
                "rtx4090",
                24,
                CardHourPricing(cny_per_card_hour=1.98, max_cards=8, granularity_s=1),
                available_cards=37,
                zone="苏州A区",
            ),
            _offer(
                "4090-pcie-wuxi-b",
                "rtx4090",
                24,
                CardHourPricing(cny_per_card_hour=1.98, max_cards=8, granularity_s=1),
                available_cards=0,
                city="wuxi",  # the zone's city (无锡B区), not the vendor's
                zone="无锡B区",
            ),
            _offer(
                "a100-sxm-80g-suzhou-a",
                "a100-80g",
                80,
                CardHourPricing(cny_per_card_hour=6.7, max_cards=8, granularity_s=60),
                interconnect="nvlink",
                available_cards=5,
                zone="苏州A区",
            ),
            _offer(
                "h20-96g-wuxi-b",
                "h20",
                96,
                CardHourPricing(cny_per_card_hour=7.0, max_cards=8, granularity_s=3600),
                interconnect="nvlink",
                available_cards=16,
                city="wuxi",
                zone="无锡B区",
            ),
        ],
    ),
    Case(
        "per_second_json",
        {"/v1/gpu-prices": "per_second_page1.json", "/v1/gpu-prices?page=2": "per_second_page2.json"},
        [
            # discount 500 < price 550: the discount is what a renter pays.
            _offer(
                "rtx-4090-8x-suzhou-1",
                "rtx4090",
                24,
                CardHourPricing(cny_per_card_hour=1.8, max_cards=8, granularity_s=1),
                available_cards=42,
                zone="suzhou-1",
            ),
            _offer(
                "rtx-4090-8x-wuxi-2",
                "rtx4090",
                24,
                CardHourPricing(cny_per_card_hour=1.98, max_cards=8, granularity_s=1),
                available_cards=0,
                city="wuxi",
                zone="wuxi-2",
            ),
            # a "discount" above the price is ignored: 1945 µ¥/s = ¥7.002/h.
            _offer(
                "h20-96g-8x-suzhou-1",
                "h20",
                96,
                CardHourPricing(cny_per_card_hour=7.002, max_cards=8, granularity_s=1),
                available_cards=16,
                zone="suzhou-1",
            ),
            # page 2; discount_price 0 means no discount.
            _offer(
                "a800-sxm4-80gb-8x-suzhou-1",
                "a800-80g",
                80,
                CardHourPricing(cny_per_card_hour=7.2, max_cards=8, granularity_s=1),
                available_cards=3,
                zone="suzhou-1",
            ),
            _offer(
                "l20-4x-wuxi-2",
                "l20",
                48,
                CardHourPricing(cny_per_card_hour=3.96, max_cards=4, granularity_s=1),
                available_cards=12,
                city="wuxi",
                zone="wuxi-2",
            ),
        ],
    ),
    Case(
        "node_hour_html",
        {"/pricing/cluster": "node_hour.html"},
        [
            _offer(
                "h800-80g-8x-infiniband",
                "h800",
                80,
                NodeHourPricing(
                    cny_per_node_hour=300.0,
                    cards_per_node=8,
                    min_nodes=2,
                    max_nodes=16,
                    network_premium_cny_per_node_hour=24.0,
                    storage_cny_per_node_hour=6.0,
                ),
                interconnect="infiniband",
                region="shenzhen",
                city="shenzhen",
            ),
            _offer(
                "rtx-4090-8x-roce",
                "rtx4090",
                24,
                NodeHourPricing(
                    cny_per_node_hour=56.0,
                    cards_per_node=8,
                    min_nodes=2,
                    max_nodes=None,
                    network_premium_cny_per_node_hour=8.0,
                    storage_cny_per_node_hour=0.0,
                ),
                interconnect="roce",
                region="shenzhen",
                city="shenzhen",
            ),
            _offer(
                "a800-80g-8x-infiniband",
                "a800-80g",
                80,
                NodeHourPricing(
                    cny_per_node_hour=62.4,
                    cards_per_node=8,
                    min_nodes=1,
                    max_nodes=8,
                    network_premium_cny_per_node_hour=0.0,
                    storage_cny_per_node_hour=5.5,
                ),
                interconnect="infiniband",
                region="shenzhen",
                city="shenzhen",
            ),
        ],
        region="shenzhen",
        city="shenzhen",
    ),
    Case(
        "sheet_csv",
        {"/sheets/price.csv": "sheet.csv"},
        [
            _offer(
                "4090-h",
                "rtx4090",
                24,
                CardHourPricing(cny_per_card_hour=1.98, max_cards=8),
                available_cards=24,
            ),
            _offer(
                "rtx-4090-4x-bundle",
                "rtx4090",
                24,
                BundlePricing(cards=4, cny_per_bundle_hour=22.0),
                available_cards=3,
            ),
            _offer(
                "4090-24g-1x-month",
                "rtx4090",
                24,
                TermPricing(period="month", cny_per_period=1052.0, cards=1),
            ),
            _offer(
                "rtx-4090-8x-month",
                "rtx4090",
                24,
                TermPricing(period="month", cny_per_period=8312.0, cards=8),
            ),
            _offer(
                "a800-d",
                "a800-80g",
                80,
                TermPricing(period="day", cny_per_period=1200.0, cards=8),
                interconnect="nvlink",
                available_cards=2,
            ),
            _offer("l20-1x-week", "l20", 48, TermPricing(period="week", cny_per_period=28.5, cards=1)),
        ],
    ),
]


def test_every_feed_format_has_an_adapter_and_a_contract_case() -> None:
    assert {case.feed_format for case in CASES} == set(ADAPTERS)


@pytest.mark.parametrize("case", CASES, ids=[case.feed_format for case in CASES])
async def test_recorded_payload_normalizes_to_expected_offers(
    case: Case, fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    for path, name in case.routes.items():
        fake_vendor.serve(path, payload(name))
    feed_url = fake_vendor.url(next(iter(case.routes)))
    config = vendor(case.feed_format, url=feed_url, region=case.region, city=case.city)

    result = await build_adapter(config, client=client, context=context).fetch()

    assert result.rejected == []
    expected = [msgspec.structs.replace(offer, source=feed_url) for offer in case.offers]
    # Compared as plain data so a mismatch shows which field of which offer differs.
    assert msgspec.to_builtins(result.offers) == msgspec.to_builtins(expected)
    assert [request.path for request in fake_vendor.requests] == list(case.routes)


@pytest.mark.parametrize("case", [case for case in CASES if case.feed_format in ("static", "sheet_csv")])
async def test_file_feeds_read_a_path_relative_to_the_vendors_file(
    case: Case, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    (name,) = case.routes.values()
    config = vendor(case.feed_format, path=name)

    result = await build_adapter(config, client=client, context=context).fetch()

    assert [offer.id for offer in result.offers] == [offer.id for offer in case.offers]
    assert {offer.source for offer in result.offers} == {f"file:{name}"}
