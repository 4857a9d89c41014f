"""sheet_csv: GBK or UTF-8 sheets; a bad row is dropped with its line and reason, the sheet is kept."""

from __future__ import annotations

import httpx
import pytest

from adapters import AdapterContext, FetchResult, VendorFetchError, build_adapter
from schemas.offer import BundlePricing, CardHourPricing, TermPricing
from tests.adapters.fake_vendor import FakeVendor
from tests.adapters.feeds import payload, vendor

HEADER = "型号,卡数,单价,计费方式,库存,互联\n"
GOOD_ROW = "RTX 4090,1,1.98,按卡时,16,\n"


async def _fetch(
    body: bytes, fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> FetchResult:
    url = fake_vendor.serve("/sheets/price.csv", body)
    return await build_adapter(vendor("sheet_csv", url=url), client=client, context=context).fetch()


async def test_a_gbk_sheet_with_one_bad_row_keeps_every_other_row(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    result = await _fetch(payload("sheet_bad_row_gbk.csv"), fake_vendor, client, context)

    assert [(offer.sku, offer.gpu, offer.pricing, offer.available_cards) for offer in result.offers] == [
        ("rtx-4090-1x-hour", "rtx4090", CardHourPricing(cny_per_card_hour=1.98, max_cards=1), 16),
        ("rtx-4090-4x-bundle", "rtx4090", BundlePricing(cards=4, cny_per_bundle_hour=22.0), 2),
        ("h800-80g-8x-week", "h800", TermPricing(period="week", cny_per_period=9800.0, cards=8), 1),
        ("rtx-3090-1x-hour", "rtx3090", CardHourPricing(cny_per_card_hour=1.2, max_cards=1), 30),
    ]
    assert [(row.sku, row.reason, row.detail) for row in result.rejected] == [
        ("rtx-4090-1x-month", "invalid_price", "line 4: 单价 '面议' is not a positive amount")
    ]
    assert result.rejected_by_reason() == {"invalid_price": 1}


@pytest.mark.parametrize(
    ("row", "reason", "detail"),
    [
        ("RTX 4090,1,0,按卡时,,", "invalid_price", "line 3: 单价 '0' is not a positive amount"),
        ("RTX 4090,1,-1.5,按卡时,,", "invalid_price", "line 3: 单价 '-1.5' is not a positive amount"),
        ("RTX 4090,1,nan,按卡时,,", "invalid_price", "line 3: 单价 'nan' is not a positive amount"),
        ("RTX 4090,1,inf,按卡时,,", "invalid_price", "line 3: 单价 'inf' is not a positive amount"),
        ("RTX 4090,1,,按卡时,,", "invalid_price", "line 3: 单价 None is not a positive amount"),
        ("RTX 4090,0,2,按卡时,,", "invalid_count", "line 3: 卡数 '0' is not a whole number from 1 to 1024"),
        (
            "RTX 4090,2.5,2,按卡时,,",
            "invalid_count",
            "line 3: 卡数 '2.5' is not a whole number from 1 to 1024",
        ),
        ("RTX 4090,1,2,按年,,", "unknown_billing", None),
        ("RTX 4090,1,2,按卡时,-1,", "invalid_stock", "line 3: 库存 '-1' is not a whole number >= 0"),
        ("RTX 4090,1,2,按卡时,,以太网", "unknown_interconnect", None),
        ("RTX 5090,1,2,按卡时,,", "unknown_gpu", "no catalog model is called '5090'"),
        (",1,2,按卡时,,", "unknown_gpu", "line 3: 型号 is empty"),
        (
            "RTX 4090,1,1,052,包月,,",
            "unknown_billing",
            "line 3: 计费方式 '052' is not one of 按卡时/",
        ),
        (
            "RTX 4090,1,1.98,按卡时,3,",
            "duplicate_sku",
            "SKU 'rtx-4090-1x-hour' appears more than once in the feed",
        ),
    ],
    ids=[
        "zero-price",
        "negative-price",
        "nan-price",
        "infinite-price",
        "empty-price",
        "zero-cards",
        "fractional-cards",
        "unknown-billing",
        "negative-stock",
        "unknown-interconnect",
        "unknown-gpu",
        "empty-gpu",
        "unquoted-thousands",
        "duplicate",
    ],
)
async def test_a_bad_row_is_dropped_with_its_reason(
    row: str,
    reason: str,
    detail: str | None,
    fake_vendor: FakeVendor,
    client: httpx.AsyncClient,
    context: AdapterContext,
) -> None:
    sheet = HEADER + GOOD_ROW + row + "\n"

    result = await _fetch(sheet.encode(), fake_vendor, client, context)

    assert [offer.sku for offer in result.offers] == ["rtx-4090-1x-hour"]
    assert [rejected.reason for rejected in result.rejected] == [reason]
    if detail is not None:
        assert result.rejected[0].detail.startswith(detail)


async def test_billing_words_map_to_pricing_models(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    sheet = HEADER + "".join(
        f"RTX 4090,{cards},{price},{billing},,\n"
        for cards, price, billing in [
            (8, 2.1, "按小时"),
            (8, 15.2, "整机打包"),
            (1, 40, "包天"),
            (1, 260, "包周"),
            (8, 8312, "包月"),
        ]
    )

    result = await _fetch(sheet.encode(), fake_vendor, client, context)

    assert [(offer.sku, offer.pricing) for offer in result.offers] == [
        ("rtx-4090-8x-hour", CardHourPricing(cny_per_card_hour=2.1, max_cards=8)),
        ("rtx-4090-8x-bundle", BundlePricing(cards=8, cny_per_bundle_hour=15.2)),
        ("rtx-4090-1x-day", TermPricing(period="day", cny_per_period=40.0, cards=1)),
        ("rtx-4090-1x-week", TermPricing(period="week", cny_per_period=260.0, cards=1)),
        ("rtx-4090-8x-month", TermPricing(period="month", cny_per_period=8312.0, cards=8)),
    ]


async def test_a_sheet_without_a_price_column_fails_and_names_it(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    with pytest.raises(VendorFetchError) as caught:
        await _fetch("型号,卡数,计费方式\nRTX 4090,1,按卡时\n".encode("gbk"), fake_vendor, client, context)

    # The header line itself is not quoted: it is the vendor's text.
    assert caught.value.message == "price sheet has no 单价 column (its first line has 3 cells)"
    assert caught.value.category == "malformed"


async def test_a_sheet_with_only_its_header_has_no_offers(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    result = await _fetch(HEADER.encode(), fake_vendor, client, context)

    assert result.offers == []
    assert result.rejected == []


async def test_bytes_that_are_neither_utf8_nor_gbk_fail_the_sheet(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    body = HEADER.encode("gbk") + b"RTX 4090,1,\xff\xfe,\n"

    with pytest.raises(VendorFetchError) as caught:
        await _fetch(body, fake_vendor, client, context)

    assert caught.value.message.startswith(
        f"price sheet {fake_vendor.url('/sheets/price.csv')} is neither UTF-8 nor GBK text"
    )
