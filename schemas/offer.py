"""The canonical offer: every vendor price, whatever its billing model, normalized into one shape.

Schema-evolution rules: new fields get defaults; existing fields never change type or meaning.
Money is CNY; each amount's name carries its unit (``..._cny_per_card_hour``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Literal, cast

import msgspec

__all__ = [
    "PERIOD_HOURS",
    "BundlePricing",
    "CardHourPricing",
    "Interconnect",
    "NodeHourPricing",
    "Offer",
    "Pricing",
    "PricingKind",
    "TermPeriod",
    "TermPricing",
    "Timestamp",
    "card_hour_price_cny",
    "headline_price_cny",
    "implausible_offer",
    "max_cards_per_rental",
    "normalized_cny_per_card_hour",
    "offer_id",
    "pricing_kind",
]

Interconnect = Literal["pcie", "nvlink", "infiniband", "roce", "ethernet"]
PricingKind = Literal["card_hour", "node_hour", "bundle", "term"]
TermPeriod = Literal["day", "week", "month"]
PERIOD_HOURS: Mapping[TermPeriod, float] = {"day": 24.0, "week": 168.0, "month": 720.0}
"""Hours in each prepaid period, as the quote engine bills them: a month package is 30 days."""

# Every stored time carries its offset: a naive one cannot be compared with the service's clock, so a
# payload holding one fails to decode (at the store's edge) instead of failing every request that reads it.
Timestamp = Annotated[datetime, msgspec.Meta(tz=True)]

PositiveMoney = Annotated[float, msgspec.Meta(gt=0)]
NonNegativeMoney = Annotated[float, msgspec.Meta(ge=0)]
CardCount = Annotated[int, msgspec.Meta(ge=1, le=1024)]
Seconds = Annotated[int, msgspec.Meta(ge=1, le=86_400)]


class CardHourPricing(msgspec.Struct, tag="card_hour", tag_field="kind", kw_only=True, frozen=True, gc=False):
    """按卡时: cards × hours, each card billed at one price."""

    cny_per_card_hour: PositiveMoney
    max_cards: CardCount = 8
    granularity_s: Seconds = 3600
    min_billed_hours: NonNegativeMoney = 0.0


class NodeHourPricing(msgspec.Struct, tag="node_hour", tag_field="kind", kw_only=True, frozen=True, gc=False):
    """按节点时: whole nodes × hours; every card of a rented node is billed, used or idle."""

    cny_per_node_hour: PositiveMoney
    cards_per_node: CardCount = 8
    min_nodes: CardCount = 1
    max_nodes: CardCount | None = None
    network_premium_cny_per_node_hour: NonNegativeMoney = 0.0
    storage_cny_per_node_hour: NonNegativeMoney = 0.0
    granularity_s: Seconds = 3600


class BundlePricing(msgspec.Struct, tag="bundle", tag_field="kind", kw_only=True, frozen=True, gc=False):
    """多卡打包: a fixed group of cards rented as one unit, usually below the per-card price."""

    cards: CardCount
    cny_per_bundle_hour: PositiveMoney
    max_bundles: CardCount = 1
    granularity_s: Seconds = 3600


class TermPricing(msgspec.Struct, tag="term", tag_field="kind", kw_only=True, frozen=True, gc=False):
    """包日/包周/包月: prepaid whole periods, per card (cards=1) or per machine (cards=N)."""

    period: TermPeriod
    cny_per_period: PositiveMoney
    cards: CardCount = 1
    max_units: CardCount = 8


Pricing = CardHourPricing | NodeHourPricing | BundlePricing | TermPricing


class Offer(msgspec.Struct, kw_only=True, frozen=True, gc=False):
    """One rentable product of one vendor, normalized. ``id`` is stable: ``<vendor>:<sku>``."""

    id: str
    vendor: str
    sku: str
    region: str
    city: str
    gpu: str
    gpu_memory_gb: Annotated[int, msgspec.Meta(ge=1)]
    interconnect: Interconnect
    pricing: Pricing
    fetched_at: Timestamp
    source: str
    currency: Literal["CNY"] = "CNY"
    available_cards: Annotated[int, msgspec.Meta(ge=0)] | None = None
    # Spot / preemptible capacity (抢占式/竞价): cheaper because the vendor can take it back mid-job.
    spot: bool = False
    # For a spot offer, how often the vendor says one rented machine is taken back: expected
    # interruptions per 30 days (720 h) of one machine, the unit AWS's and Alibaba Cloud's spot advice
    # use (a share of instances reclaimed in a month). Left out, quotes use the engine's sourced default
    # range (docs/engine.md, "Interruptions").
    spot_interruptions_per_month: Annotated[float, msgspec.Meta(ge=0, le=720)] | None = None
    label: str = ""
    # Data fees the vendor lists (storage is billed per GB-day even while the instance is off,
    # traffic per GB): quotes add them when the request gives workload.dataset_gb.
    storage_cny_per_gb_day: NonNegativeMoney | None = None
    traffic_cny_per_gb: NonNegativeMoney | None = None
    # Hours from booking to the cards being ready (multi-card capacity booked a day ahead: 24).
    lead_time_h: Annotated[float, msgspec.Meta(ge=0, le=8760)] | None = None
    # The vendor's data-centre zone the stock is in, as the feed names it (南京B区, suzhou-1); empty when
    # the feed lists no zones. ``city`` and ``region`` are the zone's (``adapters.places``).
    zone: str = ""
    # True when the zone names no city the service knows: ``city`` is then the vendor's configured one,
    # which may not be where the stock is.
    city_assumed: bool = False


def offer_id(vendor: str, sku: str) -> str:
    """The stable id of a vendor's SKU."""
    return f"{vendor}:{sku}"


