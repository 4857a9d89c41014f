"""Every plan a vendor sells: counts past one machine, a package plus hourly top-up, bundle savings
against the real card-hour bill. Through ``build_quote`` on the bundled reference catalog, and HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import msgspec
import numpy as np
import pytest
from litestar.testing import AsyncTestClient

from schemas.offer import CardHourPricing, NodeHourPricing
from schemas.quote import Quote, QuoteRequest, QuoteResponse, Workload
from service.quote import QuoteOptions, Snapshot, build_quote
from service.quote.model import sold_counts
from service.services import AppServices, build_services
from service.settings import Settings
from service.store.memory import MemoryPriceStore
from tests.quote.factories import offer, options, request, snapshot
from tests.quote.seeded import catalog

Client = AsyncTestClient[Any]

# 800 h on one 4090 at js-suzhou-ref: ¥8/card-hour, a month (720 h) for ¥4,260.
SUZHOU_800 = {
    "workload": {"gpu_hours": 800, "reference_gpu": "rtx4090"},
    "vendors": ["js-suzhou-ref"],
    "gpus": ["rtx4090"],
    "card_counts": [1],
}


@pytest.fixture
async def services() -> AsyncIterator[AppServices]:
    built = build_services(Settings(), store=MemoryPriceStore())
    await built.load_if_empty()
    yield built
    await built.aclose()


async def _reference(services: AppServices, body: dict[str, Any]) -> QuoteResponse:
    current: Snapshot = await services.snapshots.current()
    assert current.oldest_fetched_at is not None
    # An hour after the reference prices were taken: fresh, whatever the day the test runs.
    now = current.oldest_fetched_at + timedelta(hours=1)
    return build_quote(
        current, msgspec.convert(body, QuoteRequest), options=QuoteOptions(now=now, price_max_age_s=86_400)
    )


def _recommended(response: QuoteResponse) -> Quote:
    return next(quote for quote in response.quotes if quote.id == response.recommended)


async def test_month_package_plus_hourly_top_up(services: AppServices) -> None:
    response = await _reference(services, SUZHOU_800)
    best = _recommended(response)
    # All hourly 800 × ¥8 = ¥6,400; two months ¥8,520; one month ¥4,260 + 80 h × ¥8 = ¥4,900.
    assert (best.pricing, best.cost_cny.expected, best.billed_hours) == ("mixed", 4900.0, 800.0)
    assert best.offer_id == "js-suzhou-ref:4090-month"
    assert [item.amount_cny for item in best.breakdown] == [4260.0, 640.0]
    assert sum(item.amount_cny for item in best.breakdown) == best.cost_cny.expected
    assert "js-suzhou-ref:4090-month" in best.breakdown[0].description
    assert "js-suzhou-ref:4090" in best.breakdown[1].description
    costs = {quote.pricing: quote.cost_cny.expected for quote in response.quotes}
    assert costs == {"mixed": 4900.0, "card_hour": 6400.0, "term": 8520.0}


async def test_month_package_plus_hourly_top_up_over_http(client: Client) -> None:
    body = (await client.post("/quote", json=SUZHOU_800)).json()
    best = next(quote for quote in body["quotes"] if quote["id"] == body["recommended"])
    assert body["recommended"] == "js-suzhou-ref:4090-month+mixed@1"
    assert (best["pricing"], best["cost_cny"]["expected"]) == ("mixed", 4900.0)
    assert [item["amount_cny"] for item in best["breakdown"]] == [4260.0, 640.0]
    assert "¥4,900.00" in body["summary"]


@pytest.mark.parametrize(
    ("gpu_hours", "cards", "list_cny", "discount_cny", "percent"),
    [
        # 44 / 3.0 = 14.67 h: by the minute 4 × ¥6 × 14.6667 = ¥352.00; the bundle bills 15 h × ¥22 = ¥330.
        (44, 4, 352.0, -22.0, "6.25% off"),
        # 48 / 5.0 = 9.6 h: 8 × ¥6 × 9.6 = ¥460.80; two bundles bill 10 h × ¥44 = ¥440, 4.51 % off.
        (48, 8, 460.8, -20.8, "4.51% off"),
    ],
)
async def test_bundle_discount_against_the_real_card_hour_bill(
    services: AppServices, gpu_hours: float, cards: int, list_cny: float, discount_cny: float, percent: str
) -> None:
    body = {
        "workload": {"gpu_hours": gpu_hours, "reference_gpu": "rtx4090"},
        "vendors": ["js-nanjing-ref"],
        "gpus": ["rtx4090"],
        "pricing": ["bundle"],
        "card_counts": [cards],
    }
    (bundle,) = (await _reference(services, body)).quotes
    assert [(item.kind, item.amount_cny) for item in bundle.breakdown] == [
        ("compute", list_cny),
        ("discount", discount_cny),
    ]
    assert percent in bundle.breakdown[1].description
    assert sum(item.amount_cny for item in bundle.breakdown) == pytest.approx(bundle.cost_cny.expected)


async def test_default_counts_reach_past_sixteen_cards_to_meet_a_deadline(services: AppServices) -> None:
    # 1,000 h on a 4090; an H800 measured 6× as fast (the articles' index): 166.67 h on one H800. The
    # old default counts stopped at 16 cards (about 20 h on the cluster); the cluster sells up to 16
    # nodes, and 10 nodes (80 cards) are the fewest that meet 5 h.
    body = {
        "workload": {"gpu_hours": 1000, "reference_gpu": "rtx4090", "speed_ratios": {"h800": 6.0}},
        "deadline_hours": 5,
    }
    response = await _reference(services, body)
    assert response.quotes
    assert all(quote.hours.expected <= 5 for quote in response.quotes)
    best = _recommended(response)
    # 4.73 h billed 5 h × 10 nodes × (¥300 + ¥24 network + ¥6 storage) = ¥16,500.
    assert (best.offer_id, best.cards, best.hours.expected) == ("sz-cluster-ref:h800-ib-node", 80, 4.73)
    assert best.cost_cny.expected == 16500.0
    fastest = next(quote for quote in response.quotes if quote.id == response.fastest)
    assert (fastest.cards, fastest.hours.expected) == (128, 3.18)


def test_counts_an_offer_never_sells_are_no_capacity_exclusion() -> None:
    # An 8-card card-hour machine beside a node cluster: 16 cards are evaluated for the cluster, but the
    # machine never sells 16, so nothing counts as a capacity shortfall.
    machine = offer("js-x", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0, max_cards=8))
    cluster = offer(
        "sz-y", "4090-node", pricing=NodeHourPricing(cny_per_node_hour=56.0, cards_per_node=8, max_nodes=2)
    )
    response = build_quote(snapshot([machine, cluster]), request(48, limit=100), options=options())
    assert response.excluded.capacity == 0
    # Every count within a machine; the cluster's whole nodes past it.
    assert {quote.cards for quote in response.quotes if quote.offer_id == "js-x:4090"} == set(range(1, 9))
    assert {quote.cards for quote in response.quotes if quote.offer_id == "sz-y:4090-node"} == {
        *range(1, 9),
        16,
    }


@pytest.mark.parametrize(
    ("lang", "line"),
    [("en", "1 × H800 at ¥40.00/card-hour × 15 h"), ("zh", "1 张 H800，¥40.00/卡时 × 15 小时")],
)
def test_line_items_name_the_gpu_as_people_write_it(lang: str, line: str) -> None:
    # 48 h on an RTX 4090 at the H800's measured 3.2×: 15 h, billed at ¥40/card-hour.
    h800 = offer("sz-x", "h800", gpu="h800", pricing=CardHourPricing(cny_per_card_hour=40.0))
    workload_request = QuoteRequest(
        workload=Workload(gpu_hours=48.0, reference_gpu="rtx4090", speed_ratios={"h800": 3.2}),
        card_counts=[1],
        lang=lang,  # type: ignore[arg-type]
    )
    (quote,) = build_quote(snapshot([h800]), workload_request, options=options()).quotes
    assert quote.breakdown[0].description == line


def test_each_row_sells_the_counts_its_terms_sell() -> None:
    """The offer tables set ``sells`` once per sales shape: every (count, row) must still say whether
    ``sold_counts`` of that row's terms holds the count, on a catalog of every pricing kind, clusters
    up to 1,024 nodes and combined plans."""
    tables = catalog(26, 700, clusters=30, packaged_vendors=6).tables
    assert tables.size > tables.offer_count  # combined plans among the rows
    sold = [sold_counts(terms) for terms in tables.terms]
    assert tables.plan_counts == tuple(sorted(set().union(*sold)))
    expected = np.array([[count in row for row in sold] for count in tables.plan_counts])
    assert np.array_equal(tables.sells, expected)
