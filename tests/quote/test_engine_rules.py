"""Engine rules: limits, exclusions and their counts, staleness, conversion between GPU models, ranking."""

from __future__ import annotations

from datetime import timedelta

import pytest

from schemas.offer import CardHourPricing, NodeHourPricing, TermPricing
from schemas.quote import Range
from service.errors import InvalidRequest
from service.quote import build_quote
from tests.quote.factories import NOW, offer, options, request, snapshot

EIGHT_YUAN = offer("js-suzhou", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0))


def test_deadline_excludes_on_expected_and_warns_on_high() -> None:
    response = build_quote(
        snapshot([EIGHT_YUAN]), request(48, card_counts=[1, 4], deadline_hours=16), options=options()
    )
    (quote,) = response.quotes
    assert quote.cards == 4  # 16 h expected meets a 16 h deadline; 48 h does not
    assert response.excluded.deadline == 1
    assert any("deadline at risk" in warning and "17.14 h" in warning for warning in quote.warnings)


def test_budget_excludes_on_expected_and_warns_on_high() -> None:
    response = build_quote(
        snapshot([EIGHT_YUAN]), request(48, card_counts=[1, 4], budget_cny=520), options=options()
    )
    assert [quote.cards for quote in response.quotes] == [1, 4]
    four = response.quotes[1]
    assert any("budget at risk" in warning and "¥576.00" in warning for warning in four.warnings)
    tight = build_quote(
        snapshot([EIGHT_YUAN]), request(48, card_counts=[1, 4], budget_cny=500), options=options()
    )
    assert [quote.cards for quote in tight.quotes] == [1]
    assert tight.excluded.budget == 1


def test_capacity_and_memory_both_counted() -> None:
    # 16 cards exceed the 8-card machine; a 13B inference needs 2 cards of 24 GB, so 1 card fails memory.
    response = build_quote(
        snapshot([EIGHT_YUAN]),
        request(10, card_counts=[1, 2, 16], model_params_b=13, task="inference"),
        options=options(),
    )
    assert [quote.cards for quote in response.quotes] == [2]
    assert (response.excluded.capacity, response.excluded.memory) == (1, 1)


def test_available_cards_limit_what_an_offer_supplies() -> None:
    scarce = offer("js-x", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0), available_cards=3)
    response = build_quote(snapshot([scarce]), request(48, card_counts=[1, 4]), options=options())
    assert [quote.cards for quote in response.quotes] == [1]
    assert response.excluded.capacity == 1


def test_stale_offers_are_excluded_when_fresh_ones_qualify() -> None:
    old = offer(
        "js-old", "4090", pricing=CardHourPricing(cny_per_card_hour=2.0), fetched_at=NOW - timedelta(days=3)
    )
    response = build_quote(snapshot([old, EIGHT_YUAN]), request(48, card_counts=[1]), options=options())
    assert [quote.offer_id for quote in response.quotes] == ["js-suzhou:4090"]
    assert response.excluded.stale == 1


def test_stale_offers_are_used_with_a_warning_when_nothing_else_qualifies() -> None:
    old = offer(
        "js-old", "4090", pricing=CardHourPricing(cny_per_card_hour=2.0), fetched_at=NOW - timedelta(days=3)
    )
    response = build_quote(snapshot([old]), request(48, card_counts=[1]), options=options())
    (quote,) = response.quotes
    assert quote.stale
    assert any("price fetched 3 days ago" in warning for warning in quote.warnings)
    assert any("older than 24 h" in warning for warning in response.warnings)
    assert response.excluded.stale == 0


def test_unreachable_store_is_warned_about() -> None:
    response = build_quote(
        snapshot([EIGHT_YUAN]), request(48, card_counts=[1]), options=options(store_reachable=False)
    )
    assert any("price store is unreachable" in warning for warning in response.warnings)
    assert "price store is unreachable" in response.summary


