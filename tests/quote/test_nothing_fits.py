"""When nothing fits, the summary names the nearest option past each limit that decided it, and advice
that matches that limit (through ``build_quote`` on the reference catalog, and over HTTP)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from schemas.quote import Excluded
from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.memory import MemoryPriceStore
from tests.examples import JIANGSU_EXAMPLE
from tests.summary.reference import quote_reference

# 48 h of RTX 4090 work, every offer and card count. The cheapest way is Wuxi's 4090 day package:
# 48 h is 2 whole days at ¥108 = ¥216.00 (Wuxi's card-hour price: 48 × ¥5 = ¥240; Nanjing's 4090 week
# package ¥840; the faster GPUs cost more per hour than they save).
BUDGET_100 = {"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090"}, "budget_cny": 100}
# A 70B full fine-tune needs 70 × 16 = 1,120 GB: more than an 8 × 80 GB machine holds at 90 % (576 GB),
# so only the node-hour clusters (all in Shenzhen) can run it, and the region filter keeps them out.
FULL_FINETUNE_70B_IN_JIANGSU = {
    "workload": {"gpu_hours": 48, "reference_gpu": "rtx4090", "model_params_b": 70, "task": "full_finetune"},
    "regions": ["jiangsu"],
}
# The Jiangsu example with a 10 h deadline: four cards at 3× take 48 / 3 = 16 h, one card 48 h.
DEADLINE_10 = {**JIANGSU_EXAMPLE, "deadline_hours": 10}


def test_a_budget_blocker_names_the_cheapest_way() -> None:
    response = quote_reference(BUDGET_100)
    assert response.quotes == [] and response.recommended is None
    assert "the cheapest way, 1 × RTX 4090 from Wuxi reference cloud, costs ¥216.00 (budget ¥100)" in (
        response.summary
    )
    assert "raise the budget to ¥216.00" in response.summary
    assert "fewer cards" not in response.summary  # one card is already allowed
    zh = quote_reference({**BUDGET_100, "lang": "zh"}).summary
    assert "最便宜的方案是无锡参考云的 1 张 RTX 4090，需 ¥216.00（预算 ¥100）" in zh


def test_a_deadline_blocker_names_the_fastest_finish() -> None:
    response = quote_reference(DEADLINE_10)
    assert response.quotes == []
    assert "the fastest, 4 × RTX 4090 from Suzhou reference cloud, finishes in 16 h (deadline 10 h)" in (
        response.summary
    )
    assert "extend the deadline to 16 h" in response.summary
    assert "budget" not in response.summary


def test_a_region_filter_blocker_says_where_the_model_fits() -> None:
    response = quote_reference(FULL_FINETUNE_70B_IN_JIANGSU)
    assert response.quotes == []
    assert "only Shenzhen clusters hold this model (filtered to Jiangsu)" in response.summary
    assert "more cards" not in response.summary  # the region, not the card count, is the blocker
    zh = quote_reference({**FULL_FINETUNE_70B_IN_JIANGSU, "lang": "zh"}).summary
    assert "只有深圳的集群放得下该模型（当前筛选：江苏）" in zh
    assert "增加卡数" not in zh


@pytest.fixture
async def client() -> AsyncIterator[AsyncTestClient[Any]]:
    app = create_app(services=build_services(Settings(), store=MemoryPriceStore()))
    async with AsyncTestClient(app) as test_client:
        yield test_client


async def test_over_http_the_budget_blocker_is_named(client: AsyncTestClient[Any]) -> None:
    response = await client.post("/quote", json=BUDGET_100)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["quotes"] == []
    assert "costs ¥216.00 (budget ¥100)" in body["summary"]


def test_stale_prices_are_not_counted_when_nothing_fits() -> None:
    # Every reference price is stale (observed 2025-01-01, quoted 2026-11-30), so stale offers are the
    # fallback: with nothing within ¥100, the 86 candidates are left out for the budget alone.
    response = quote_reference(BUDGET_100)
    assert response.excluded == Excluded(budget=86)
    assert "stale" not in response.summary
