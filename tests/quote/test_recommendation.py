"""``recommended`` is the top of the ranking the caller asked for (``rank_by``)."""

from __future__ import annotations

import pytest

from schemas.offer import CardHourPricing
from schemas.quote import RankBy
from service.quote import build_quote
from tests.quote.factories import offer, options, request, snapshot

CATALOG = snapshot(
    [
        offer("js-suzhou", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0)),
        offer("js-wuxi", "4090", pricing=CardHourPricing(cny_per_card_hour=6.0)),
    ]
)


@pytest.mark.parametrize(("rank_by", "highlight"), [("cost", "cheapest"), ("time", "fastest")])
def test_recommended_is_the_top_of_the_asked_ranking(rank_by: RankBy, highlight: str) -> None:
    response = build_quote(CATALOG, request(48, card_counts=[1, 2, 4, 8], rank_by=rank_by), options=options())
    assert response.recommended == getattr(response, highlight)
    assert response.quotes[0].id == response.recommended
    assert response.quotes[0].rank == 1


def test_time_ranking_recommends_the_fastest_not_the_cheapest() -> None:
    response = build_quote(CATALOG, request(48, card_counts=[1, 8], rank_by="time"), options=options())
    by_id = {quote.id: quote for quote in response.quotes}
    recommended = by_id[response.recommended or ""]
    assert recommended.cards == 8
    assert response.cheapest != response.recommended
    assert recommended.hours.expected < by_id[response.cheapest or ""].hours.expected


def test_value_ranking_weighs_the_hours_the_caller_waits() -> None:
    slow_cheap = request(48, card_counts=[1, 8], rank_by="value", time_value_cny_per_hour=0.0)
    costly_wait = request(48, card_counts=[1, 8], rank_by="value", time_value_cny_per_hour=1000.0)
    cheap = build_quote(CATALOG, slow_cheap, options=options())
    fast = build_quote(CATALOG, costly_wait, options=options())
    assert cheap.recommended == cheap.cheapest
    assert fast.recommended == fast.fastest