def test_reference_gpu_converts_hours_by_the_catalog_speed_range() -> None:
    h800 = offer("sz-x", "h800", gpu="h800", pricing=CardHourPricing(cny_per_card_hour=40.0))
    response = build_quote(
        snapshot([h800, EIGHT_YUAN]),
        request(48, card_counts=[1], reference_gpu="RTX 4090", rank_by="time"),
        options=options(),
    )
    fastest, same_model = response.quotes
    # 48 h over the H800's 6.0 / 3.3 / 3.0 speed range, each bound billed on whole hours at ¥40.
    assert (fastest.gpu, fastest.hours, fastest.cost_cny) == (
        "h800",
        Range(8.0, 14.55, 16.0),
        Range(320.0, 600.0, 640.0),
    )
    assert any("converted from RTX 4090 to H800" in warning for warning in fastest.warnings)
    assert same_model.hours.expected == 48.0
    assert not any("converted" in warning for warning in same_model.warnings)
    assert not any("not comparable" in warning for warning in response.warnings)


def test_without_reference_several_models_are_not_comparable() -> None:
    h800 = offer("sz-x", "h800", gpu="h800", pricing=CardHourPricing(cny_per_card_hour=40.0))
    response = build_quote(snapshot([h800, EIGHT_YUAN]), request(48, card_counts=[1]), options=options())
    assert {quote.hours.expected for quote in response.quotes} == {48.0}
    assert any("not comparable" in warning and "H800, RTX 4090" in warning for warning in response.warnings)


def test_filters_narrow_offers_and_are_counted() -> None:
    h800 = offer("sz-x", "h800", gpu="h800", region="shenzhen", city="shenzhen")
    catalog = snapshot([h800, EIGHT_YUAN])
    response = build_quote(catalog, request(48, card_counts=[1, 4], regions=["Shenzhen"]), options=options())
    assert {quote.offer_id for quote in response.quotes} == {"sz-x:h800"}
    assert response.excluded.filters == 2
    by_gpu = build_quote(catalog, request(48, card_counts=[1], gpus=["RTX 4090"]), options=options())
    assert [quote.gpu for quote in by_gpu.quotes] == ["rtx4090"]
    by_memory = build_quote(catalog, request(48, card_counts=[1], min_gpu_memory_gb=48), options=options())
    assert [quote.gpu for quote in by_memory.quotes] == ["h800"]
    by_pricing = build_quote(catalog, request(48, card_counts=[1], pricing=["node_hour"]), options=options())
    assert by_pricing.quotes == []


