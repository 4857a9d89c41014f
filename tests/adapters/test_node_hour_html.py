"""node_hour_html: the pricing table is found by its headers, wherever the page puts it."""

from __future__ import annotations

import httpx
import msgspec
import pytest

from adapters import AdapterContext, FetchResult, VendorFetchError, build_adapter
from schemas.offer import NodeHourPricing
from tests.adapters.fake_vendor import FakeVendor
from tests.adapters.feeds import payload, vendor

HEADER = (
    "<tr><th>GPU型号</th><th>每节点卡数</th><th>节点单价（元/节点·小时）</th><th>最少节点数</th>"
    "<th>高速网络</th><th>网络附加费（元/节点·小时）</th></tr>"
)


async def _fetch(
    body: bytes, fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> FetchResult:
    url = fake_vendor.serve("/pricing/cluster", body)
    return await build_adapter(vendor("node_hour_html", url=url), client=client, context=context).fetch()


def _comparable(result: FetchResult) -> list[object]:
    return [msgspec.to_builtins(msgspec.structs.replace(offer, source="")) for offer in result.offers]


async def test_a_table_that_moved_and_reordered_its_columns_gives_the_same_offers(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    # The redesign nests the table in cards, puts a promo table with a GPU型号 column first, adds a
    # caption row above the header, uses <td> for the header, and shuffles the columns.
    before = await _fetch(payload("node_hour.html"), fake_vendor, client, context)
    after = await _fetch(payload("node_hour_moved.html"), fake_vendor, client, context)

    assert len(after.offers) == 3
    assert after.rejected == []
    assert _comparable(after) == _comparable(before)


async def test_a_page_without_the_pricing_table_fails_and_names_the_missing_columns(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    with pytest.raises(VendorFetchError) as caught:
        await _fetch(payload("node_hour_no_table.html"), fake_vendor, client, context)

    assert caught.value.message == (
        f"no pricing table on {fake_vendor.url('/pricing/cluster')} (1 tables on the page); the closest has no"
        " column for price per node-hour (节点单价), minimum nodes (最少节点数), network (网络),"
        " network premium (网络附加费)"
    )


async def test_english_headers_are_read_too(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    page = (
        "<table><tr><th>GPU</th><th>GPUs per node</th><th>Price per node-hour (CNY)</th><th>Min nodes</th>"
        "<th>Interconnect</th><th>Network premium (CNY/node-hour)</th></tr>"
        "<tr><td>H800</td><td>8</td><td>300</td><td>2</td><td>InfiniBand NDR</td><td>24</td></tr></table>"
    )

    result = await _fetch(page.encode(), fake_vendor, client, context)

    assert [(offer.sku, offer.pricing) for offer in result.offers] == [
        (
            "h800-8x-infiniband",
            NodeHourPricing(
                cny_per_node_hour=300.0, cards_per_node=8, min_nodes=2, network_premium_cny_per_node_hour=24.0
            ),
        )
    ]


@pytest.mark.parametrize(
    ("row", "reason", "detail"),
    [
        (
            "<td>H800</td><td>8</td><td>面议</td><td>2</td><td>IB</td><td>0</td>",
            "invalid_price",
            "price '面议' is not an amount",
        ),
        ("<td>H800</td><td>8</td><td>-300</td><td>2</td><td>IB</td><td>0</td>", "invalid_price", None),
        (
            "<td>H800</td><td>—</td><td>300</td><td>2</td><td>IB</td><td>0</td>",
            "invalid_count",
            "cards per node '—' is not a whole number",
        ),
        ("<td>H800</td><td>8</td><td>300</td><td>0</td><td>IB</td><td>0</td>", "invalid_price", None),
        (
            "<td>H800</td><td>8</td><td>300</td><td>2</td><td>以太网 25G</td><td>0</td>",
            "unknown_interconnect",
            "network '以太网 25G' is not InfiniBand, RoCE or NVLink",
        ),
        (
            "<td>B200</td><td>8</td><td>300</td><td>2</td><td>IB</td><td>0</td>",
            "unknown_gpu",
            "no catalog model is called 'b200'",
        ),
        ("<td>H800</td><td>8</td><td>300</td>", "malformed_row", "3 cells in a table whose header has 6"),
    ],
    ids=[
        "negotiable-price",
        "negative-price",
        "no-card-count",
        "zero-min-nodes",
        "ethernet",
        "unknown-gpu",
        "short-row",
    ],
)
async def test_a_bad_row_is_dropped_with_its_reason_and_the_good_row_kept(
    row: str,
    reason: str,
    detail: str | None,
    fake_vendor: FakeVendor,
    client: httpx.AsyncClient,
    context: AdapterContext,
) -> None:
    good = "<td>RTX 4090</td><td>8</td><td>56</td><td>2</td><td>RoCE</td><td>8</td>"
    page = f"<table>{HEADER}<tr>{row}</tr><tr>{good}</tr></table>"

    result = await _fetch(page.encode(), fake_vendor, client, context)

    assert [offer.sku for offer in result.offers] == ["rtx-4090-8x-roce"]
    assert [rejected.reason for rejected in result.rejected] == [reason]
    if detail is not None:
        assert result.rejected[0].detail == detail


async def test_a_gbk_page_is_decoded(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    # GBK has no "¥" or "©": GBK pages write the full-width "￥".
    utf8_page = payload("node_hour.html").decode()
    page = utf8_page.replace('charset="utf-8"', 'charset="gbk"').replace("¥", "￥").replace("©", "")

    result = await _fetch(page.encode("gbk"), fake_vendor, client, context)

    assert [(offer.sku, offer.pricing.cny_per_node_hour) for offer in result.offers] == [  # type: ignore[union-attr]
        ("h800-80g-8x-infiniband", 300.0),
        ("rtx-4090-8x-roce", 56.0),
        ("a800-80g-8x-infiniband", 62.4),
    ]
