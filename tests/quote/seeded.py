"""Seeded catalogs and requests: many shapes of both, the same on every run.

The engine's shortcuts (fast paths, caches, pruning) are tested by asking the same seeded requests of the
same seeded catalogs with and without them and comparing the answers byte for byte. The catalogs mix every
pricing kind, machine sizes, fabrics, stock, stale prices, illustrative labels, data fees, spot offers
(some stating their interruption rate) and vendors selling day, week and month packages beside
card-hours (combined plans with many combinations); the requests mix every input: job kinds, hours,
conversions, models and tasks, limits and the confidence they are judged with, spot allowed or not,
checkpoint and restart figures, counts, filters, rankings, scaling overrides and languages, including
ones the engine refuses.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import msgspec

from schemas.offer import (
    PERIOD_HOURS,
    BundlePricing,
    CardHourPricing,
    NodeHourPricing,
    Offer,
    Pricing,
    TermPeriod,
    TermPricing,
)
from schemas.quote import QuoteRequest, QuoteResponse
from schemas.vendor import VendorStatus
from service.errors import InvalidRequest
from service.quote import QuoteOptions, Snapshot, build_quote
from tests.quote.factories import NOW

__all__ = ["answers", "catalog", "requests", "without_limits"]

_GPUS = (
    ("rtx4090", 24, 2.0),
    ("rtx3090", 24, 1.2),
    ("l20", 48, 3.8),
    ("a100-40g", 40, 5.5),
    ("a100-80g", 80, 6.7),
    ("h20", 96, 7.0),
    ("h800", 80, 15.0),
)
_PLACES = (("shenzhen", "shenzhen"), ("jiangsu", "suzhou"), ("jiangsu", "nanjing"), ("jiangsu", "wuxi"))
_MODELS = ("qwen2.5-7b", "qwen2.5-72b", "llama-3.1-70b", "qwen2.5-32b", "mixtral-8x7b", "nope-1b")
_TASKS = ("inference", "lora", "qlora", "full_finetune", "pretrain")
_PERIODS: tuple[TermPeriod, ...] = ("day", "week", "month")


def _pricing(rng: random.Random, price: float, *, cluster: bool) -> Pricing:
    if cluster:
        return NodeHourPricing(
            cny_per_node_hour=round(price * 4, 2),
            cards_per_node=rng.choice((1, 2, 4, 7, 8)),
            min_nodes=rng.choice((1, 2, 4)),
            max_nodes=rng.choice((16, 128, 1024)),
        )
    roll = rng.random()
    if roll < 0.45:
        return CardHourPricing(
            cny_per_card_hour=price,
            max_cards=rng.choice((1, 2, 4, 8, 10)),
            granularity_s=rng.choice((1, 60, 3600)),
            min_billed_hours=rng.choice((0.0, 0.0, 1.0, 24.0)),
        )
    if roll < 0.6:
        return NodeHourPricing(
            cny_per_node_hour=round(price * 8 * 0.95, 2),
            cards_per_node=rng.choice((4, 8)),
            min_nodes=rng.choice((1, 2)),
            max_nodes=rng.choice((4, 16, None)),
            network_premium_cny_per_node_hour=rng.choice((0.0, 8.0)),
            storage_cny_per_node_hour=rng.choice((0.0, 6.0)),
            granularity_s=rng.choice((60, 3600)),
        )
    if roll < 0.75:
        cards = rng.choice((2, 4, 8))
        return BundlePricing(
            cards=cards, cny_per_bundle_hour=round(price * cards * 0.92, 2), max_bundles=rng.choice((1, 2))
        )
    period: TermPeriod = rng.choice(_PERIODS)
    hours = PERIOD_HOURS[period]
    cards = rng.choice((1, 8))
    return TermPricing(
        period=period,
        cny_per_period=round(price * hours * cards * rng.uniform(0.6, 0.9), 2),
        cards=cards,
        max_units=rng.choice((1, 4, 8)),
    )


def _offer(
    rng: random.Random, index: int, vendor: str, pricing: Pricing, gpu_at: int, place_at: int
) -> Offer:
    gpu, memory_gb, _ = _GPUS[gpu_at]
    region, city = _PLACES[place_at]
    stale = rng.random() < 0.15
    spot = not isinstance(pricing, TermPricing) and rng.random() < 0.15
    return Offer(
        id=f"{vendor}:{gpu}-{index}",
        vendor=vendor,
        sku=f"{gpu}-{index}",
        region=region,
        city=city,
        gpu=gpu,
        gpu_memory_gb=memory_gb,
        interconnect=rng.choice(("pcie", "nvlink", "infiniband", "roce", "ethernet")),
        pricing=pricing,
        fetched_at=NOW - timedelta(hours=rng.uniform(30, 90) if stale else rng.uniform(0.1, 10)),
        source="seeded",
        available_cards=rng.choice((None, None, 2, 8, 16, 64)),
        label=rng.choice(("", "", "illustrative reference price")),
        storage_cny_per_gb_day=rng.choice((None, None, 0.01)),
        traffic_cny_per_gb=rng.choice((None, None, 0.5)),
        lead_time_h=rng.choice((None, None, None, None, 24.0)),
        spot=spot,
        spot_interruptions_per_month=rng.choice((None, 0.5, 30.0)) if spot else None,
    )


def catalog(seed: int, offers: int = 240, *, clusters: int = 12, packaged_vendors: int = 6) -> Snapshot:
    """A snapshot of ``offers`` seeded offers, ``clusters`` of them selling up to 1,024 nodes, and
    ``packaged_vendors`` vendors selling every period (per card and per machine) beside card-hours."""
    rng = random.Random(seed)
    rows = []
    for index in range(offers):
        gpu_at, place_at = index % len(_GPUS), rng.randrange(len(_PLACES))
        price = round(_GPUS[gpu_at][2] * rng.uniform(0.7, 1.5), 2)
        vendor = f"seed-{index % 23:02d}"
        rows.append(
            _offer(rng, index, vendor, _pricing(rng, price, cluster=index < clusters), gpu_at, place_at)
        )
    for at in range(packaged_vendors):
        vendor, gpu_at, place_at = f"pack-{at}", at % len(_GPUS), at % len(_PLACES)
        base = _GPUS[gpu_at][2]
        rows.append(
            _offer(rng, 10_000 + at, vendor, CardHourPricing(cny_per_card_hour=base), gpu_at, place_at)
        )
        for period in _PERIODS:
            hours = PERIOD_HOURS[period]
            for cards in (1, 8):
                discount = {"day": 0.85, "week": 0.78, "month": 0.7}[period]
                pricing = TermPricing(
                    period=period, cny_per_period=round(base * hours * cards * discount, 2), cards=cards
                )
                rows.append(
                    _offer(
                        rng,
                        20_000 + 100 * at + int(hours) % 7 * 10 + cards,
                        vendor,
                        pricing,
                        gpu_at,
                        place_at,
                    )
                )
    statuses = {row.vendor: VendorStatus(vendor=row.vendor, last_success_at=NOW) for row in rows}
    return Snapshot.of(rows, statuses, version=seed, built_at=NOW)


def _job(rng: random.Random) -> dict[str, Any]:
    roll = rng.random()
    if roll < 0.2:
        workload: dict[str, Any] = {
            "kind": "serving",
            "hours": rng.choice((1, 24, 200, 720, rng.uniform(0.5, 2000))),
        }
        if rng.random() < 0.3:
            workload["target_tokens_per_s"] = rng.choice((200, 3000, 20_000))
            if rng.random() < 0.3:
                workload["replica_tokens_per_s"] = rng.choice((150, 900))
        elif rng.random() < 0.6:
            workload["replicas"] = rng.choice((1, 2, 3))
        return workload
    if roll < 0.3:
        workload = {"gpu_hours": rng.choice((12, 400, 3000)), "kind": "independent"}
        if rng.random() < 0.6:
            workload["runs"] = rng.choice((3, 25, 200))
        if rng.random() < 0.3:
            workload["cards_per_run"] = rng.choice((1, 2, 4))
        return workload
    if roll < 0.38:
        return {
            "tokens": rng.choice((1e7, 5e8, 2e10)),
            "model": rng.choice(_MODELS[:4]),
            "task": rng.choice(_TASKS),
        }
    workload = {"gpu_hours": rng.choice((0.5, 12, 48, 400, 3000, 20_000, round(rng.uniform(1, 3000), 3)))}
    if rng.random() < 0.6:
        workload["reference_gpu"] = rng.choice(("rtx4090", "h800", "a100-80g", "l20"))
        if rng.random() < 0.2:
            workload["speed_ratios"] = {rng.choice(("h800", "a100-80g", "l20")): rng.choice((0.5, 2.0, 3.2))}
    return workload


def _workload(rng: random.Random) -> dict[str, Any]:
    workload = _job(rng)
    serving = "hours" in workload
    if "tokens" in workload:
        return workload
    if rng.random() < 0.1:
        workload["growth_factor"] = rng.choice((1.5, 2, 4))
    roll = rng.random()
    if roll < 0.3:
        workload["model"] = rng.choice(_MODELS)
    elif roll < 0.5:
        workload["model_params_b"] = rng.choice((1.5, 7, 14, 34, 70, 180))
    if not serving and "task" not in workload and rng.random() < 0.5:
        workload["task"] = rng.choice(_TASKS)
    if rng.random() < 0.3:
        workload["precision"] = rng.choice(("bf16", "fp8", "int8", "int4"))
    if rng.random() < 0.4:
        workload["communication"] = rng.choice(("light", "moderate", "heavy"))
    if rng.random() < 0.1:
        workload["cross_node_factor"] = rng.choice((0.5, 0.8, 0.3))
    if rng.random() < 0.15:
        workload["data_city"] = rng.choice(("suzhou", "nanjing", "shanghai", "南京"))
        if rng.random() < 0.7:
            workload["dataset_gb"] = rng.choice((50, 500, 2000))
    return {**workload, **_recovery(rng)}


def _recovery(rng: random.Random) -> dict[str, Any]:
    """How a job recovers from an interruption: its restart and checkpoints, when the request says."""
    recovery: dict[str, Any] = {}
    if rng.random() < 0.2:
        recovery["restart_minutes"] = rng.choice((0, 5, 60))
    if rng.random() < 0.2:
        # Some of them refused (a serving job keeps no checkpoints), by design.
        recovery["checkpoint_interval_h"] = rng.choice((0.25, 4, 24))
    if rng.random() < 0.15:
        recovery["checkpoint_minutes"] = rng.choice((1, 10))
    return recovery


def _risk_choices(rng: random.Random) -> dict[str, Any]:
    """How a request takes risk: the confidence its limits are judged with, spot allowed or not."""
    choices: dict[str, Any] = {}
    for name, values in (
        ("deadline_confidence", ("expected", "high")),
        ("budget_confidence", ("expected", "high")),
        ("allow_spot", (True, False)),
    ):
        if rng.random() < 0.2:
            choices[name] = rng.choice(values)
    return choices


def _body(rng: random.Random, gpus: list[str]) -> dict[str, Any]:
    workload = _workload(rng)
    body: dict[str, Any] = {"workload": workload}
    if rng.random() < 0.3:
        body["gpus"] = rng.sample(gpus, k=rng.choice((1, 2, 3)))
    if rng.random() < 0.1:
        body["cities"] = [rng.choice(("suzhou", "wuxi", "shenzhen"))]
    if rng.random() < 0.1:
        body["pricing"] = rng.sample(
            ["card_hour", "node_hour", "bundle", "term", "mixed"], k=rng.choice((1, 2))
        )
    if rng.random() < 0.3:
        body["card_counts"] = sorted(
            rng.sample([1, 2, 3, 4, 8, 12, 16, 32, 64, 128], k=rng.choice((1, 2, 4)))
        )
    hours = workload.get("gpu_hours") or workload.get("hours") or 10
    if rng.random() < 0.3:
        body["deadline_hours"] = round(max(0.1, hours / rng.choice((1, 2, 5, 20, 100))), 2)
    if rng.random() < 0.25:
        body["budget_cny"] = round(hours * rng.choice((1, 3, 8, 60)), 2)
    body.update(_risk_choices(rng))
    if rng.random() < 0.4:
        body["rank_by"] = rng.choice(("cost", "time", "value"))
    if rng.random() < 0.25:
        body["time_value_cny_per_hour"] = rng.choice((0, 5, 500))
    if rng.random() < 0.1:
        body["scaling"] = rng.choice(
            ("nvlink", "comm_heavy", {"4": [3.6, 3.8]}, {"8": [6, 7], "32": [20, 26]})
        )
    if rng.random() < 0.3:
        body["limit"] = rng.choice((1, 3, 20))
    if rng.random() < 0.4:
        body["lang"] = "zh"
    return body


def requests(seed: int, count: int, snapshot: Snapshot) -> Iterator[QuoteRequest]:
    """``count`` seeded requests for ``snapshot``'s GPUs (some the engine refuses, by design)."""
    rng = random.Random(seed)
    gpus = sorted({offer.gpu for offer in snapshot.offers})
    for _ in range(count):
        yield msgspec.convert(_body(rng, gpus), QuoteRequest)


def without_limits(request: QuoteRequest) -> QuoteRequest:
    """``request`` with no deadline and no budget, each confidence back to the expected figures."""
    return msgspec.structs.replace(
        request,
        budget_cny=None,
        deadline_hours=None,
        deadline_confidence="expected",
        budget_confidence="expected",
    )


def answers(snapshot: Snapshot, quoted: list[QuoteRequest], options: QuoteOptions) -> list[bytes]:
    """Each request's answer as bytes: the encoded response, or the refusal's field and reason."""
    written = []
    for request in quoted:
        try:
            response: QuoteResponse = build_quote(snapshot, request, options=options)
        except InvalidRequest as error:
            written.append(f"422 {error.field}: {error.reason}".encode())
        else:
            written.append(msgspec.json.encode(response))
    return written
