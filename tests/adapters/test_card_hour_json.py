"""card_hour_json: bad rows are dropped with their reason while the rest of the feed is kept."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from adapters import AdapterContext, FetchResult, VendorFetchError, build_adapter
from tests.adapters.fake_vendor import FakeVendor
from tests.adapters.feeds import payload, vendor


def _recorded() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(payload("card_hour.json"))
    return document


async def _serve_and_fetch(
    document: dict[str, Any], fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> FetchResult:
    url = fake_vendor.serve("/api/v2/gpu/skus", json.dumps(document, ensure_ascii=False).encode())
    return await build_adapter(vendor("card_hour_json", url=url), client=client, context=context).fetch()


@pytest.mark.parametrize(
    ("field", "value", "reason", "detail"),
    [
        ("gpu_type", "RTX 5090", "unknown_gpu", "no catalog model is called '5090'"),
        ("gpu_type", "A100", "unknown_gpu", "ambiguous memory size: 80 GB or 40 GB"),
        ("price", None, "invalid_price", "price is null"),
        ("charge_unit", "fortnight", "unknown_billing", "charge_unit 'fortnight'"),
    ],
)
async def test_a_bad_sku_is_dropped_in_every_region_and_the_others_kept(
    field: str,
    value: object,
    reason: str,
    detail: str,
    fake_vendor: FakeVendor,
    client: httpx.AsyncClient,
    context: AdapterContext,
) -> None:
    document = _recorded()
    document["data"]["gpu_skus"][0][field] = value  # the 4090 SKU, listed in two regions

    result = await _serve_and_fetch(document, fake_vendor, client, context)

    assert [offer.sku for offer in result.offers] == ["a100-sxm-80g-suzhou-a", "h20-96g-wuxi-b"]
    assert [(row.sku, row.reason, row.detail) for row in result.rejected] == [
        ("4090-pcie-suzhou-a", reason, detail),
        ("4090-pcie-wuxi-b", reason, detail),
    ]
    assert result.rejected_by_reason() == {reason: 2}


@pytest.mark.parametrize(
    ("field", "value"),
    [("price", 0), ("price", -1980), ("max_gpu_num", 0)],
    ids=["zero-price", "negative-price", "zero-cards"],
)
async def test_amounts_out_of_bounds_are_rejected_as_invalid_price(
    field: str, value: float, fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    document = _recorded()
    document["data"]["gpu_skus"][2][field] = value  # the H20 SKU, one region

    result = await _serve_and_fetch(document, fake_vendor, client, context)

    assert len(result.offers) == 3
    assert [(row.sku, row.reason) for row in result.rejected] == [("h20-96g-wuxi-b", "invalid_price")]


async def test_more_idle_cards_than_cards_is_rejected_as_invalid_stock(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    document = _recorded()
    document["data"]["gpu_skus"][2]["regions"][0]["idle_gpu_num"] = 17

    result = await _serve_and_fetch(document, fake_vendor, client, context)

    assert [(row.sku, row.reason, row.detail) for row in result.rejected] == [
        ("h20-96g-wuxi-b", "invalid_stock", "idle_gpu_num 17 > total_gpu_num 16")
    ]


async def test_an_api_error_code_fails_the_feed_without_repeating_the_vendors_text(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    # This vendor answers HTTP 200 and puts the error in the body.
    url = fake_vendor.serve(
        "/api/v2/gpu/skus", '{"code": 10401, "msg": "token 已过期", "data": null}'.encode()
    )

    with pytest.raises(VendorFetchError) as caught:
        await build_adapter(vendor("card_hour_json", url=url), client=client, context=context).fetch()

    assert caught.value.message == f"API error 10401 from {url}"
    assert caught.value.category == "api_error"


async def test_the_same_sku_listed_twice_keeps_the_first(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    document = _recorded()
    document["data"]["gpu_skus"].append({**document["data"]["gpu_skus"][2], "price": 1})

    result = await _serve_and_fetch(document, fake_vendor, client, context)

    h20 = [offer for offer in result.offers if offer.sku == "h20-96g-wuxi-b"]
    assert [offer.pricing.cny_per_card_hour for offer in h20] == [7.0]  # type: ignore[union-attr]
    assert [(row.sku, row.reason) for row in result.rejected] == [("h20-96g-wuxi-b", "duplicate_sku")]