def pricing_kind(pricing: Pricing) -> PricingKind:
    """The variant's tag (``card_hour``, ``node_hour``, ``bundle``, ``term``)."""
    return cast(PricingKind, type(pricing).__struct_config__.tag)


def headline_price_cny(pricing: Pricing) -> float:
    """The one amount a pricing variant is quoted by (per card-hour, node-hour, bundle-hour or period)."""
    match pricing:
        case CardHourPricing():
            return pricing.cny_per_card_hour
        case NodeHourPricing():
            return pricing.cny_per_node_hour
        case BundlePricing():
            return pricing.cny_per_bundle_hour
        case TermPricing():
            return pricing.cny_per_period


def normalized_cny_per_card_hour(pricing: Pricing) -> float:
    """What one card-hour costs under each pricing model, unrounded, so offers compare across models: a
    node-hour with its network and storage premiums over its cards, a bundle-hour over its cards, a
    prepaid period over its hours and cards (a month ¥1,052 for one card: ¥1.46 per card-hour)."""
    match pricing:
        case CardHourPricing():
            return pricing.cny_per_card_hour
        case NodeHourPricing():
            node_cny_per_hour = (
                pricing.cny_per_node_hour
                + pricing.network_premium_cny_per_node_hour
                + pricing.storage_cny_per_node_hour
            )
            return node_cny_per_hour / pricing.cards_per_node
        case BundlePricing():
            return pricing.cny_per_bundle_hour / pricing.cards
        case TermPricing():
            return pricing.cny_per_period / PERIOD_HOURS[pricing.period] / pricing.cards


def max_cards_per_rental(pricing: Pricing) -> int | None:
    """The most cards one rental of the offer holds, as the quote engine plans them: a machine's cards,
    every node of a cluster (``None`` when the vendor states no most nodes), every bundle, every card of a
    per-card package or the one machine of a per-machine package."""
    match pricing:
        case CardHourPricing():
            return pricing.max_cards
        case NodeHourPricing():
            return None if pricing.max_nodes is None else pricing.max_nodes * pricing.cards_per_node
        case BundlePricing():
            return pricing.cards * pricing.max_bundles
        case TermPricing():
            return pricing.max_units if pricing.cards == 1 else pricing.cards


# Sanity bounds a real rental offer stays inside, whatever its feed says: DOMAIN.md's prices run from about
# ¥1 per card-hour (an RTX 3090, a monthly 4090 package) to ¥45 (an H800 at the articles' prices), so ¥0.01
# and ¥1,000 per card-hour leave room for any GPU a vendor rents while keeping a unit error (a price in fen
# or in micro-yuan read as yuan, ``1e308``, ``1e-300``) out of every sum a quote makes.
PLAUSIBLE_CNY_PER_CARD_HOUR = (0.01, 1_000.0)
MAX_MIN_BILLED_HOURS = 8_760.0  # a year
MAX_DATA_FEE_CNY = 100.0  # per GB-day stored or per GB moved; real fees are fen to a yuan
MAX_AVAILABLE_CARDS = 1_000_000


def card_hour_price_cny(pricing: Pricing) -> float:
    """The price per card-hour the variant amounts to: a node over its cards, a bundle over its cards, a
    term package over its cards and the hours of its period."""
    kind = type(pricing)
    if kind is CardHourPricing:
        return pricing.cny_per_card_hour  # type: ignore[union-attr]
    if kind is NodeHourPricing:
        return pricing.cny_per_node_hour / pricing.cards_per_node  # type: ignore[union-attr]
    if kind is BundlePricing:
        return pricing.cny_per_bundle_hour / pricing.cards  # type: ignore[union-attr]
    term: TermPricing = pricing  # type: ignore[assignment]
    return term.cny_per_period / (term.cards * PERIOD_HOURS[term.period])


def _outside(name: str, value: float, low: float, high: float) -> str:
    return f"{name} {value:g} is outside {low:g}..{high:g}"


def implausible_offer(offer: Offer) -> str | None:
    """Why the offer's amounts cannot be a real price (``None`` when they can): outside the sanity bounds
    above. The store's edge and every feed apply it, so a value no vendor means never reaches a quote.
    (Written for speed: a refresh checks every row of a 100,000-row sheet.)"""
    low, high = PLAUSIBLE_CNY_PER_CARD_HOUR
    pricing = offer.pricing
    per_card_hour = card_hour_price_cny(pricing)
    if not low <= per_card_hour <= high:  # NaN fails both comparisons
        return _outside("price per card-hour", per_card_hour, low, high)
    if type(pricing) is CardHourPricing and not 0.0 <= pricing.min_billed_hours <= MAX_MIN_BILLED_HOURS:
        return _outside("min_billed_hours", pricing.min_billed_hours, 0.0, MAX_MIN_BILLED_HOURS)
    if type(pricing) is NodeHourPricing:
        per_node = high * pricing.cards_per_node
        for name, fee in (
            ("network premium per node-hour", pricing.network_premium_cny_per_node_hour),
            ("storage per node-hour", pricing.storage_cny_per_node_hour),
        ):
            if not 0.0 <= fee <= per_node:
                return _outside(name, fee, 0.0, per_node)
    for name, value in (
        ("storage per GB-day", offer.storage_cny_per_gb_day),
        ("traffic per GB", offer.traffic_cny_per_gb),
    ):
        if value is not None and not 0.0 <= value <= MAX_DATA_FEE_CNY:
            return _outside(name, value, 0.0, MAX_DATA_FEE_CNY)
    stock = offer.available_cards
    if stock is not None and not 0 <= stock <= MAX_AVAILABLE_CARDS:
        return _outside("available_cards", stock, 0, MAX_AVAILABLE_CARDS)
    return None
