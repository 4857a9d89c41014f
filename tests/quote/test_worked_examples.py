"""The cases that must come out exactly: the articles' worked examples."""

from __future__ import annotations

import pytest

from schemas.offer import BundlePricing, CardHourPricing, NodeHourPricing
from schemas.quote import Quote, QuoteResponse
from service.quote import build_quote
from tests.quote.factories import offer, options, request, snapshot

ARTICLE_4090 = offer("js-suzhou", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0, granularity_s=3600))


def _by_cards(response: QuoteResponse) -> dict[int, Quote]:
    return {quote.cards: quote for quote in response.quotes}


def test_jiangsu_article_one_card_versus_four() -> None:
    response = build_quote(snapshot([ARTICLE_4090]), request(48, card_counts=[1, 4]), options=options())
    one, four = _by_cards(response)[1], _by_cards(response)[4]

    assert (one.hours.expected, one.cost_cny.expected) == (48.0, 384.0)
    assert (four.speedup.low, four.speedup.expected, four.speedup.high) == (2.8, 3.0, 3.2)
    assert (four.hours.low, four.hours.expected, four.hours.high) == (15.0, 16.0, 17.14)
    assert four.cost_cny.expected == 512.0
    # Each bound billed on its own hours, rounded up to the hour: 15 h and 18 h.
    assert (four.cost_cny.low, four.cost_cny.high) == (480.0, 576.0)
    assert (four.hourly_rate_cny, four.billed_hours, four.effective_card_hour_cny) == (32.0, 16.0, 8.0)
    assert [item.amount_cny for item in four.breakdown] == [512.0]


def test_rank_by_cost_puts_one_card_first_and_time_puts_four_first() -> None:
    catalog = snapshot([ARTICLE_4090])
    by_cost = build_quote(catalog, request(48, card_counts=[1, 4], rank_by="cost"), options=options())
    by_time = build_quote(catalog, request(48, card_counts=[1, 4], rank_by="time"), options=options())

    assert [(quote.rank, quote.cards) for quote in by_cost.quotes] == [(1, 1), (2, 4)]
    assert [(quote.rank, quote.cards) for quote in by_time.quotes] == [(1, 4), (2, 1)]
    assert by_cost.cheapest == by_time.cheapest == "js-suzhou:4090@1"
    assert by_cost.fastest == by_time.fastest == "js-suzhou:4090@4"
    assert by_cost.recommended == "js-suzhou:4090@1"  # no time value given: the cheapest


def test_time_value_recommends_four_cards() -> None:
    # 1 card: ¥384 + 48 h × ¥20 = ¥1,344; 4 cards: ¥512 + 16 h × ¥20 = ¥832.
    response = build_quote(
        snapshot([ARTICLE_4090]),
        request(48, card_counts=[1, 4], rank_by="value", time_value_cny_per_hour=20),
        options=options(),
    )
    assert response.recommended == "js-suzhou:4090@4"
    assert [(quote.cards, quote.value_cny) for quote in response.quotes] == [(4, 832.0), (1, 1344.0)]


def test_bundle_beside_card_hour_shows_the_discount() -> None:
    catalog = snapshot(
        [
            offer("js-wuxi", "4090", pricing=CardHourPricing(cny_per_card_hour=6.0, granularity_s=60)),
            offer(
                "js-wuxi", "4090x4", pricing=BundlePricing(cards=4, cny_per_bundle_hour=22.0, max_bundles=2)
            ),
        ]
    )
    response = build_quote(catalog, request(48, card_counts=[4]), options=options())
    bundle, card_hour = response.quotes

    assert (bundle.pricing, bundle.hours.expected, bundle.cost_cny.expected) == ("bundle", 16.0, 352.0)
    assert (card_hour.pricing, card_hour.cost_cny.expected) == ("card_hour", 384.0)
    assert [(item.kind, item.amount_cny) for item in bundle.breakdown] == [
        ("compute", 384.0),
        ("discount", -32.0),
    ]
    assert "8.33% off" in bundle.breakdown[1].description  # 1 − 352 / 384, to 0.01 %
    assert sum(item.amount_cny for item in bundle.breakdown) == bundle.cost_cny.expected


