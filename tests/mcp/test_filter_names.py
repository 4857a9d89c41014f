"""The MCP tools resolve names and page offers exactly as the HTTP routes do.

``gpuquote mcp`` runs in its own process (driven over stdio by the SDK's client, as in
``test_mcp_server``); the HTTP app runs in this one. Both load the bundled reference catalog into an
embedded store, so the same names must mean the same offers and be refused for the same reasons.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from tests.mcp.test_mcp_server import server, texts

pytestmark = pytest.mark.slow

Client = AsyncTestClient[Any]


def listed(page: dict[str, Any]) -> tuple[Any, ...]:
    """What a page says, less the fetch times (each process loaded the catalog at its own moment)."""
    items = [{k: v for k, v in item.items() if k != "fetched_at"} for item in page["items"]]
    return items, page["total"], page["limit"], page["offset"]


async def test_names_limits_and_reasons_match_the_http_routes(http: Client) -> None:
    async with server() as mcp:
        by_region = await mcp.call_tool("list_offers", {"region": "Jiangsu", "limit": 1000})
        by_vendor = await mcp.call_tool("list_offers", {"vendor": ["JS-SUZHOU-REF"]})
        quoted = await mcp.call_tool(
            "quote", {"workload": {"gpu_hours": 48}, "regions": ["Jiangsu"], "vendors": ["JS-SUZHOU-REF"]}
        )
        over_limit = await mcp.call_tool("list_offers", {"limit": 1001})
        ambiguous = [
            await mcp.call_tool("list_offers", {"gpu": "a100"}),
            await mcp.call_tool("quote", {"workload": {"gpu_hours": 1}, "gpus": ["a100"]}),
        ]
        unknown_region = [
            await mcp.call_tool("list_offers", {"region": ["Beijing"]}),
            await mcp.call_tool("quote", {"workload": {"gpu_hours": 1}, "regions": ["Beijing"]}),
        ]
        status = await mcp.call_tool("vendor_status", {"vendors": [" JS-Suzhou-Ref"]})

    region_page = (await http.get("/offers", params={"region": "Jiangsu", "limit": 1000})).json()
    vendor_page = (await http.get("/offers", params={"vendor": "JS-SUZHOU-REF"})).json()

    assert not by_region.is_error, texts(by_region)
    assert listed(by_region.structured_content) == listed(region_page)
    assert by_region.structured_content["limit"] == 1000
    assert by_region.structured_content["total"] == 15
    assert not by_vendor.is_error, texts(by_vendor)
    assert listed(by_vendor.structured_content) == listed(vendor_page)
    assert by_vendor.structured_content["limit"] == 100  # the same default page as GET /offers
    assert not quoted.is_error, texts(quoted)
    assert {quote["offer_id"] for quote in quoted.structured_content["quotes"]} <= {
        item["id"] for item in vendor_page["items"]
    }
    assert quoted.structured_content["quotes"]

    assert over_limit.is_error
    http_over = (await http.get("/offers", params={"limit": 1001})).json()
    assert http_over["errors"][0]["reason"] == "must be a whole number ≤ 1000"
    assert texts(over_limit) == ["limit: must be a whole number ≤ 1000"]

    http_ambiguous = (await http.get("/offers", params={"gpu": "a100"})).json()["errors"][0]["reason"]
    assert "a100-80g (80 GB) or a100-40g (40 GB)" in http_ambiguous
    # Each surface names its own field: the route's and the tool's parameter, the quote body's field.
    assert [texts(result) for result in ambiguous] == [
        [f"gpu: {http_ambiguous}"],
        [f"gpus: {http_ambiguous}"],
    ]

    http_unknown = (await http.get("/offers", params={"region": "Beijing"})).json()["errors"][0]["reason"]
    assert http_unknown == "unknown region 'Beijing'; valid: jiangsu, shenzhen"
    assert [texts(result) for result in unknown_region] == [
        [f"region: {http_unknown}"],
        [f"regions: {http_unknown}"],
    ]

    assert not status.is_error, texts(status)
    assert [vendor["vendor"] for vendor in status.structured_content["vendors"]] == ["js-suzhou-ref"]
