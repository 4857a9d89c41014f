"""When nothing fits, the summary names the nearest option past each limit that decided it, and advice
that matches that limit (through ``build_quote`` on the reference catalog, and over HTTP)."""

from __future__ import annotations

from typing import Any

from litestar.testing import AsyncTestClient

from schemas.quote import Excluded
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


def test_a_budget_blocker_says_the_price_is_illustrative() -> None:
    # Wuxi's ¥108 day package is a reference price copied from a public article.
    summary = quote_reference(BUDGET_100).summary
    first = summary.split(". ")[0]
    assert "(budget ¥100) (at illustrative reference prices from a public article, not live quotes)" in first
    zh = quote_reference({**BUDGET_100, "lang": "zh"}).summary
    assert "（预算 ¥100）（示意参考价，取自公开文章，并非实时报价）。" in zh


# The 48 h job within ¥100 and 0.5 h. Lifting both limits: the cheapest is Wuxi's day package, 2 days ×
# ¥108 = ¥216.00 (48 h, past 0.5 h); the fastest 128 × H800 in Shenzhen at 0.28 h (¥5,280.00, past
# ¥100). Lifting the budget alone: the cheapest within 0.5 h is 64 × H800 in Shenzhen, ¥2,640.00.
# Lifting the deadline alone: nothing costs ¥100 or less, so no "fastest within the budget".
BUDGET_AND_DEADLINE = {**BUDGET_100, "deadline_hours": 0.5}


def test_budget_and_deadline_name_both_ends_and_the_nearest_meeting_one() -> None:
    summary = quote_reference(BUDGET_AND_DEADLINE).summary
    assert "the cheapest way, 1 × RTX 4090 from Wuxi reference cloud, costs ¥216.00 (budget ¥100)" in summary
    assert "the fastest, 128 × H800 from Shenzhen reference cluster, finishes in 0.28 h (deadline 0.5 h)" in (
        summary
    )
    assert "no single option meets both the budget and the deadline" in summary
    assert (
        "the cheapest that meets the deadline, 64 × H800 from Shenzhen reference cluster, costs ¥2,640.00"
        in (summary)
    )
    assert "fastest within the budget" not in summary
    assert summary.endswith("Try to raise the budget to ¥2,640.00.")
    zh = quote_reference({**BUDGET_AND_DEADLINE, "lang": "zh"}).summary
    assert (
        "没有一个方案同时满足预算和期限；满足期限的最便宜方案是深圳参考集群的 64 张 H800，需 ¥2,640.00" in zh
    )


def test_card_counts_blocking_the_model_name_the_fewest_cards() -> None:
    # 14B bf16 inference: 14 × 2.4 = 33.6 GB; one 24 GB RTX 4090 holds 21.6 GB at 90 %, two 43.2 GB.
    body = {
        "workload": {"gpu_hours": 48, "model_params_b": 14, "task": "inference", "precision": "bf16"},
        "gpus": ["rtx4090"],
        "card_counts": [1],
    }
    response = quote_reference(body)
    assert response.memory is not None and response.memory.min_cards["rtx4090"] == 2
    assert "2 × RTX 4090 would hold this model (card counts allowed: 1)" in response.summary
    assert "(filtered to RTX 4090, card counts 1)" in response.summary
    assert "Try to allow 2 × RTX 4090, or widen the filters" in response.summary
    zh = quote_reference({**body, "lang": "zh"}).summary
    assert "2 张 RTX 4090 即可放得下该模型（当前允许的卡数：1）" in zh


def test_a_model_no_offer_sells_enough_cards_for() -> None:
    # A 700B full fine-tune: 700 × 16 = 11,200 GB; at 90 % of 80 GB (72 GB) that is ⌈155.6⌉ = 156 H800 or
    # A100 80G, at 21.6 GB ⌈518.5⌉ = 519 RTX 4090; the largest offer, Shenzhen's cluster, sells 128 H800.
    body = {
        "workload": {
            "gpu_hours": 48,
            "reference_gpu": "rtx4090",
            "model_params_b": 700,
            "task": "full_finetune",
        }
    }
    summary = quote_reference(body).summary
    assert (
        "the model needs 11,200 GB, at least 156 × A100 80G or 156 × H800 or 519 × RTX 4090, but no offer "
        "sells enough cards: the largest, from Shenzhen reference cluster, sells 128 × H800"
    ) in summary
    assert "Try to use a smaller model or a lower precision." in summary
    assert "more cards" not in summary
    zh = quote_reference({**body, "lang": "zh"}).summary
    assert "没有报价能提供这么多卡：最大的是深圳参考集群的 128 张 H800" in zh


def test_a_machine_too_small_inside_the_filters_is_the_blocker() -> None:
    # 80B bf16 inference: 80 × 2.4 = 192 GB, ⌈192 / 21.6⌉ = 9 RTX 4090; Wuxi sells 8 per machine.
    body = {
        "workload": {"gpu_hours": 48, "reference_gpu": "rtx4090", "model_params_b": 80, "task": "inference",
                     "precision": "bf16"},
        "vendors": ["js-wuxi-ref"],
        "gpus": ["rtx4090"],
    }  # fmt: skip
    summary = quote_reference(body).summary
    assert (
        "the model needs 192 GB, at least 9 × RTX 4090, but no offer within the filters sells enough cards: "
        "the largest, from Wuxi reference cloud, sells 8 × RTX 4090"
    ) in summary


async def test_over_http_the_budget_blocker_is_named(client: AsyncTestClient[Any]) -> None:
    response = await client.post("/quote", json=BUDGET_100)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["quotes"] == []
    assert "costs ¥216.00 (budget ¥100)" in body["summary"]


def test_stale_prices_are_not_counted_when_nothing_fits() -> None:
    # Every reference price is stale (observed 2025-01-01, quoted 2026-11-30), so stale offers are the
    # fallback: with nothing within ¥100, every candidate is left out for the budget alone.
    response = quote_reference(BUDGET_100)
    assert response.excluded.budget > 0
    assert response.excluded == Excluded(budget=response.excluded.budget)
    assert "stale" not in response.summary


async def test_over_http_both_limits_name_the_nearest_meeting_the_deadline(
    client: AsyncTestClient[Any],
) -> None:
    # As in test_budget_and_deadline_name_both_ends_and_the_nearest_meeting_one: 64 × H800, ¥2,640.00.
    response = await client.post("/quote", json=BUDGET_AND_DEADLINE)
    assert response.status_code == 200, response.text
    summary = response.json()["summary"]
    assert "no single option meets both the budget and the deadline" in summary
    assert "Try to raise the budget to ¥2,640.00." in summary
