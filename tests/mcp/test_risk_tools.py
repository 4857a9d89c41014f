"""Risk over MCP, as a chatbot host drives ``gpuquote mcp``: the same answers the HTTP route gives.

The deadline example on the bundled reference catalog names the 4-card plan "¥20.00 more"; the spot
H800 of ``tests/quote/vendors/spot.toml`` is labelled spot in the summary the model repeats, and
``list_offers`` filters on ``spot``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

pytestmark = pytest.mark.slow

GPUQUOTE = str(Path(sys.executable).with_name("gpuquote"))
SPOT_VENDORS = Path(__file__).resolve().parents[1] / "quote" / "vendors" / "spot.toml"


def server(vendors_file: Path | None = None) -> Client:
    env = {"GPUQUOTE_REDIS_URL": "", "GPUQUOTE_REFRESH_INTERVAL_S": "0"}
    if vendors_file is not None:
        env["GPUQUOTE_VENDORS_FILE"] = str(vendors_file)
    return Client(StdioServerParameters(command=GPUQUOTE, args=["mcp"], env=env), read_timeout_seconds=60)


def texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, texts(result)
    assert result.structured_content is not None
    content: dict[str, Any] = result.structured_content
    return content


async def test_the_deadline_example_names_the_safe_plan() -> None:
    body = {"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090"}, "deadline_hours": 20}
    async with server() as client:
        answer = structured(await client.call_tool("quote", body))
        strict = structured(await client.call_tool("quote", {**body, "deadline_confidence": "high"}))
    assert (answer["recommended"], answer["safe"]) == ("js-wuxi-ref:4090@3", "js-wuxi-ref:4090@4")
    assert "¥20.00 more removes the risk" in answer["summary"].split(". ")[0]
    assert strict["recommended"] == "js-wuxi-ref:4090@4" and "safe" not in strict


async def test_spot_is_said_and_filtered() -> None:
    body = {
        "workload": {
            "gpu_hours": 200,
            "reference_gpu": "h800",
            "model_params_b": 14,
            "task": "full_finetune",
        },
        "gpus": ["h800"],
    }
    async with server(SPOT_VENDORS) as client:
        answer = await client.call_tool("quote", body)
        refused = structured(await client.call_tool("quote", {**body, "allow_spot": False}))
        listed = structured(await client.call_tool("list_offers", {"spot": True}))
    response = structured(answer)
    summary = texts(answer)[0]
    assert summary == response["summary"]
    assert summary.startswith(
        "Recommended: 4 × H800 from Shenzhen spot cloud (Shenzhen), spot / interruptible"
    )
    assert "¥1,280.00 more removes the risk" in summary
    assert refused["recommended"] == "sz-spot:h800@4"
    assert sorted(item["sku"] for item in listed["items"]) == ["a100-spot", "h800-spot"]