@pytest.mark.parametrize(
    ("fields", "field", "mentions"),
    [
        ({"reference_gpu": "rtx9090"}, "workload.reference_gpu", "valid: a100-40g"),
        ({"gpus": ["rtx4090", "b200"]}, "gpus", "'b200'"),
        ({"regions": ["beijing"]}, "regions", "valid: jiangsu"),  # the regions the offers are in
        ({"vendors": ["nobody"]}, "vendors", "valid: js-suzhou"),
        ({"scaling": {"4": (3.0, 3.2), "8": (2.0, 5.0)}}, "scaling", "must not fall"),
    ],
)
def test_unknown_names_raise_invalid_request(fields: dict[str, object], field: str, mentions: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        build_quote(snapshot([EIGHT_YUAN]), request(48, **fields), options=options())
    assert raised.value.field == field
    assert mentions in raised.value.reason


def test_empty_result_is_quotes_empty_with_counts_and_a_reason() -> None:
    response = build_quote(
        snapshot([EIGHT_YUAN]), request(48, card_counts=[1, 4], deadline_hours=1), options=options()
    )
    assert response.quotes == []
    assert response.excluded.deadline == 2
    assert response.cheapest is None
    assert "2 for the deadline" in response.summary


def test_limit_keeps_the_highlighted_quotes_below_the_top_with_rank_zero() -> None:
    """The fastest quote outside the top ``limit`` is returned, marked rank 0: its place in the ranking
    is not counted (a large catalog bills only the candidates that can be returned)."""
    catalog = snapshot(
        [
            offer("js-a", f"4090-{price}", pricing=CardHourPricing(cny_per_card_hour=price))
            for price in (5.0, 6.0, 7.0)
        ]
    )
    response = build_quote(catalog, request(48, card_counts=[1, 8], limit=1), options=options())
    assert [(quote.rank, quote.id) for quote in response.quotes] == [
        (1, "js-a:4090-5.0@1"),
        (0, "js-a:4090-5.0@8"),
    ]
    assert (response.cheapest, response.fastest) == ("js-a:4090-5.0@1", "js-a:4090-5.0@8")


def test_equal_quotes_rank_by_offer_id_whatever_the_store_order() -> None:
    offers = [offer(vendor, "4090") for vendor in ("js-c", "js-a", "js-b")]
    forward = build_quote(snapshot(offers), request(48, card_counts=[1]), options=options())
    backward = build_quote(snapshot(offers[::-1]), request(48, card_counts=[1]), options=options())
    assert [quote.offer_id for quote in forward.quotes] == ["js-a:4090", "js-b:4090", "js-c:4090"]
    assert [quote.id for quote in backward.quotes] == [quote.id for quote in forward.quotes]


def test_term_package_reports_its_break_even() -> None:
    catalog = snapshot(
        [
            offer("js-n", "4090", pricing=CardHourPricing(cny_per_card_hour=6.0)),
            offer("js-n", "4090-week", pricing=TermPricing(period="week", cny_per_period=840.0)),
        ]
    )
    short = build_quote(catalog, request(100, card_counts=[1]), options=options())
    assert [quote.pricing for quote in short.quotes] == ["card_hour", "term"]
    term = short.quotes[1]
    assert (term.break_even_hours, term.term_period, term.billed_hours, term.cost_cny.expected) == (
        140.0,
        "week",
        168.0,
        840.0,
    )
    assert "past 140 h of use per week" in short.summary
    long = build_quote(catalog, request(160, card_counts=[1]), options=options())
    assert long.quotes[0].pricing == "term"  # ¥840 for the week beats 160 h × ¥6 = ¥960


def test_minimum_billed_hours_apply_and_are_warned_about() -> None:
    minimum = offer("js-m", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0, min_billed_hours=24))
    (quote,) = build_quote(snapshot([minimum]), request(2, card_counts=[1]), options=options()).quotes
    assert (quote.billed_hours, quote.cost_cny.expected) == (24.0, 192.0)
    assert any("at least 24 h" in warning for warning in quote.warnings)


def test_cross_node_factor_option_changes_multi_node_time() -> None:
    cluster = offer(
        "sz-c", "node", gpu="h800", pricing=NodeHourPricing(cny_per_node_hour=300.0, cards_per_node=8)
    )
    slow = build_quote(
        snapshot([cluster]), request(90, card_counts=[16]), options=options(cross_node_factor=0.5)
    )
    fast = build_quote(
        snapshot([cluster]), request(90, card_counts=[16]), options=options(cross_node_factor=1.0)
    )
    assert slow.quotes[0].speedup.expected == 5.0  # 16 × 0.625 × 0.5
    assert fast.quotes[0].speedup.expected == 10.0


def test_memory_check_needs_both_fields() -> None:
    response = build_quote(
        snapshot([EIGHT_YUAN]), request(48, card_counts=[1], task="lora"), options=options()
    )
    assert any("memory fit not checked" in warning for warning in response.warnings)


def test_an_empty_snapshot_answers_with_no_quotes() -> None:
    response = build_quote(snapshot([]), request(48, regions=["jiangsu"]), options=options())
    assert (response.quotes, response.summary) == ([], "No offers are loaded yet.")
    assert response.snapshot.version == 1
