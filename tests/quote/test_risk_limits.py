"""Deadlines and budgets judged on the range, not only the expected figure.

Over HTTP on the bundled reference catalog: the cheapest plan that meets a deadline on its expected hours
is named beside the cheapest whose high end meets it, with what that costs more; ``deadline_confidence``
and ``budget_confidence`` demand the safe one. In the engine: the safe plan follows ``rank_by``, and
the nearest option when nothing fits is told by the high end the limit judged.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from litestar.testing import AsyncTestClient

from schemas.offer import CardHourPricing
from schemas.quote import QuoteRequest
from service.quote import build_quote
from tests.quote.factories import offer, options, snapshot

Client = AsyncTestClient[Any]

# 48 GPU-hours measured on an RTX 4090, due in 20 h: 3 × 4090 take 19.95 h (19.01–20.99 h) for ¥300,
# 4 × 4090 15–17.14 h for ¥320 (Wuxi's ¥5 per card-hour).
FOUR_090_DEADLINE = {"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090"}, "deadline_hours": 20}
# 2,000 H800-hours due in 50 h on the Shenzhen cluster (¥330 per 8-card node-hour with its premiums).
CLUSTER_DEADLINE = {
    "workload": {"gpu_hours": 2000, "reference_gpu": "h800"},
    "gpus": ["h800"],
    "deadline_hours": 50,
}


async def _quote(client: Client, body: dict[str, Any]) -> dict[str, Any]:
    response = await client.post("/quote", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def _by_id(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {quote["id"]: quote for quote in body["quotes"]}


async def test_twenty_yuan_more_removes_the_deadline_risk(client: Client) -> None:
    body = await _quote(client, FOUR_090_DEADLINE)
    quotes = _by_id(body)
    risky, safe = quotes[body["recommended"]], quotes[body["safe"]]
    assert (body["recommended"], body["safe"]) == ("js-wuxi-ref:4090@3", "js-wuxi-ref:4090@4")
    assert risky["hours"] == {"low": 19.01, "expected": 19.95, "high": 20.99}
    assert risky["risks"] == ["deadline"] and "risks" not in safe
    assert (safe["hours"]["high"], safe["cost_cny"]["expected"]) == (17.14, 320.0)
    first = body["summary"].split(". ")[0]
    assert "but it may miss the 20 h deadline (up to 20.99 h if speed is at the low end)" in first
    assert "¥20.00 more removes the risk: 4 × RTX 4090 from Wuxi reference cloud" in first
    # Said once: the caveats do not repeat the deadline warning.
    assert "deadline at risk" not in body["summary"]

    chinese = await _quote(client, {**FOUR_090_DEADLINE, "lang": "zh"})
    assert (
        "可能超出 20 小时的期限（速度偏低时最多 20.99 小时）；多花 ¥20.00 即可消除风险" in chinese["summary"]
    )


async def test_the_cluster_plan_that_stays_under_the_deadline_is_named(client: Client) -> None:
    body = await _quote(client, CLUSTER_DEADLINE)
    quotes = _by_id(body)
    risky, safe = quotes[body["recommended"]], quotes[body["safe"]]
    assert (risky["cards"], risky["hours"]["expected"], risky["hours"]["high"]) == (96, 48.63, 54.03)
    assert risky["cost_cny"]["expected"] == 194_040.0
    assert (safe["cards"], safe["hours"]["high"], safe["cost_cny"]["expected"]) == (112, 47.41, 198_660.0)
    assert "¥4,620.00 more removes the risk: 112 × H800" in body["summary"].split(". ")[0]


async def test_deadline_confidence_high_demands_the_safe_plan(client: Client) -> None:
    body = await _quote(client, {**FOUR_090_DEADLINE, "deadline_confidence": "high"})
    recommended = _by_id(body)[body["recommended"]]
    assert body["recommended"] == "js-wuxi-ref:4090@4"
    assert recommended["hours"]["high"] <= 20 and "risks" not in recommended
    assert "safe" not in body and "may miss" not in body["summary"]
    # Every plan whose high end passes 20 h is left out, counted under the deadline.
    assert all(quote["hours"]["high"] <= 20 for quote in body["quotes"])
    assert body["excluded"]["deadline"] > (await _quote(client, FOUR_090_DEADLINE))["excluded"]["deadline"]


async def test_a_budget_at_risk_names_the_plan_whose_high_cost_fits(client: Client) -> None:
    # 3 × 4090 at ¥300 (up to ¥315) and 4 × 4090 at ¥320 (up to ¥360) within a ¥310 budget: only the 3-card
    # plan's expected cost fits; its high end does not, and no plan's high end does at these counts.
    body = await _quote(
        client,
        {"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090"}, "gpus": ["rtx4090"], "budget_cny": 310,
         "card_counts": [3]},
    )  # fmt: skip
    recommended = _by_id(body)[body["recommended"]]
    assert recommended["cost_cny"] == {"low": 300.0, "expected": 300.0, "high": 315.0}
    assert recommended["risks"] == ["budget"]
    assert "it may go over the ¥310.00 budget (up to ¥315.00 at the high end)" in body["summary"]
    # With the budget judged on the high end, a single card's ¥240 fits where the 3-card plan's ¥315 does not.
    strict = await _quote(
        client,
        {"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090"}, "gpus": ["rtx4090"], "budget_cny": 310,
         "budget_confidence": "high"},
    )  # fmt: skip
    assert all(quote["cost_cny"]["high"] <= 310 for quote in strict["quotes"])
    assert "may go over" not in strict["summary"]


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("deadline_confidence", "sure", "deadline_confidence"),
        ("budget_confidence", 1, "budget_confidence"),
        ("allow_spot", "yes", "allow_spot"),
    ],
)
async def test_bad_choices_are_a_422_naming_the_field(
    client: Client, field: str, value: object, named: str
) -> None:
    response = await client.post("/quote", json={**FOUR_090_DEADLINE, field: value})
    assert response.status_code == 422
    assert [error["field"] for error in response.json()["errors"]] == [named]


@pytest.mark.parametrize(
    ("workload", "named"),
    [
        ({"gpu_hours": 48, "checkpoint_interval_h": 0}, "workload.checkpoint_interval_h"),
        ({"gpu_hours": 48, "checkpoint_interval_h": 1000}, "workload.checkpoint_interval_h"),
        ({"gpu_hours": 48, "checkpoint_minutes": 0}, "workload.checkpoint_minutes"),
        ({"gpu_hours": 48, "restart_minutes": -1}, "workload.restart_minutes"),
        ({"gpu_hours": 48, "restart_minutes": 2000}, "workload.restart_minutes"),
        ({"kind": "serving", "hours": 720, "checkpoint_interval_h": 2}, "workload.checkpoint_interval_h"),
        ({"kind": "serving", "hours": 720, "checkpoint_minutes": 2}, "workload.checkpoint_minutes"),
    ],
)
async def test_checkpoint_and_restart_figures_out_of_range_are_a_422(
    client: Client, workload: dict[str, Any], named: str
) -> None:
    response = await client.post("/quote", json={"workload": workload})
    assert response.status_code == 422, response.text
    assert [error["field"] for error in response.json()["errors"]] == [named]


def test_the_safe_plan_follows_rank_by() -> None:
    """Ranked by time, the fastest plan may miss the deadline at its high end: the plan named instead is
    the fastest whose high end meets it (an H800 measured at 2.9× one 4090, exactly 16.55 h)."""
    catalog = snapshot(
        [
            offer("v", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0)),
            offer("v", "h800", gpu="h800", pricing=CardHourPricing(cny_per_card_hour=20.0, max_cards=1)),
        ]
    )
    body = {
        "workload": {"gpu_hours": 48, "reference_gpu": "rtx4090", "speed_ratios": {"h800": 2.9}},
        "card_counts": [1, 4],
        "deadline_hours": 17,
        "rank_by": "time",
    }
    response = build_quote(catalog, msgspec.convert(body, QuoteRequest), options=options())
    quotes = {quote.id: quote for quote in response.quotes}
    assert response.recommended == "v:4090@4" and quotes["v:4090@4"].risks == ["deadline"]
    assert response.safe == "v:h800@1"
    assert quotes["v:h800@1"].hours.high == 16.55
    # ¥512 for 4 × 4090 against 17 h × ¥20 = ¥340 (billed by the hour) for the H800: the safe one costs less.
    assert "a plan without the risk costs ¥172.00 less: 1 × H800" in response.summary


def test_nothing_meets_the_deadline_at_its_high_end_and_the_nearest_says_by_how_much() -> None:
    catalog = snapshot([offer("v", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0, max_cards=3))])
    body = {"workload": {"gpu_hours": 48}, "deadline_hours": 20, "deadline_confidence": "high"}
    response = build_quote(catalog, msgspec.convert(body, QuoteRequest), options=options())
    assert response.quotes == [] and response.excluded.deadline > 0
    assert "finishes in 20.99 h (deadline 20 h)" in response.summary
    assert "extend the deadline to 20.99 h" in response.summary
