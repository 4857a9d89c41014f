"""Benchmark of ``POST /quote``'s engine alone (the HTTP server under load: ``bench/http_load.py``).

Run: ``.venv/bin/python bench/quote.py [--offers 2000] [--runs 2000]``

1. Engine only: a synthetic catalog of 2,000 offers over 10 GPU models and both regions, every pricing
   variant; the median and p99 time of ``build_quote`` for a default request (no card counts: every count
   each offer sells, up to 512 cards, and the combined package-plus-hourly plans).
2. HTTP: ``bench/http_load.py`` runs ``gpuquote serve`` (what production runs) under wrk, with the same
   synthetic catalog, and reports every figure as a ratio to a baseline measured in the same run.

Target on a 2-core machine: engine median ≤ 1 ms.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from schemas.offer import (
    BundlePricing,
    CardHourPricing,
    NodeHourPricing,
    Offer,
    Pricing,
    TermPeriod,
    TermPricing,
)
from schemas.quote import QuoteRequest, Workload
from schemas.vendor import VendorStatus
from service.quote import FastPaths, QuoteOptions, Snapshot, build_quote

NOW = datetime.now(UTC)
# (gpu id, memory GB, typical ¥ per card-hour)
GPUS = (
    ("rtx4090", 24, 2.0),
    ("rtx4090d", 24, 1.8),
    ("rtx3090", 24, 1.2),
    ("l20", 48, 3.8),
    ("l40s", 48, 5.0),
    ("a100-40g", 40, 5.5),
    ("a100-80g", 80, 6.7),
    ("a800-80g", 80, 6.5),
    ("h20", 96, 7.0),
    ("h800", 80, 15.0),
)
REGIONS = (("shenzhen", "shenzhen"), ("jiangsu", "suzhou"), ("jiangsu", "nanjing"), ("jiangsu", "wuxi"))


def _pricing(rng: random.Random, card_hour_cny: float) -> Pricing:
    price = round(card_hour_cny * rng.uniform(0.7, 1.5), 2)
    roll = rng.random()
    if roll < 0.55:
        return CardHourPricing(
            cny_per_card_hour=price,
            max_cards=rng.choice((4, 8, 8, 10)),
            granularity_s=rng.choice((1, 60, 3600)),
        )
    if roll < 0.7:
        return NodeHourPricing(
            cny_per_node_hour=round(price * 8 * 0.95, 2),
            cards_per_node=8,
            min_nodes=rng.choice((1, 2)),
            max_nodes=rng.choice((4, 16, None)),
            network_premium_cny_per_node_hour=rng.choice((0.0, 8.0, 24.0)),
            storage_cny_per_node_hour=rng.choice((0.0, 6.0)),
        )
    if roll < 0.85:
        cards = rng.choice((2, 4, 8))
        return BundlePricing(
            cards=cards, cny_per_bundle_hour=round(price * cards * 0.92, 2), max_bundles=8 // cards
        )
    period: TermPeriod = rng.choice(("day", "week", "month"))
    hours = {"day": 24, "week": 168, "month": 720}[period]
    cards = rng.choice((1, 8))
    return TermPricing(period=period, cny_per_period=round(price * hours * cards * 0.75, 2), cards=cards)


def synthetic_offers(count: int = 2_000, seed: int = 7) -> list[Offer]:
    """``count`` offers over 10 GPU models, both regions and every pricing variant (deterministic)."""
    rng = random.Random(seed)
    offers = []
    for index in range(count):
        gpu, memory_gb, card_hour_cny = GPUS[index % len(GPUS)]
        region, city = REGIONS[rng.randrange(len(REGIONS))]
        vendor = f"bench-{region[:2]}-{index % 97:02d}"
        offers.append(
            Offer(
                id=f"{vendor}:{gpu}-{index}",
                vendor=vendor,
                sku=f"{gpu}-{index}",
                region=region,
                city=city,
                gpu=gpu,
                gpu_memory_gb=memory_gb,
                interconnect=rng.choice(("pcie", "nvlink", "infiniband", "roce")),
                pricing=_pricing(rng, card_hour_cny),
                fetched_at=NOW - timedelta(minutes=rng.uniform(1, 600)),
                source="bench",
                available_cards=rng.choice((None, None, 8, 16, 64)),
            )
        )
    return offers


def synthetic_snapshot(offers: Sequence[Offer]) -> Snapshot:
    offers = tuple(offers)
    vendors = sorted({offer.vendor for offer in offers})
    return Snapshot.of(
        offers,
        {vendor: VendorStatus(vendor=vendor, last_success_at=NOW) for vendor in vendors},
        version=1,
        built_at=NOW,
    )


BENCH_REQUEST = QuoteRequest(
    workload=Workload(gpu_hours=48, reference_gpu="rtx4090", model_params_b=7, task="lora"),
    time_value_cny_per_hour=20,
)


def _percentile(samples: Sequence[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def bench_engine(offer_count: int, runs: int) -> None:
    offers = synthetic_offers(offer_count)
    started = time.perf_counter()
    snapshot = synthetic_snapshot(offers)
    build_ms = (time.perf_counter() - started) * 1e3
    options = QuoteOptions(now=NOW, price_max_age_s=86_400)
    for _ in range(50):
        build_quote(snapshot, BENCH_REQUEST, options=options)
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        build_quote(snapshot, BENCH_REQUEST, options=options)
        samples.append(time.perf_counter() - started)
    response = build_quote(snapshot, BENCH_REQUEST, options=options)
    counts = snapshot.tables.plan_counts
    print(f"engine: {offer_count} offers ({len(snapshot.tables.plans)} combined plans), every count sold "
          f"({', '.join(map(str, counts))}), {runs} runs")  # fmt: skip
    print(f"  snapshot tables built in {build_ms:.1f} ms (once per store version)")
    print(
        f"  build_quote median {statistics.median(samples) * 1e3:.3f} ms, "
        f"p99 {_percentile(samples, 0.99) * 1e3:.3f} ms (target: median <= 1 ms)"
    )
    print(f"  {len(response.quotes)} quotes returned; excluded {msgspec.structs.asdict(response.excluded)}")


PATH_REQUESTS = {
    "default": BENCH_REQUEST,
    "deadline": QuoteRequest(workload=Workload(gpu_hours=2_000, reference_gpu="rtx4090"), deadline_hours=30),
    "card counts": QuoteRequest(workload=Workload(gpu_hours=400), card_counts=[1, 2, 4, 8, 16, 32]),
    "time, budget": QuoteRequest(workload=Workload(gpu_hours=300), rank_by="time", budget_cny=4_000),
}


def _median_ms(snapshot: Snapshot, request: QuoteRequest, options: QuoteOptions, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        build_quote(snapshot, request, options=options)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e3


def bench_paths(offer_count: int, runs: int, rounds: int = 5) -> None:
    """Each fast path's saving: the median with it off over the median with every path on, per request
    shape, the two measured in alternating rounds so that the machine's drift hits both alike."""
    snapshot = synthetic_snapshot(synthetic_offers(offer_count))
    on = QuoteOptions(now=NOW, price_max_age_s=86_400)
    names = [field.name for field in dataclasses.fields(FastPaths)]
    print(f"fast paths: {offer_count} offers, median of {runs} quotes, best of {rounds} alternating rounds")
    for shape, request in PATH_REQUESTS.items():
        cells = []
        for name in names:
            off = dataclasses.replace(on, fast_paths=dataclasses.replace(FastPaths(), **{name: False}))
            for options in (on, off):
                for _ in range(20):
                    build_quote(snapshot, request, options=options)
            timed = [
                (_median_ms(snapshot, request, on, runs), _median_ms(snapshot, request, off, runs))
                for _ in range(rounds)
            ]
            with_path, without = min(pair[0] for pair in timed), min(pair[1] for pair in timed)
            cells.append(f"{name} off {without / with_path:.2f}x")
        print(f"  {shape}: " + ", ".join(cells))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--offers", type=int, default=2_000)
    parser.add_argument("--runs", type=int, default=2_000, help="engine-only quotes to time")
    parser.add_argument("--skip-http", action="store_true", help="accepted for old scripts; no effect")
    parser.add_argument("--paths", action="store_true", help="also time each fast path switched off")
    args = parser.parse_args(argv)
    bench_engine(args.offers, args.runs)
    if args.paths:
        bench_paths(args.offers, max(args.runs // 10, 50))


if __name__ == "__main__":
    main()
