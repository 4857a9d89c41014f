"""Properties that hold for any catalog and request."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.offer import BundlePricing, CardHourPricing, NodeHourPricing, Offer, Pricing, TermPricing
from schemas.quote import QuoteRequest
from service.errors import InvalidRequest
from service.quote import build_quote
from service.quote.model import speedup_range
from tests.quote.factories import GPU_MEMORY_GB, offer, options, request, snapshot
from tests.quote.strategies import card_counts, catalogs, pricings, requests

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None)


def _raised(pricing: Pricing, factor: float) -> Pricing:
    match pricing:
        case CardHourPricing():
            return msgspec.structs.replace(pricing, cny_per_card_hour=pricing.cny_per_card_hour * factor)
        case NodeHourPricing():
            return msgspec.structs.replace(pricing, cny_per_node_hour=pricing.cny_per_node_hour * factor)
        case BundlePricing():
            return msgspec.structs.replace(pricing, cny_per_bundle_hour=pricing.cny_per_bundle_hour * factor)
        case TermPricing():
            return msgspec.structs.replace(pricing, cny_per_period=pricing.cny_per_period * factor)
    raise AssertionError(pricing)


@PROPERTY_SETTINGS
@given(
    pricing=pricings,
    factor=st.floats(min_value=1.0, max_value=3.0),
    gpu_hours=st.floats(min_value=0.1, max_value=3_000),
    counts=card_counts,
)
def test_cost_never_falls_when_a_price_rises(
    pricing: Pricing, factor: float, gpu_hours: float, counts: list[int]
) -> None:
    query = request(gpu_hours, card_counts=counts, limit=100)
    before = build_quote(snapshot([offer(pricing=pricing)]), query, options=options())
    after = build_quote(snapshot([offer(pricing=_raised(pricing, factor))]), query, options=options())
    costs_before = {quote.id: quote.cost_cny for quote in before.quotes}
    costs_after = {quote.id: quote.cost_cny for quote in after.quotes}
    assert costs_before.keys() == costs_after.keys()
    for quote_id, cost in costs_before.items():
        raised = costs_after[quote_id]
        assert (raised.low, raised.expected, raised.high) >= (cost.low, cost.expected, cost.high)
        assert raised.low >= cost.low and raised.expected >= cost.expected and raised.high >= cost.high


@PROPERTY_SETTINGS
@given(
    smaller=st.integers(1, 1024),
    larger=st.integers(1, 1024),
    cards_per_node=st.integers(1, 16),
    cross_node_factor=st.floats(min_value=0.5, max_value=1.0),
)
def test_expected_speedup_never_falls_as_cards_rise(
    smaller: int, larger: int, cards_per_node: int, cross_node_factor: float
) -> None:
    smaller, larger = sorted((smaller, larger))
    slow = speedup_range(smaller, cards_per_node=cards_per_node, cross_node_factor=cross_node_factor)
    fast = speedup_range(larger, cards_per_node=cards_per_node, cross_node_factor=cross_node_factor)
    assert fast.expected >= slow.expected - 1e-12


@PROPERTY_SETTINGS
@given(pricing=pricings, gpu_hours=st.floats(min_value=0.1, max_value=3_000), counts=card_counts)
def test_expected_hours_never_rise_as_cards_rise(
    pricing: Pricing, gpu_hours: float, counts: list[int]
) -> None:
    response = build_quote(
        snapshot([offer(pricing=pricing)]),
        request(gpu_hours, card_counts=counts, limit=100),
        options=options(),
    )
    by_cards = sorted(response.quotes, key=lambda quote: quote.cards)
    hours = [quote.hours.expected for quote in by_cards]
    assert hours == sorted(hours, reverse=True)


def _meets_request(quote_fields: dict[str, object], query: QuoteRequest, used_stale: bool) -> None:
    gpu, region, pricing = quote_fields["gpu"], quote_fields["region"], quote_fields["pricing"]
    assert query.gpus is None or gpu in query.gpus
    assert query.regions is None or region in query.regions
    assert query.pricing is None or pricing in query.pricing
    assert query.min_gpu_memory_gb is None or GPU_MEMORY_GB[str(gpu)] >= query.min_gpu_memory_gb
    assert query.card_counts is None or quote_fields["cards"] in query.card_counts
    assert used_stale or not quote_fields.get("stale", False)


@PROPERTY_SETTINGS
@given(catalog=catalogs(), query=requests())
def test_every_quote_meets_the_filters_and_limits(catalog: list[Offer], query: QuoteRequest) -> None:
    known_regions = {offer.region for offer in catalog}
    if catalog and query.regions and not set(query.regions) <= known_regions:
        # A region no offer (nor configured vendor) has is a named 422, not an empty answer.
        with pytest.raises(InvalidRequest) as raised:
            build_quote(snapshot(catalog), query, options=options())
        assert raised.value.field == "regions"
        return
    response = build_quote(snapshot(catalog), query, options=options())
    used_stale = any("older than" in warning for warning in response.warnings)
    ids = {quote.id for quote in response.quotes}
    for quote in response.quotes:
        _meets_request(msgspec.structs.asdict(quote), query, used_stale)
        assert query.deadline_hours is None or quote.hours.expected <= query.deadline_hours
        assert query.budget_cny is None or quote.cost_cny.expected <= query.budget_cny
        assert quote.hours.low <= quote.hours.expected <= quote.hours.high
        assert quote.cost_cny.low <= quote.cost_cny.expected <= quote.cost_cny.high
        assert round(sum(item.amount_cny for item in quote.breakdown), 2) == quote.cost_cny.expected
    for highlighted in (response.cheapest, response.fastest, response.recommended):
        assert highlighted is None or highlighted in ids
    top = response.quotes[: query.limit]
    assert [quote.rank for quote in top] == list(range(1, len(top) + 1))
    key = {"cost": "cost_cny", "time": "hours"}.get(query.rank_by)
    if key is not None:
        figures = [getattr(quote, key).expected for quote in top]
        assert figures == sorted(figures)
