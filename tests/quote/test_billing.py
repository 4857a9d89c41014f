"""The billing rule per pricing variant: units, billed cards, billed hours, cost."""

from __future__ import annotations

import pytest

from schemas.offer import BundlePricing, CardHourPricing, NodeHourPricing, TermPricing
from service.quote._billing import bill, billed_hours, billing_terms


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
    assert billed_hours(hours, granularity_hours, minimum) == pytest.approx(billed)


def test_card_hour_bills_the_cards_used() -> None:
    result = bill(billing_terms(CardHourPricing(cny_per_card_hour=8.0)), 4, 16.0)
    assert result is not None
    assert (result.billed_cards, result.billed_hours, result.hourly_rate_cny, result.cost_cny) == (
        4,
        16.0,
        32.0,
        512.0,
    )


def test_card_hour_cannot_exceed_one_machine() -> None:
    assert bill(billing_terms(CardHourPricing(cny_per_card_hour=8.0, max_cards=8)), 16, 10.0) is None


def test_node_hour_bills_whole_nodes_and_the_minimum() -> None:
    pricing = NodeHourPricing(
        cny_per_node_hour=300.0,
        cards_per_node=8,
        min_nodes=2,
        network_premium_cny_per_node_hour=24.0,
        storage_cny_per_node_hour=6.0,
    )
    result = bill(billing_terms(pricing), 4, 16.0)
    assert result is not None
    assert (result.units, result.billed_cards) == (2, 16)
    assert result.hourly_rate_cny == 2 * (300.0 + 24.0 + 6.0)
    assert result.cost_cny == 2 * 330.0 * 16


def test_node_hour_respects_max_nodes() -> None:
    pricing = NodeHourPricing(cny_per_node_hour=300.0, cards_per_node=8, max_nodes=2)
    assert bill(billing_terms(pricing), 24, 1.0) is None
    assert bill(billing_terms(pricing), 16, 1.0) is not None


@pytest.mark.parametrize(("cards", "bundles"), [(4, 1), (8, 2), (2, None), (6, None), (12, None)])
def test_bundle_takes_whole_bundles_up_to_a_machine(cards: int, bundles: int | None) -> None:
    terms = billing_terms(BundlePricing(cards=4, cny_per_bundle_hour=22.0, max_bundles=2))
    result = bill(terms, cards, 16.0)
    assert (result.units if result else None) == bundles
    if result is not None:
        assert result.cost_cny == bundles * 22.0 * 16  # type: ignore[operator]


def test_term_per_card_bills_whole_periods() -> None:
    terms = billing_terms(TermPricing(period="week", cny_per_period=840.0, cards=1, max_units=8))
    result = bill(terms, 2, 200.0)
    assert result is not None
    assert (result.units, result.billed_hours) == (2, 336.0)
    assert result.cost_cny == pytest.approx(2 * 2 * 840.0)


def test_term_per_machine_rents_one_whole_machine() -> None:
    terms = billing_terms(TermPricing(period="month", cny_per_period=24_900.0, cards=8, max_units=1))
    result = bill(terms, 4, 100.0)
    assert result is not None
    assert (result.units, result.billed_cards) == (1, 8)
    assert result.cost_cny == pytest.approx(24_900.0)
    assert bill(terms, 16, 100.0) is None
