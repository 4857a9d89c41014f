"""The billing rule per pricing variant: units, billed cards, billed hours, cost."""

from __future__ import annotations

import numpy as np
import pytest

from schemas.offer import BundlePricing, CardHourPricing, NodeHourPricing, Pricing, TermPricing
from schemas.quote import Quote, QuoteResponse
from service.quote import build_quote
from service.quote.model import billed_hours
from tests.quote.factories import offer, options, request, snapshot


def _quote(pricing: Pricing, gpu_hours: float, cards: int) -> QuoteResponse:
    catalog = snapshot([offer(pricing=pricing)])
    return build_quote(catalog, request(gpu_hours, card_counts=[cards]), options=options())


def _only(response: QuoteResponse) -> Quote:
    (quote,) = response.quotes
    return quote


@pytest.mark.parametrize(
    ("hours", "granularity_hours", "minimum", "billed"),
    [
        (16.0, 1.0, 0.0, 16.0),
        (48 / 3.0, 1.0, 0.0, 16.0),
        (16.000000000000004, 1.0, 0.0, 16.0),  # float noise never bills an extra hour
        (17.142857142857142, 1.0, 0.0, 18.0),
        (17.142857142857142, 1 / 60, 0.0, 17 + 9 / 60),  # per minute: 17 h 9 min
        (0.2, 1.0, 0.0, 1.0),
        (0.2, 1 / 3600, 1.0, 1.0),  # the minimum billed
        (30.0, 168.0, 0.0, 168.0),  # a week package
        (200.0, 168.0, 0.0, 336.0),
    ],
)
def test_billed_hours(hours: float, granularity_hours: float, minimum: float, billed: float) -> None:
    result = billed_hours(np.array([hours]), np.array([granularity_hours]), np.array([minimum]))
    assert result.tolist() == pytest.approx([billed])


def test_card_hour_bills_the_cards_used() -> None:
    # 48 gpu-hours on 4 cards at 3× are 16 h.
    quote = _only(_quote(CardHourPricing(cny_per_card_hour=8.0), 48, 4))
    assert (quote.billed_cards, quote.billed_hours, quote.hourly_rate_cny, quote.cost_cny.expected) == (
        4,
        16.0,
        32.0,
        512.0,
    )


def test_card_hour_cannot_exceed_one_machine() -> None:
    response = _quote(CardHourPricing(cny_per_card_hour=8.0, max_cards=8), 10, 16)
    assert response.quotes == []
    assert response.excluded.capacity == 1


def test_node_hour_bills_whole_nodes_and_the_minimum() -> None:
    pricing = NodeHourPricing(
        cny_per_node_hour=300.0,
        cards_per_node=8,
        min_nodes=2,
        network_premium_cny_per_node_hour=24.0,
        storage_cny_per_node_hour=6.0,
    )
    quote = _only(_quote(pricing, 48, 4))
    assert (quote.nodes, quote.billed_cards, quote.billed_hours) == (2, 16, 16.0)
    assert quote.hourly_rate_cny == 2 * (300.0 + 24.0 + 6.0)
    assert quote.cost_cny.expected == 2 * 330.0 * 16


def test_node_hour_respects_max_nodes() -> None:
    pricing = NodeHourPricing(cny_per_node_hour=300.0, cards_per_node=8, max_nodes=2)
    assert _quote(pricing, 1, 24).quotes == []
    assert _only(_quote(pricing, 1, 16)).nodes == 2


@pytest.mark.parametrize(("cards", "bundles"), [(4, 1), (8, 2), (2, None), (6, None), (12, None)])
def test_bundle_takes_whole_bundles_up_to_a_machine(cards: int, bundles: int | None) -> None:
    response = _quote(BundlePricing(cards=4, cny_per_bundle_hour=22.0, max_bundles=2), 48, cards)
    if bundles is None:
        assert response.quotes == []
        return
    quote = _only(response)
    assert (quote.billed_cards, quote.hourly_rate_cny) == (cards, bundles * 22.0)
    assert quote.cost_cny.expected == round(bundles * 22.0 * quote.billed_hours, 2)


def test_term_per_card_bills_whole_periods() -> None:
    # 350 gpu-hours on 2 cards at 1.75× run 200 h: two whole weeks of two per-card packages.
    pricing = TermPricing(period="week", cny_per_period=840.0, cards=1, max_units=8)
    quote = _only(_quote(pricing, 350, 2))
    assert (quote.billed_cards, quote.billed_hours) == (2, 336.0)
    assert quote.cost_cny.expected == 2 * 2 * 840.0


def test_term_per_machine_rents_one_whole_machine() -> None:
    pricing = TermPricing(period="month", cny_per_period=24_900.0, cards=8, max_units=1)
    quote = _only(_quote(pricing, 300, 4))  # 100 h on 4 cards: one month of the whole machine
    assert (quote.nodes, quote.billed_cards) == (1, 8)
    assert quote.cost_cny.expected == 24_900.0
    assert _quote(pricing, 300, 16).quotes == []
