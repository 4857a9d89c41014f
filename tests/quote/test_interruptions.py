"""Interruptions priced into the ranges: failing hardware by card-hours, what each interruption costs, the
high end's bad-luck count, Young/Daly, and the article's figures left exactly as they were."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import numpy as np
import pytest

from schemas.offer import CardHourPricing, NodeHourPricing
from schemas.quote import Quote, QuoteRequest, QuoteResponse
from service.quote import build_quote
from service.quote.model.interruptions import high_count
from tests.quote.factories import offer, options, snapshot

# A cluster selling up to 1,024 H800 (128 nodes of 8), and one H800 card by the hour.
CLUSTER = offer(
    "sz-big",
    "h800-node",
    gpu="h800",
    interconnect="infiniband",
    pricing=NodeHourPricing(cny_per_node_hour=300.0, cards_per_node=8, max_nodes=128),
)
ONE_CARD = offer("sz-big", "h800", gpu="h800", pricing=CardHourPricing(cny_per_card_hour=40.0))
CATALOG = snapshot([CLUSTER, ONE_CARD])
# 400,000 GPU-hours on 1,024 cards at a measured 800× speed-up: 500 h.
BIG_JOB: dict[str, Any] = {
    "workload": {"gpu_hours": 400_000},
    "card_counts": [1024],
    "scaling": {"1024": [800, 800]},
}


def quote(body: dict[str, Any], **option_fields: object) -> QuoteResponse:
    return build_quote(CATALOG, msgspec.convert(body, QuoteRequest), options=options(**option_fields))


def only(response: QuoteResponse, cards: int) -> Quote:
    (found,) = [item for item in response.quotes if item.cards == cards]
    return found


def _poisson_90th(mean: float) -> int:
    """The smallest n with P(N ≤ n) ≥ 0.9, summed in logs so no term underflows."""
    total, n = 0.0, 0
    while True:
        total += math.exp(-mean + n * math.log(mean) - math.lgamma(n + 1))
        if total >= 0.9:
            return n
        n += 1


def test_a_1024_card_500_hour_job_expects_about_ten_hardware_interruptions() -> None:
    big = only(quote(BIG_JOB), 1024)
    assert big.interruptions is not None
    # 1,024 × 500 card-hours ÷ 50,700 GPU-hours between failures (Llama 3 405B's pre-training).
    assert big.interruptions.expected == pytest.approx(10.1, abs=0.05)
    assert big.interruptions.hardware == big.interruptions.expected
    assert big.interruptions.spot == 0.0


def test_a_one_card_48_hour_job_expects_under_a_hundredth() -> None:
    one = only(quote({"workload": {"gpu_hours": 48}, "card_counts": [1], "pricing": ["card_hour"]}), 1)
    assert one.interruptions is not None
    assert 0 < one.interruptions.expected < 0.01
    assert one.interruptions.expected == pytest.approx(48 / 50_700, rel=0.01)
    # Nothing in the high end: a run with bad luck meets none.
    assert one.interruptions.high_includes == 0
    assert (one.hours.low, one.hours.expected, one.hours.high) == (48.0, 48.0, 48.0)


def test_the_expected_figures_stay_the_jobs_own_and_the_high_end_adds_the_bad_luck_count() -> None:
    big = only(quote(BIG_JOB), 1024)
    assert big.interruptions is not None
    # Each interruption loses half the default 1 h checkpoint interval and a 15-minute restart.
    assert big.interruptions.per_interruption_hours == 0.75
    assert big.interruptions.hours_lost == pytest.approx(10.1 * 0.75, rel=0.01)
    count = big.interruptions.high_includes
    assert count == _poisson_90th(1024 * 500 / 50_700)
    assert (big.hours.low, big.hours.expected) == (500.0, 500.0)
    assert big.hours.high == 500 + count * 0.75
    # 128 nodes × ¥300: the expected bill is the job's own 500 h, the high one its hours rounded up.
    assert big.cost_cny.expected == 128 * 300 * 500
    assert big.cost_cny.high == 128 * 300 * math.ceil(500 + count * 0.75)
    assert big.interruptions.cost_cny == pytest.approx(big.interruptions.hours_lost * 128 * 300, rel=0.01)


def test_material_interruptions_are_said_next_to_the_figures() -> None:
    response = quote(BIG_JOB)
    big = only(response, 1024)
    assert big.interruptions is not None
    lost, count = big.interruptions.hours_lost, big.interruptions.expected
    said = f"plus about {lost:g} h for {count:g} expected interruptions"
    assert any(said in warning for warning in big.warnings)
    first = response.summary.split(". ")[0]
    assert "about 500 h (500–" in first and said in first


def test_the_restart_and_checkpoint_interval_set_what_each_interruption_costs() -> None:
    body = {**BIG_JOB, "workload": {"gpu_hours": 400_000, "checkpoint_interval_h": 3, "restart_minutes": 30}}
    big = only(quote(body), 1024)
    assert big.interruptions is not None
    assert big.interruptions.per_interruption_hours == 2.0  # 1.5 h of lost work and the 30-minute restart
    assert big.hours.high == 500 + big.interruptions.high_includes * 2.0


def test_a_checkpoint_time_suggests_the_young_daly_interval() -> None:
    body = {**BIG_JOB, "workload": {"gpu_hours": 400_000, "checkpoint_minutes": 5}}
    big = only(quote(body), 1024)
    assert big.interruptions is not None
    between_h = 50_700 / 1024  # hours between the job's interruptions
    suggested = math.sqrt(2 * (5 / 60) * between_h)
    assert big.interruptions.suggested_checkpoint_interval_h == pytest.approx(suggested, abs=0.01)
    assert any("checkpointing about every 2.87 h loses least" in warning for warning in big.warnings)
    # Without a checkpoint time, nothing is suggested.
    assert only(quote(BIG_JOB), 1024).interruptions.suggested_checkpoint_interval_h is None  # type: ignore[union-attr]


def test_the_operator_sets_the_gpu_hours_between_failures() -> None:
    fragile = only(quote(BIG_JOB, gpu_hours_between_failures=5_070.0), 1024)
    assert fragile.interruptions is not None
    assert fragile.interruptions.expected == pytest.approx(101, abs=0.5)


@pytest.mark.parametrize("mean", [0.05, 0.1053, 0.106, 0.5, 1.0, 2.5, 7.9, 10.1, 29.9])
def test_the_high_count_is_the_poissons_90th_percentile(mean: float) -> None:
    assert high_count(np.array([mean]))[0] == _poisson_90th(mean)


def test_each_count_is_its_own_whatever_is_worked_out_beside_it() -> None:
    means = np.array([0.001, 10.1, 0.5, 250.0, 3.0])
    together = high_count(means)
    assert together.tolist() == [high_count(np.array([mean]))[0] for mean in means]


@pytest.mark.parametrize("mean", [30.5, 60.0, 150.0, 400.0])
def test_past_the_exact_sum_the_high_count_is_within_one_of_the_percentile(mean: float) -> None:
    assert abs(high_count(np.array([mean]))[0] - _poisson_90th(mean)) <= 1


def test_unknown_hours_stay_unknown() -> None:
    counts = high_count(np.array([np.nan, np.inf, 0.01, 0.0]))
    assert counts[0] == 0 and counts[1] == np.inf and counts[2] == 0 and counts[3] == 0
