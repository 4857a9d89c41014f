"""Hypothesis strategies: offers of every pricing variant and requests with filters and limits."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import strategies as st

from schemas.offer import BundlePricing, CardHourPricing, NodeHourPricing, Offer, Pricing, TermPricing
from schemas.quote import QuoteRequest, Workload
from tests.quote.factories import GPU_MEMORY_GB, NOW, offer

GPUS = sorted(GPU_MEMORY_GB)
prices = st.floats(min_value=0.5, max_value=500.0, allow_nan=False).map(lambda value: round(value, 2))

card_hour = st.builds(
    CardHourPricing,
    cny_per_card_hour=prices,
    max_cards=st.sampled_from([1, 4, 8, 10]),
    granularity_s=st.sampled_from([1, 60, 900, 3600]),
    min_billed_hours=st.sampled_from([0.0, 0.0, 1.0, 24.0]),
)
node_hour = st.builds(
    NodeHourPricing,
    cny_per_node_hour=prices,
    cards_per_node=st.sampled_from([4, 8]),
    min_nodes=st.integers(1, 3),
    max_nodes=st.sampled_from([None, 4, 16]),
    network_premium_cny_per_node_hour=st.sampled_from([0.0, 8.0, 24.0]),
    storage_cny_per_node_hour=st.sampled_from([0.0, 6.0]),
    granularity_s=st.sampled_from([60, 3600]),
)
bundle = st.builds(
    BundlePricing,
    cards=st.sampled_from([2, 4, 8]),
    cny_per_bundle_hour=prices,
    max_bundles=st.integers(1, 2),
    granularity_s=st.sampled_from([60, 3600]),
)
term = st.builds(
    TermPricing,
    period=st.sampled_from(["day", "week", "month"]),
    cny_per_period=prices.map(lambda value: value * 50),
    cards=st.sampled_from([1, 8]),
    max_units=st.sampled_from([1, 8]),
)
pricings: st.SearchStrategy[Pricing] = st.one_of(card_hour, node_hour, bundle, term)


@st.composite
def offers(draw: st.DrawFn, index: int = 0) -> Offer:
    region, city = draw(
        st.sampled_from([("jiangsu", "suzhou"), ("jiangsu", "wuxi"), ("shenzhen", "shenzhen")])
    )
    return offer(
        draw(st.sampled_from(["js-a", "js-b", "sz-c"])),
        f"sku-{index}",
        gpu=draw(st.sampled_from(GPUS)),
        region=region,
        city=city,
        pricing=draw(pricings),
        fetched_at=NOW - timedelta(hours=draw(st.sampled_from([1, 1, 1, 30]))),
        available_cards=draw(st.sampled_from([None, None, 4, 16])),
    )


@st.composite
def catalogs(draw: st.DrawFn) -> list[Offer]:
    size = draw(st.integers(1, 8))
    return [draw(offers(index)) for index in range(size)]


card_counts = st.lists(st.integers(1, 64), min_size=1, max_size=6)


@st.composite
def requests(draw: st.DrawFn) -> QuoteRequest:
    def maybe(strategy: st.SearchStrategy[object]) -> object:
        return draw(st.one_of(st.none(), strategy))

    return QuoteRequest(
        workload=Workload(
            gpu_hours=draw(st.floats(min_value=0.1, max_value=5_000, allow_nan=False)),
            reference_gpu=maybe(st.sampled_from(GPUS)),  # type: ignore[arg-type]
            model_params_b=maybe(st.sampled_from([1.0, 7.0, 70.0])),  # type: ignore[arg-type]
            task=maybe(st.sampled_from(["inference", "lora", "full_finetune"])),  # type: ignore[arg-type]
        ),
        gpus=maybe(st.lists(st.sampled_from(GPUS), min_size=1, max_size=3)),  # type: ignore[arg-type]
        regions=maybe(st.lists(st.sampled_from(["jiangsu", "shenzhen"]), min_size=1, max_size=2)),  # type: ignore[arg-type]
        pricing=maybe(  # type: ignore[arg-type]
            st.lists(st.sampled_from(["card_hour", "node_hour", "bundle", "term"]), min_size=1, max_size=3)
        ),
        min_gpu_memory_gb=maybe(st.sampled_from([24.0, 48.0, 80.0])),  # type: ignore[arg-type]
        card_counts=draw(card_counts),
        deadline_hours=maybe(st.floats(min_value=0.5, max_value=2_000, allow_nan=False)),  # type: ignore[arg-type]
        budget_cny=maybe(st.floats(min_value=1.0, max_value=100_000, allow_nan=False)),  # type: ignore[arg-type]
        rank_by=draw(st.sampled_from(["cost", "time", "value"])),
        time_value_cny_per_hour=maybe(st.floats(min_value=0, max_value=1_000, allow_nan=False)),  # type: ignore[arg-type]
        limit=draw(st.integers(1, 20)),
    )
