"""Serving workloads (``workload.kind``) and where the data lives (``workload.data_city``).

Serving: a model held for wall-clock hours on the cards its memory needs (task inference, at
``workload.precision``), times ``workload.replicas``; more cards never shorten the hours.

Data locality: offers outside ``workload.data_city`` add the copy time of ``workload.dataset_gb`` over the
cross-city line (``QuoteOptions.cross_city_mbps``, 500 Mbit/s by default) to every bound of their hours.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from schemas.offer import BundlePricing, CardHourPricing, NodeHourPricing, Offer, TermPricing
from schemas.quote import QuoteRequest, QuoteResponse, Workload
from service.errors import InvalidRequest
from service.quote import build_quote
from service.quote.model import MAX_MEMORY_USE, bytes_per_param_at
from tests.quote.factories import GPU_MEMORY_GB, offer, options, snapshot

Client = AsyncTestClient[Any]

RTX4090 = offer("js-suzhou", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0))
A100 = offer("js-suzhou", "a100", gpu="a100-80g", pricing=CardHourPricing(cny_per_card_hour=25.0))
RTX4090_MONTH = offer(
    "js-wuxi", "4090-month", city="wuxi", pricing=TermPricing(period="month", cny_per_period=1052.0)
)

# Llama 3.1 70B at int8 for inference: 70.6 × (2.4 × 1/2) = 70.6 × 1.2 = 84.72 GB (the memory rule).
NEED_GB = 70.6 * 1.2
# Cards per replica, at ≤ 90 % of each card: 84.72 / 21.6 = 3.92 → 4 RTX 4090; 84.72 / 72 = 1.18 → 2 A100.
RTX4090_CARDS, A100_CARDS = 4, 2


def serving(
    hours: float = 720.0, *, offers: Sequence[Offer] = (RTX4090, A100), **fields: Any
) -> QuoteResponse:
    workload = {
        "kind": "serving",
        "hours": hours,
        "model_params_b": 70.6,
        "task": "inference",
        "precision": "int8",
        "replicas": 2,
        **fields,
    }
    request = QuoteRequest(workload=Workload(**workload))
    return build_quote(snapshot(offers), request, options=options())


def test_the_hand_worked_memory_rule_matches_the_engines() -> None:
    assert bytes_per_param_at("inference", "int8") * 70.6 == pytest.approx(NEED_GB)
    for gpu, cards in (("rtx4090", RTX4090_CARDS), ("a100-80g", A100_CARDS)):
        assert math.ceil(NEED_GB / (GPU_MEMORY_GB[gpu] * MAX_MEMORY_USE)) == cards


def test_serving_takes_the_cards_the_model_needs_times_replicas_for_the_wall_clock_hours() -> None:
    response = serving()
    by_gpu = {quote.gpu: quote for quote in response.quotes}
    assert set(by_gpu) == {"rtx4090", "a100-80g"}
    assert by_gpu["rtx4090"].cards == RTX4090_CARDS * 2 == 8
    assert by_gpu["a100-80g"].cards == A100_CARDS * 2 == 4
    for quote in response.quotes:
        # Exactly the wall-clock hours asked for, never "about 144 h" on 8 cards.
        assert (quote.hours.low, quote.hours.expected, quote.hours.high) == (720.0, 720.0, 720.0)
        assert quote.speedup.expected == 1.0
    assert by_gpu["rtx4090"].cost_cny.expected == 46_080.0  # 8 × ¥8 × 720 h
    assert by_gpu["a100-80g"].cost_cny.expected == 72_000.0  # 4 × ¥25 × 720 h
    # Hours on different GPUs are wall-clock hours, comparable without a reference GPU.
    assert not any("not comparable" in warning for warning in response.warnings)


def test_a_month_of_serving_finds_the_monthly_package() -> None:
    response = serving(offers=(RTX4090, A100, RTX4090_MONTH))
    cheapest = next(quote for quote in response.quotes if quote.id == response.cheapest)
    assert (cheapest.offer_id, cheapest.cards) == ("js-wuxi:4090-month", 8)
    assert cheapest.cost_cny.expected == 8 * 1052.0  # one month for each of 8 cards
    assert cheapest.hours.expected == 720.0


def test_serving_without_a_model_runs_one_card_per_replica() -> None:
    response = serving(24.0, model_params_b=None, task=None, precision=None, replicas=3)
    assert {quote.cards for quote in response.quotes} == {3}
    assert all(quote.hours.expected == 24.0 for quote in response.quotes)


# Replicas placed whole per machine, over as many rentals of one offer as needed (3 replicas of 4 cards).
NODE = offer(
    "sz-test", "4090-node", city="shenzhen", region="guangdong",
    pricing=NodeHourPricing(cny_per_node_hour=40.0, cards_per_node=8),
)  # fmt: skip
CLUSTER = offer(
    "sz-test", "4090-cluster", city="shenzhen", region="guangdong", interconnect="roce",
    pricing=NodeHourPricing(cny_per_node_hour=30.0, cards_per_node=8, min_nodes=2),
)  # fmt: skip
BUNDLE = offer("js-suzhou", "4090x2", pricing=BundlePricing(cards=2, cny_per_bundle_hour=15.0, max_bundles=4))
SHORT = offer("js-nanjing", "4090", city="nanjing", available_cards=8)


def test_replicas_fill_machines_of_one_offer_and_skip_a_cluster() -> None:
    response = serving(offers=(NODE, CLUSTER, BUNDLE, SHORT), replicas=3)
    costs = {quote.offer_id: quote.cost_cny.expected for quote in response.quotes}
    # Nodes of 8 by the hour: 2 replicas on one node, the third on another (billed whole):
    # 2 × ¥40 × 720 h = ¥57,600. 2-card bundles, 4 to a machine: 4 + 2 bundles = 6 × ¥15 × 720 = ¥64,800.
    assert costs == {"sz-test:4090-node": 57_600.0, "js-suzhou:4090x2": 64_800.0}
    node = next(quote for quote in response.quotes if quote.offer_id == "sz-test:4090-node")
    assert node.cards == 12
    assert any("4 of the 16 billed cards sit idle" in warning for warning in node.warnings)
    # The cluster (two nodes at least) is never needed by a 4-card replica; the 8 cards in stock at
    # Nanjing cannot hold 12: one candidate left out for capacity.
    assert response.excluded.capacity == 1


@pytest.mark.parametrize(
    ("workload", "field"),
    [
        ({"kind": "serving"}, "workload.hours"),
        ({"kind": "serving", "hours": 10, "gpu_hours": 10}, "workload.gpu_hours"),
        ({}, "workload.gpu_hours"),
        ({"gpu_hours": 10, "hours": 10}, "workload.hours"),
        ({"gpu_hours": 10, "replicas": 2}, "workload.replicas"),
        ({"kind": "serving", "hours": 10, "task": "lora"}, "workload.task"),
        ({"kind": "serving", "hours": 10, "reference_gpu": "rtx4090"}, "workload.reference_gpu"),
    ],
)
def test_the_hours_field_must_match_the_kind(workload: dict[str, Any], field: str) -> None:
    request = QuoteRequest(workload=Workload(**workload))
    with pytest.raises(InvalidRequest) as raised:
        build_quote(snapshot([RTX4090]), request, options=options())
    assert raised.value.field == field


# Data locality. 500 GB over 500 Mbit/s: 500 × 8,000 Mbit / 500 Mbit/s = 8,000 s = 2.2222 h.
COPY_HOURS = 500 * 8000 / 500 / 3600
SUZHOU = offer("js-suzhou", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0))
NANJING = offer(
    "js-nanjing", "4090", city="nanjing", pricing=CardHourPricing(cny_per_card_hour=6.0, granularity_s=60)
)


def located(data_city: str, **workload: Any) -> dict[str, Any]:
    request = QuoteRequest(
        workload=Workload(gpu_hours=48.0, data_city=data_city, **workload), card_counts=[1, 4]
    )
    response = build_quote(snapshot([SUZHOU, NANJING]), request, options=options())
    return {f"{quote.city}@{quote.cards}": quote for quote in response.quotes}


@pytest.mark.parametrize("city", ["nanjing", "南京", "南京市", " Nanjing "])
def test_offers_in_another_city_wait_for_the_copy(city: str) -> None:
    quotes = located(city, dataset_gb=500)
    suzhou, nanjing = quotes["suzhou@1"], quotes["nanjing@1"]
    # Suzhou: 48 h + 2.22 h on every bound; billed by the hour, 51 h × ¥8 = ¥408.
    assert round(COPY_HOURS, 4) == 2.2222
    assert (suzhou.hours.low, suzhou.hours.expected, suzhou.hours.high) == (50.22, 50.22, 50.22)
    assert (suzhou.billed_hours, suzhou.cost_cny.expected) == (51.0, 408.0)
    # Four cards: 48 / 3.2, / 3.0, / 2.8 h, each plus the copy, which more cards do not shorten.
    assert quotes["suzhou@4"].hours.expected == round(48 / 3.0 + COPY_HOURS, 2) == 18.22
    assert quotes["suzhou@4"].hours.high == round(48 / 2.8 + COPY_HOURS, 2) == 19.37
    assert any(
        "copying 500 GB at 500 Mbit/s adds 2.22 h" in warning and "Nanjing" in warning
        for warning in suzhou.warnings
    )
    # Nanjing: the data is there; 48 h, ¥6 × 48 = ¥288, no warning.
    assert (nanjing.hours.expected, nanjing.cost_cny.expected) == (48.0, 288.0)
    assert not any("copying" in warning or "data is in" in warning for warning in nanjing.warnings)


def test_a_data_city_without_a_size_warns_of_io_waits_only() -> None:
    quotes = located("nanjing")
    assert quotes["suzhou@1"].hours.expected == 48.0
    assert any("wait on IO" in warning for warning in quotes["suzhou@1"].warnings)


@pytest.mark.parametrize(
    ("city", "shown"), [("shanghai", "Shanghai"), ("上海", "Shanghai"), ("Lhasa", "Lhasa")]
)
def test_data_kept_where_no_offer_is_makes_every_offer_wait_for_the_copy(city: str, shown: str) -> None:
    quotes = located(city, dataset_gb=500)
    # Neither Suzhou nor Nanjing holds the data: 48 h + 2.22 h on both.
    assert quotes["suzhou@1"].hours.expected == quotes["nanjing@1"].hours.expected == 50.22
    assert any(shown in warning and "2.22 h" in warning for warning in quotes["nanjing@1"].warnings)


def test_a_dataset_size_without_its_city_is_a_named_422() -> None:
    request = QuoteRequest(workload=Workload(gpu_hours=48.0, dataset_gb=500), card_counts=[1])
    with pytest.raises(InvalidRequest) as raised:
        build_quote(snapshot([SUZHOU, NANJING]), request, options=options())
    assert raised.value.field == "workload.dataset_gb"
    assert "give data_city too" in raised.value.reason


def test_a_slower_line_setting_lengthens_the_copy() -> None:
    request = QuoteRequest(
        workload=Workload(gpu_hours=48.0, data_city="nanjing", dataset_gb=500), card_counts=[1]
    )
    response = build_quote(snapshot([SUZHOU, NANJING]), request, options=options(cross_city_mbps=100.0))
    suzhou = next(quote for quote in response.quotes if quote.city == "suzhou")
    assert suzhou.hours.expected == round(48 + 500 * 8000 / 100 / 3600, 2) == 59.11


# Over HTTP, with the test vendors file: a Nanjing offer listing storage and traffic prices.
VENDORS = Path(__file__).parent / "vendors" / "clusters.toml"


@pytest.fixture
def vendors_file() -> Path:
    return VENDORS


async def test_listed_storage_and_traffic_become_line_items(client: Client) -> None:
    # 100 GB from Shenzhen to the Nanjing 4090 (¥2/card-hour, hourly): copy 100 × 8,000 / 500 / 3,600 =
    # 0.4444 h, so 10.44 h, billed 11 h = ¥22.00; storage 100 GB × ¥0.01/GB-day × 10.4444 h / 24 = ¥0.44;
    # traffic 100 GB × ¥0.50 = ¥50.00. Total ¥72.44.
    workload = {"gpu_hours": 10, "data_city": "深圳", "dataset_gb": 100}
    body = {"workload": workload, "vendors": ["nj-data"], "card_counts": [1]}
    response = await client.post("/quote", json=body)
    assert response.status_code == 200, response.text
    (quote,) = response.json()["quotes"]
    assert quote["hours"]["expected"] == 10.44
    assert quote["cost_cny"]["expected"] == 72.44
    amounts = {item["kind"]: item["amount_cny"] for item in quote["breakdown"]}
    assert amounts == {"compute": 20.0, "data_copy": 2.0, "storage": 0.44, "network": 50.0}


async def test_serving_over_http_keeps_the_wall_clock_hours(client: Client) -> None:
    workload = {"kind": "serving", "hours": 720, "model_params_b": 70.6, "precision": "int8", "replicas": 2}
    response = await client.post("/quote", json={"workload": workload, "gpus": ["h800"]})
    assert response.status_code == 200, response.text
    quotes = response.json()["quotes"]
    # 84.72 GB on 80 GB H800s: 2 cards per replica, 4 in all, on either cluster's one node.
    assert {quote["cards"] for quote in quotes} == {4}
    assert all(quote["hours"] == {"low": 720.0, "expected": 720.0, "high": 720.0} for quote in quotes)


async def test_serving_without_hours_is_a_422_naming_the_field(client: Client) -> None:
    response = await client.post("/quote", json={"workload": {"kind": "serving", "gpu_hours": 5}})
    assert response.status_code == 422
    assert "workload.gpu_hours" in response.text
    response = await client.post("/quote", json={"workload": {"kind": "serving"}})
    assert response.status_code == 422
    assert "workload.hours" in response.text
