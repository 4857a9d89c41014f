"""per_second_json: unit conversion, the discount price, and pagination that cannot run away."""

from __future__ import annotations

import json

import httpx
import pytest

from adapters import AdapterContext, FetchResult, VendorFetchError, build_adapter
from adapters._source import MAX_PAGES
from adapters.per_second_json import cny_per_hour
from tests.adapters.fake_vendor import FakeVendor
from tests.adapters.feeds import payload, vendor


def _page(regions: list[dict[str, object]], next_link: str | None = None) -> bytes:
    document = {"data": [{"gpu_name": "RTX 4090", "gpu_count": 8, "regions": regions}], "next": next_link}
    return json.dumps(document).encode()


async def _fetch(url: str, client: httpx.AsyncClient, context: AdapterContext) -> FetchResult:
    return await build_adapter(vendor("per_second_json", url=url), client=client, context=context).fetch()


@pytest.mark.parametrize(
    ("micro_yuan_per_second", "cny_per_card_hour"),
    [(550, 1.98), (500, 1.8), (1945, 7.002), (2472, 8.8992), (1, 0.0036)],
)
def test_micro_yuan_per_second_converts_to_cny_per_hour_exactly(
    micro_yuan_per_second: int, cny_per_card_hour: float
) -> None:
    assert cny_per_hour(micro_yuan_per_second) == cny_per_card_hour


@pytest.mark.parametrize(
    ("price", "discount_price", "cny_per_card_hour"),
    [
        (550, 500, 1.8),  # a lower discount is what the renter pays
        (550, 600, 1.98),  # a "discount" above the list price is not one
        (550, 0, 1.98),  # 0 means no discount, not free
        (550, None, 1.98),
        (None, 500, 1.8),  # only a discount price listed
    ],
)
async def test_the_payable_price_is_the_lower_of_price_and_a_real_discount(
    price: int | None,
    discount_price: int | None,
    cny_per_card_hour: float,
    fake_vendor: FakeVendor,
    client: httpx.AsyncClient,
    context: AdapterContext,
) -> None:
    region = {"region_name": "suzhou-1", "inventory": 4, "price": price, "discount_price": discount_price}
    url = fake_vendor.serve("/v1/gpu-prices", _page([region]))

    result = await _fetch(url, client, context)

    assert [offer.pricing.cny_per_card_hour for offer in result.offers] == [cny_per_card_hour]  # type: ignore[union-attr]


async def test_a_region_with_no_price_at_all_is_dropped(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    regions = [
        {"region_name": "suzhou-1", "inventory": 4, "price": None, "discount_price": None},
        {"region_name": "wuxi-2", "inventory": 4, "price": 550},
    ]
    url = fake_vendor.serve("/v1/gpu-prices", _page(regions))

    result = await _fetch(url, client, context)

    assert [offer.sku for offer in result.offers] == ["rtx-4090-8x-wuxi-2"]
    assert [(row.sku, row.reason) for row in result.rejected] == [("rtx-4090-8x-suzhou-1", "invalid_price")]


async def test_next_links_are_followed_relative_or_absolute(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    region = {"region_name": "r", "inventory": 1, "price": 550}
    url = fake_vendor.serve("/v1/prices", _page([{**region, "region_name": "a"}], "?page=2"))
    fake_vendor.serve("/v1/prices?page=2", _page([{**region, "region_name": "b"}], fake_vendor.url("/v1/p3")))
    fake_vendor.serve("/v1/p3", _page([{**region, "region_name": "c"}]))

    result = await _fetch(url, client, context)

    assert [offer.sku for offer in result.offers] == ["rtx-4090-8x-a", "rtx-4090-8x-b", "rtx-4090-8x-c"]
    assert [request.path for request in fake_vendor.requests] == ["/v1/prices", "/v1/prices?page=2", "/v1/p3"]


async def test_a_next_link_back_to_a_fetched_page_fails_instead_of_looping(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve("/v1/gpu-prices", payload("per_second_page1.json"))
    fake_vendor.serve("/v1/gpu-prices?page=2", _page([], "/v1/gpu-prices"))

    with pytest.raises(VendorFetchError) as caught:
        await _fetch(url, client, context)

    assert caught.value.message == "pagination loops: page 2's next link points at a page already fetched"
    assert len(fake_vendor.requests) == 2


async def test_an_endless_chain_of_pages_stops_at_the_page_bound(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    # Every page links to a new one, as a vendor with a broken cursor would.
    for number in range(1, MAX_PAGES + 2):
        fake_vendor.serve(f"/v1/gpu-prices?page={number}", _page([], f"/v1/gpu-prices?page={number + 1}"))

    with pytest.raises(VendorFetchError) as caught:
        await _fetch(fake_vendor.url("/v1/gpu-prices?page=1"), client, context)

    first_page = fake_vendor.url("/v1/gpu-prices?…")  # the query is redacted
    assert (
        caught.value.message
        == f"more than {MAX_PAGES} pages from {first_page}; stopped before page {MAX_PAGES + 1}"
    )
    assert len(fake_vendor.requests) == MAX_PAGES


async def test_a_malformed_later_page_names_that_page(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.serve("/v1/gpu-prices", payload("per_second_page1.json"))
    fake_vendor.serve("/v1/gpu-prices?page=2", b'{"data": [{"gpu_name": "L20", "gpu_count": "four"}]}')

    with pytest.raises(VendorFetchError) as caught:
        await _fetch(url, client, context)

    # A later page is named by its number: its URL came from the vendor.
    assert caught.value.message.startswith(f"malformed per_second_json page {url} (page 2): Expected `int`")


async def test_a_file_is_read_as_one_page(client: httpx.AsyncClient, context: AdapterContext) -> None:
    config = vendor("per_second_json", path="per_second_page1.json")

    result = await build_adapter(config, client=client, context=context).fetch()

    assert [offer.sku for offer in result.offers] == [
        "rtx-4090-8x-suzhou-1",
        "rtx-4090-8x-wuxi-2",
        "h20-96g-8x-suzhou-1",
    ]
