"""Spot capacity over HTTP: labelled spot / interruptible wherever it is recommended, its interruptions
priced, allowed for batch jobs and refused for serving unless asked, and filtered on ``/offers``.

The vendors file (``vendors/spot.toml``) sells H800 machines on demand at ¥12 and as spot capacity at
¥7.20 per card-hour, billed by the second, and A100 80G spot capacity whose feed states 36 interruptions
per machine-month.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import msgspec
import pytest
from litestar.testing import AsyncTestClient

from schemas.offer import CardHourPricing, TermPricing
from schemas.quote import QuoteRequest
from service.quote import build_quote
from tests.quote.factories import offer, options, snapshot

Client = AsyncTestClient[Any]

# The job: 200 GPU-hours of a 14B full fine-tune on H800s, which needs 4 cards of memory.
FINETUNE = {
    "workload": {"gpu_hours": 200, "reference_gpu": "h800", "model_params_b": 14, "task": "full_finetune"},
    "gpus": ["h800"],
}
MONTH_OF_SERVING = {"workload": {"kind": "serving", "hours": 720, "model_params_b": 14}, "gpus": ["h800"]}


@pytest.fixture
def vendors_file() -> Path:
    return Path(__file__).parent / "vendors" / "spot.toml"


async def _quote(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/quote", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def _by_id(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {quote["id"]: quote for quote in body["quotes"]}


async def test_the_spot_h800_is_labelled_and_its_interruptions_priced(client: Client) -> None:
    body = await _quote(client, FINETUNE)
    quotes = _by_id(body)
    spot = quotes[body["recommended"]]
    assert body["recommended"] == "sz-spot:h800-spot@4"
    assert spot["spot"] is True and spot["risks"] == ["spot"]
    assert (spot["hours"]["expected"], spot["cost_cny"]["expected"]) == (66.67, 1920.0)
    assert spot["breakdown"][0]["description"].startswith("spot / interruptible: 4 × H800")
    interruptions = spot["interruptions"]
    # 4 cards × 66.67 h ÷ 50,700 from hardware; one machine × 0.1 per 720 h from spot reclaims.
    assert interruptions["hardware"] == pytest.approx(4 * (200 / 3) / 50_700, rel=0.01)
    assert interruptions["spot"] == pytest.approx(0.1 / 720 * 200 / 3, rel=0.01)
    assert interruptions["cost_cny"] > 0
    # The on-demand machine is the plan without the risk, and the first sentence names it with its price.
    assert body["safe"] == "sz-spot:h800@4"
    assert quotes["sz-spot:h800@4"]["cost_cny"]["expected"] == 3200.0
    assert "spot" not in quotes["sz-spot:h800@4"]
    first = body["summary"].split(". ")[0]
    assert first.startswith("Recommended: 4 × H800 from Shenzhen spot cloud (Shenzhen), spot / interruptible")
    assert (
        "it runs on spot capacity the vendor can take back mid-job; ¥1,280.00 more removes the risk" in first
    )


async def test_in_chinese_the_spot_plan_is_said_to_be_preemptible(client: Client) -> None:
    body = await _quote(client, {**FINETUNE, "lang": "zh"})
    first = body["summary"].split("。")[0]
    assert first.startswith("推荐：深圳抢占式云（深圳）的 4 张 H800，抢占式（可中断），按卡时计费")
    assert "多花 ¥1,280.00 即可消除风险" in first


async def test_allow_spot_false_leaves_the_spot_offers_out(client: Client) -> None:
    body = await _quote(client, {**FINETUNE, "allow_spot": False})
    assert body["recommended"] == "sz-spot:h800@4"
    assert not any(quote.get("spot") for quote in body["quotes"])
    assert body["excluded"]["filters"] > 0
    assert "safe" not in body
    assert "interruptible" not in body["summary"]


async def test_serving_leaves_spot_out_unless_asked(client: Client) -> None:
    body = await _quote(client, MONTH_OF_SERVING)
    assert body["recommended"] == "sz-spot:h800@1"
    assert not any(quote.get("spot") for quote in body["quotes"])
    # Asked for: the share of time a replica is down, and that a second replica covers it.
    allowed = await _quote(client, {**MONTH_OF_SERVING, "allow_spot": True})
    spot = _by_id(allowed)[allowed["recommended"]]
    assert spot["spot"] is True
    share = spot["interruptions"]["replica_down_share"]
    # (1 card ÷ 50,700 + 0.1 ÷ 720) interruptions per hour × a 15-minute restart.
    rate = 1 / 50_700 + 0.1 / 720
    assert share == pytest.approx(rate * 0.25 / (1 + rate * 0.25), rel=0.01)
    assert spot["hours"] == {"low": 720.0, "expected": 720.0, "high": 720.0}
    assert any("a second replica covers it" in warning for warning in spot["warnings"])
    assert "a second replica covers it" in allowed["summary"].split(". ")[0]
    assert allowed["safe"] == "sz-spot:h800@1"


async def test_the_vendors_stated_rate_replaces_the_default(client: Client) -> None:
    body = await _quote(
        client, {"workload": {"gpu_hours": 800, "reference_gpu": "a100-80g"}, "gpus": ["a100-80g"]}
    )
    quote = _by_id(body)[body["recommended"]]
    hours = quote["hours"]["expected"]
    # 36 interruptions per machine-month of one machine, over the job's hours.
    assert quote["interruptions"]["spot"] == pytest.approx(36 / 720 * hours, rel=0.01)
    assert any("the vendor's stated rate" in warning for warning in quote["warnings"])
    # So many that they are material: said next to the figures, and the high end includes them.
    lost = quote["interruptions"]["hours_lost"]
    assert lost > 0.01 * hours
    assert quote["interruptions"]["high_includes"] > quote["interruptions"]["expected"]
    assert f"plus about {lost:g} h for" in body["summary"].split(". ")[0]
    # No on-demand A100: nothing removes the risk.
    assert "safe" not in body and "no plan here is free of that risk" in body["summary"]


async def test_offers_filter_on_spot(client: Client) -> None:
    spot = (await client.get("/offers", params={"spot": "true"})).json()
    on_demand = (await client.get("/offers", params={"spot": "false"})).json()
    assert sorted(item["sku"] for item in spot["items"]) == ["a100-spot", "h800-spot"]
    assert [item["sku"] for item in on_demand["items"]] == ["h800"]
    stated = next(item for item in spot["items"] if item["sku"] == "a100-spot")
    assert stated["spot_interruptions_per_month"] == 36


def test_spot_packages_and_card_hours_join_no_combined_plan() -> None:
    """A plan holds the job's hours at its packages' terms; spot capacity could be taken back first."""
    month = offer("v", "4090-month", pricing=TermPricing(period="month", cny_per_period=1000.0))
    spot_hourly = msgspec.structs.replace(
        offer("v", "4090-spot", pricing=CardHourPricing(cny_per_card_hour=1.0)), spot=True
    )
    hourly = offer("v", "4090", pricing=CardHourPricing(cny_per_card_hour=2.0))
    request = msgspec.convert({"workload": {"gpu_hours": 800}, "card_counts": [1]}, QuoteRequest)
    with_spot = build_quote(snapshot([month, spot_hourly]), request, options=options())
    assert not any(quote.pricing == "mixed" for quote in with_spot.quotes)
    on_demand = build_quote(snapshot([month, hourly]), request, options=options())
    mixed = [quote for quote in on_demand.quotes if quote.pricing == "mixed"]
    # 720 h of the month and 80 h by the hour: the plan an on-demand card-hour price makes.
    assert [quote.cost_cny.expected for quote in mixed] == [1000.0 + 80 * 2.0]
    assert not math.isnan(mixed[0].cost_cny.high)


async def test_when_only_spot_capacity_would_serve_the_summary_says_it_was_left_out(client: Client) -> None:
    body = await _quote(client, {"workload": {"kind": "serving", "hours": 24}, "gpus": ["a100-80g"]})
    assert body["quotes"] == [] and body["excluded"]["filters"] > 0
    assert "offers fit this job (filtered to A100 80G, no spot capacity)" in body["summary"]
    allowed = await _quote(client, {"workload": {"kind": "serving", "hours": 24}, "gpus": ["a100-80g"],
                                    "allow_spot": True})  # fmt: skip
    assert allowed["recommended"] == "sz-spot:a100-spot@1"