def test_bundle_without_a_card_hour_price_has_one_line() -> None:
    catalog = snapshot([offer("js-x", "4090x4", pricing=BundlePricing(cards=4, cny_per_bundle_hour=22.0))])
    (quote,) = build_quote(catalog, request(48, card_counts=[4]), options=options()).quotes
    assert [(item.kind, item.amount_cny) for item in quote.breakdown] == [("compute", 352.0)]


H800_CLUSTER = offer(
    "sz-cluster",
    "h800-ib-node",
    gpu="h800",
    region="shenzhen",
    city="shenzhen",
    interconnect="infiniband",
    pricing=NodeHourPricing(
        cny_per_node_hour=300.0,
        cards_per_node=8,
        min_nodes=2,
        max_nodes=16,
        network_premium_cny_per_node_hour=24.0,
        storage_cny_per_node_hour=6.0,
    ),
)


def test_four_cards_on_a_two_node_minimum_cluster_bill_sixteen() -> None:
    response = build_quote(snapshot([H800_CLUSTER]), request(48, card_counts=[4]), options=options())
    (quote,) = response.quotes

    assert (quote.cards, quote.nodes, quote.billed_cards) == (4, 2, 16)
    assert quote.hours.expected == 16.0
    assert quote.cost_cny.expected == 2 * (300 + 24 + 6) * 16
    assert any("12 of the 16 billed cards sit idle" in warning for warning in quote.warnings)
    assert [(item.kind, item.amount_cny) for item in quote.breakdown] == [
        ("compute", 2 * 300 * 16),
        ("network", 2 * 24 * 16),
        ("storage", 2 * 6 * 16),
    ]


def test_70b_full_finetune_needs_a_cluster() -> None:
    machine = offer(
        "sz-machines",
        "h800x8",
        gpu="h800",
        interconnect="nvlink",
        pricing=CardHourPricing(cny_per_card_hour=42.0),
    )
    response = build_quote(
        snapshot([machine, H800_CLUSTER]),
        request(1000, model_params_b=70, task="full_finetune"),
        options=options(),
    )

    assert response.quotes
    assert {quote.pricing for quote in response.quotes} == {"node_hour"}
    # Whole nodes from the cluster's 2-node minimum up: the ten cheapest (the default limit), and the
    # fastest, all 16 nodes.
    assert sorted(quote.cards for quote in response.quotes) == [*range(16, 96, 8), 128]
    assert response.excluded.memory > 0
    assert any("no single machine holds the model" in warning for warning in response.warnings)
    assert any("tensor/pipeline parallel" in warning for warning in response.quotes[0].warnings)
    assert "no single machine holds the model" in response.summary


def test_every_node_count_the_cluster_sells_is_weighed_against_a_budget() -> None:
    every = build_quote(snapshot([H800_CLUSTER]), request(1000, limit=100), options=options())
    cost_by_nodes = {
        quote.cards // 8: quote.cost_cny.expected
        for quote in every.quotes
        if quote.cards % 8 == 0 and quote.cards >= 16
    }
    assert sorted(cost_by_nodes) == list(range(2, 17))  # 2 to 16 nodes, not 8 then 16 only
    # A budget whose most affordable node count lies between 8 and 16 nodes (billing rounds the hours, so
    # cost is not monotonic in nodes: the most nodes the budget pays for is worked out, not assumed).
    budget = cost_by_nodes[12]
    most_nodes = max(nodes for nodes, cost in cost_by_nodes.items() if cost <= budget)
    assert 8 < most_nodes < 16

    fastest_within = build_quote(
        snapshot([H800_CLUSTER]), request(1000, rank_by="time", budget_cny=budget), options=options()
    )

    recommended = next(q for q in fastest_within.quotes if q.id == fastest_within.recommended)
    assert recommended.cards == 8 * most_nodes
    assert recommended.cost_cny.expected <= budget


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_summary_names_recommendation_single_card_and_fastest(lang: str) -> None:
    response = build_quote(
        snapshot([ARTICLE_4090]), request(48, card_counts=[1, 4], lang=lang), options=options()
    )
    summary = response.summary
    assert "¥384.00" in summary
    assert "¥512.00" in summary
    assert ("Recommended" in summary) == (lang == "en")
    assert ("推荐" in summary) == (lang == "zh")
