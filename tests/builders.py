"""Small builders for literal test data."""

from __future__ import annotations

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
