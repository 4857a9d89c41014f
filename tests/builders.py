"""Small builders for literal test data."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from adapters.gpus import DEFAULT_GPU_CATALOG
from schemas.offer import CardHourPricing, Interconnect, Offer, Pricing
from schemas.vendor import VendorStatus

FETCHED_AT = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def make_offer(
    vendor: str = "js-test",
    sku: str = "4090",
    *,
    pricing: Pricing | None = None,
    gpu: str = "rtx4090",
    region: str = "jiangsu",
    city: str = "suzhou",
    interconnect: Interconnect = "pcie",
    fetched_at: datetime = FETCHED_AT,
    available_cards: int | None = None,
) -> Offer:
    return Offer(
        id=f"{vendor}:{sku}",
        vendor=vendor,
        sku=sku,
        region=region,
        city=city,
        gpu=gpu,
        gpu_memory_gb=DEFAULT_GPU_CATALOG.get(gpu).memory_gb,
        interconnect=interconnect,
        pricing=pricing or CardHourPricing(cny_per_card_hour=8.0),
        fetched_at=fetched_at,
        source="test",
        available_cards=available_cards,
    )


def ok_status(vendor: str, offers: int = 1) -> VendorStatus:
    return VendorStatus(vendor=vendor, last_success_at=FETCHED_AT, offer_count=offers)


def static_row(sku: str = "4090", price_cny: float = 8.0, *, gpu: str = "RTX 4090") -> dict[str, object]:
    """One offer row of a ``static``-format feed: a card-hour price, GPU named as a vendor would."""
    return {"sku": sku, "gpu": gpu, "pricing": {"kind": "card_hour", "price_cny": price_cny}}


def static_feed(rows: Iterable[dict[str, object]]) -> bytes:
    """A ``static``-format feed document holding ``rows``."""
    return json.dumps({"offers": list(rows)}).encode()


def card_hour_feed(prices_cny: Mapping[str, float]) -> bytes:
    """A ``static``-format feed of RTX 4090 card-hour offers, one per sku."""
    return static_feed(static_row(sku, price) for sku, price in prices_cny.items())
