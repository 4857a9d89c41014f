"""``gpuquote mcp`` driven over stdio by the official SDK's client, as a chatbot host would drive it.

The server runs in its own process on the embedded store over the bundled reference catalog, whose
Suzhou vendor sells the Jiangsu article's RTX 4090 at ¥8 per card-hour: 48 GPU-hours on cards [1, 4]
must come back as one card, 48 h, ¥384.00 and four cards (3× speed-up), 16 h, ¥512.00.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

from tests.examples import JIANGSU_EXAMPLE

pytestmark = pytest.mark.slow

GPUQUOTE = str(Path(sys.executable).with_name("gpuquote"))
TOOLS_JSON = Path(__file__).resolve().parents[2] / "openapi" / "tools.json"


def server() -> Client:
    # The SDK passes only a minimal environment on: set what matters explicitly.
    parameters = StdioServerParameters(
        command=GPUQUOTE, args=["mcp"], env={"GPUQUOTE_REDIS_URL": "", "GPUQUOTE_REFRESH_INTERVAL_S": "0"}
    )
    return Client(parameters, read_timeout_seconds=60)


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


def by_id(quotes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {quote["id"]: quote for quote in quotes}


async def test_it_lists_the_three_tools_with_the_committed_quote_schema() -> None:
    async with server() as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}

    assert set(listed) == {"quote", "list_offers", "vendor_status"}
    for tool in listed.values():
        assert tool.description and len(tool.description) > 40, tool.name
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None
        assert tool.annotations is not None and tool.annotations.read_only_hint
    committed = json.loads(TOOLS_JSON.read_text(encoding="utf-8"))
    quote_function = next(item["function"] for item in committed if item["function"]["name"] == "quote")
    assert listed["quote"].input_schema == quote_function["parameters"]
    assert listed["quote"].description == quote_function["description"]
    assert listed["quote"].input_schema["required"] == ["workload"]


async def test_quote_returns_the_jiangsu_example_in_both_languages() -> None:
    async with server() as client:
        english = await client.call_tool("quote", JIANGSU_EXAMPLE)
        chinese = await client.call_tool("quote", {**JIANGSU_EXAMPLE, "lang": "zh"})

    assert not english.is_error, texts(english)
    response = english.structured_content
    quotes = by_id(response["quotes"])
    one, four = quotes["js-suzhou-ref:4090@1"], quotes["js-suzhou-ref:4090@4"]
    assert (one["cards"], one["hours"]["expected"], one["cost_cny"]["expected"]) == (1, 48.0, 384.0)
    assert (four["cards"], four["hours"]["expected"], four["cost_cny"]["expected"]) == (4, 16.0, 512.0)
    assert four["speedup"]["expected"] == 3.0
    assert response["cheapest"] == "js-suzhou-ref:4090@1"
    assert response["fastest"] == "js-suzhou-ref:4090@4"
    # The paragraph comes first, for the model to repeat; the JSON follows it.
    summary, payload = texts(english)
    assert summary == response["summary"]
    assert "¥384.00" in summary and "¥512.00" in summary
    assert json.loads(payload) == response

    assert not chinese.is_error, texts(chinese)
    chinese_summary = chinese.structured_content["summary"]
    assert "¥384.00" in chinese_summary and "¥512.00" in chinese_summary
    assert "推荐" in chinese_summary
    assert by_id(chinese.structured_content["quotes"]).keys() == quotes.keys()


async def test_offers_vendors_and_mistakes_the_model_can_correct() -> None:
    async with server() as client:
        offers = await client.call_tool("list_offers", {"vendors": ["js-suzhou-ref"], "gpus": ["RTX 4090"]})
        vendors = await client.call_tool("vendor_status", {"vendors": ["js-suzhou-ref"]})
        negative = await client.call_tool("quote", {"workload": {"gpu_hours": -48}})
        unknown_gpu = await client.call_tool(
            "quote", {"workload": {"gpu_hours": 48, "reference_gpu": "rtx9999"}}
        )
        unknown_vendor = await client.call_tool("vendor_status", {"vendors": ["nowhere"]})

    assert not offers.is_error, texts(offers)
    hourly = by_id(offers.structured_content["items"])["js-suzhou-ref:4090"]
    assert hourly["gpu"] == "rtx4090"
    assert hourly["pricing"]["kind"] == "card_hour"
    assert hourly["pricing"]["cny_per_card_hour"] == 8.0
    assert (hourly["cny_per_card_hour"], hourly["stale"]) == (8.0, True)

    assert not vendors.is_error, texts(vendors)
    (suzhou,) = vendors.structured_content["vendors"]
    assert suzhou["vendor"] == "js-suzhou-ref"
    assert suzhou["offer_count"] == 4
    assert suzhou["last_success_at"]
    # The reference catalog's prices were observed long ago: stale here as in every quote.
    assert suzhou["stale"] is True
    assert suzhou["oldest_price_age"].endswith(" days")

    assert negative.is_error
    assert texts(negative) == ["workload.gpu_hours: must be a number ≥ 0.001"]
    assert unknown_gpu.is_error
    assert "rtx9999" in texts(unknown_gpu)[0] and "rtx4090" in texts(unknown_gpu)[0]
    assert unknown_vendor.is_error
    assert "js-suzhou-ref" in texts(unknown_vendor)[0]
