"""The MCP tools decode arguments as ``POST /quote`` decodes its body, and say the same sentences.

``gpuquote mcp`` runs in its own process (driven over stdio by the SDK's client, as in
``test_mcp_server``); the HTTP app runs in this one, both over the bundled reference catalog. A tool's
error text is ``<field>: <reason>``, which is exactly the problem's ``detail`` for the same mistake over
HTTP (one field error each).
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from tests.mcp.test_filter_names import listed
from tests.mcp.test_mcp_server import server, texts

pytestmark = pytest.mark.slow

Client = AsyncTestClient[Any]

# Each a mistake in a quote request, with the sentence both surfaces must give.
MISTAKES: list[tuple[dict[str, Any], str]] = [
    ({"workload": {"gpu_hours": "48"}}, "workload.gpu_hours: must be a number, got text"),
    ({"workload": {"gpu_hours": True}}, "workload.gpu_hours: must be a number, got true/false"),
    ({"workload": {"gpu_hours": 48}, "limit": 0}, "limit: must be a whole number ≥ 1"),
    ({"workload": {"gpu_hours": 48}, "card_counts": ["4"]}, "card_counts[0]: must be a whole number, got text"),
    ({"workload": {"gpu_hours": 48}, "rank_by": "speed"}, "rank_by: must be one of cost, time, value; got 'speed'"),
    ({"workload": {"gpu_hours": 48}, "cities": ["北京"]}, "cities: unknown city '北京'; valid: nanjing, shenzhen, suzhou, wuxi"),
    ({}, "workload: is required"),
]  # fmt: skip


async def test_quote_mistakes_read_the_same_over_mcp_and_http(http: Client) -> None:
    async with server() as mcp:
        results = [await mcp.call_tool("quote", body) for body, _ in MISTAKES]

    for (body, sentence), result in zip(MISTAKES, results, strict=True):
        response = await http.post("/quote", json=body)
        assert response.status_code == 422, body
        assert response.json()["detail"] == sentence
        assert result.is_error, body
        assert texts(result) == [sentence]


async def test_an_unknown_argument_lists_the_valid_ones(http: Client) -> None:
    async with server() as mcp:
        unknown = await mcp.call_tool("list_offers", {"cites": ["suzhou"]})
        unknown_quote_field = await mcp.call_tool("quote", {"workload": {"gpu_hours": 48}, "colour": "red"})

    assert unknown.is_error
    assert texts(unknown) == [
        "cites: unknown field; valid fields: gpu, region, city, vendor, pricing, spot, min_cny_per_card_hour, "
        "max_cny_per_card_hour, min_gpu_memory_gb, min_cards, min_available_cards, sort, limit, offset, "
        "gpus, regions, cities, vendors"
    ]
    http_unknown = (await http.post("/quote", json={"workload": {"gpu_hours": 48}, "colour": "red"})).json()
    assert texts(unknown_quote_field) == [http_unknown["detail"]]
    assert http_unknown["detail"].startswith(
        "colour: unknown field; valid fields: workload, gpus, regions, cities"
    )


async def test_list_offers_by_city_is_get_offers_by_city(http: Client) -> None:
    async with server() as mcp:
        by_city = await mcp.call_tool("list_offers", {"city": "Suzhou"})
        in_chinese = await mcp.call_tool("list_offers", {"city": ["苏州市"]})
        by_earlier_name = await mcp.call_tool("list_offers", {"cities": ["suzhou"]})
        quoted = await mcp.call_tool("quote", {"workload": {"gpu_hours": 48}, "cities": ["苏州"]})

    page = (await http.get("/offers", params={"city": "suzhou"})).json()
    assert not by_city.is_error, texts(by_city)
    assert listed(by_city.structured_content) == listed(in_chinese.structured_content) == listed(page)
    assert listed(by_earlier_name.structured_content) == listed(page)
    # The Suzhou reference vendor's four offers, and nothing from another city.
    assert page["total"] == 4
    assert {item["city"] for item in page["items"]} == {"suzhou"}
    assert not quoted.is_error, texts(quoted)
    assert {quote["city"] for quote in quoted.structured_content["quotes"]} == {"suzhou"}
