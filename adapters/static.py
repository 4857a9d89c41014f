"""The ``static`` feed: the canonical JSON price file (also the bundled reference catalog's format).

Recorded sample::

    {"observed_at": "2026-03-02T09:00:00+08:00",
     "offers": [
      {"sku": "4090", "gpu": "RTX 4090", "interconnect": "pcie",
       "pricing": {"kind": "card_hour", "price_cny": 8.0, "max_cards": 8, "granularity_s": 3600}},
      {"sku": "4090x4", "gpu": "rtx4090", "pricing": {"kind": "bundle", "cards": 4, "price_cny": 22.0}},
      {"sku": "h800-node", "gpu": "H800", "interconnect": "infiniband",
       "pricing": {"kind": "node_hour", "price_cny": 300.0, "cards_per_node": 8, "min_nodes": 2,
                   "network_premium_cny": 20.0}},
      {"sku": "4090-month", "gpu": "rtx4090",
       "pricing": {"kind": "term", "period": "month", "price_cny": 1052.0, "cards": 1}}
    ]}

``price_cny`` is per card-hour, node-hour, bundle-hour or period according to ``kind``. A row may add
the vendor's data fees: ``storage_cny_per_gb_day`` and ``traffic_cny_per_gb`` (quotes use them when a
request gives ``workload.dataset_gb``), and ``lead_time_h``, the hours from booking to the cards being
ready (multi-card capacity "booked a day ahead" is 24; the deadline counts them). A spot row (``"spot":
true``: capacity the vendor can take back) may state how often: ``interruptions_per_month``, expected
interruptions per 30 days of one rented machine. ``observed_at``
(optional, ISO-8601 with a UTC offset) is when the prices were seen: each offer's ``fetched_at`` is that
time rather than the time the file was read, so prices copied into a file age, and turn stale, like any
other. Left out, the prices are as new as the read.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec

from adapters._source import DocumentAdapter, decode_problem
from adapters.base import AdapterContext, FetchResult, OfferBuilder, VendorFetchError
from schemas.offer import (
    BundlePricing,
    CardHourPricing,
    Interconnect,
    NodeHourPricing,
    Pricing,
    TermPeriod,
    TermPricing,
)
from schemas.vendor import VendorConfig

__all__ = ["StaticAdapter"]


class _RawCardHour(msgspec.Struct, tag="card_hour", tag_field="kind", forbid_unknown_fields=True):
    price_cny: float
    max_cards: int = 8
    granularity_s: int = 3600
    min_billed_hours: float = 0.0


class _RawNodeHour(msgspec.Struct, tag="node_hour", tag_field="kind", forbid_unknown_fields=True):
    price_cny: float
    cards_per_node: int = 8
    min_nodes: int = 1
    max_nodes: int | None = None
    network_premium_cny: float = 0.0
    storage_cny: float = 0.0
    granularity_s: int = 3600


class _RawBundle(msgspec.Struct, tag="bundle", tag_field="kind", forbid_unknown_fields=True):
    cards: int
    price_cny: float
    max_bundles: int = 1
    granularity_s: int = 3600


class _RawTerm(msgspec.Struct, tag="term", tag_field="kind", forbid_unknown_fields=True):
    period: TermPeriod
    price_cny: float
    cards: int = 1
    max_units: int = 8


_RawPricing = _RawCardHour | _RawNodeHour | _RawBundle | _RawTerm


class _RawOffer(msgspec.Struct, forbid_unknown_fields=True):
    sku: str
    gpu: str
    pricing: _RawPricing
    interconnect: Interconnect = "pcie"
    available_cards: int | None = None
    spot: bool = False
    # A spot row's interruption rate as the vendor states it: expected interruptions per 30 days of one
    # rented machine (``Offer.spot_interruptions_per_month``).
    interruptions_per_month: Annotated[float, msgspec.Meta(ge=0, le=720)] | None = None
    # Data fees, when the vendor lists them: storage per GB-day, traffic per GB.
    storage_cny_per_gb_day: Annotated[float, msgspec.Meta(ge=0, le=1e6)] | None = None
    traffic_cny_per_gb: Annotated[float, msgspec.Meta(ge=0, le=1e6)] | None = None
    lead_time_h: Annotated[float, msgspec.Meta(ge=0, le=8760)] | None = None


class _RawFile(msgspec.Struct):
    offers: list[_RawOffer]
    observed_at: Annotated[datetime, msgspec.Meta(tz=True)] | None = None


_decoder = msgspec.json.Decoder(_RawFile)


def _to_pricing(raw: _RawPricing) -> Pricing:
    match raw:
        case _RawCardHour():
            return CardHourPricing(
                cny_per_card_hour=raw.price_cny,
                max_cards=raw.max_cards,
                granularity_s=raw.granularity_s,
                min_billed_hours=raw.min_billed_hours,
            )
        case _RawNodeHour():
            return NodeHourPricing(
                cny_per_node_hour=raw.price_cny,
                cards_per_node=raw.cards_per_node,
                min_nodes=raw.min_nodes,
                max_nodes=raw.max_nodes,
                network_premium_cny_per_node_hour=raw.network_premium_cny,
                storage_cny_per_node_hour=raw.storage_cny,
                granularity_s=raw.granularity_s,
            )
        case _RawBundle():
            return BundlePricing(
                cards=raw.cards,
                cny_per_bundle_hour=raw.price_cny,
                max_bundles=raw.max_bundles,
                granularity_s=raw.granularity_s,
            )
        case _RawTerm():
            return TermPricing(
                period=raw.period, cny_per_period=raw.price_cny, cards=raw.cards, max_units=raw.max_units
            )


def parse_static(body: bytes, config: VendorConfig, context: AdapterContext, *, source: str) -> FetchResult:
    """Decode a static price file and normalize each row; a body that does not decode fails the feed."""
    try:
        raw_file = _decoder.decode(body)
    except msgspec.DecodeError as error:
        message = f"malformed static price file: {decode_problem(error)}"
        raise VendorFetchError(config.id, message, category="malformed") from error
    builder = OfferBuilder(config, context, source=source, observed_at=raw_file.observed_at)
    for raw in raw_file.offers:
        builder.add(
            sku=raw.sku,
            gpu_name=raw.gpu,
            pricing=_to_pricing(raw.pricing),
            interconnect=raw.interconnect,
            available_cards=raw.available_cards,
            spot=raw.spot,
            storage_cny_per_gb_day=raw.storage_cny_per_gb_day,
            traffic_cny_per_gb=raw.traffic_cny_per_gb,
            lead_time_h=raw.lead_time_h,
            # A rate on a row that is not spot says nothing the quotes use.
            spot_interruptions_per_month=raw.interruptions_per_month if raw.spot else None,
        )
    return builder.result()


class StaticAdapter(DocumentAdapter):
    """Reads the canonical price file from ``path`` or ``url``."""

    def parse(self, body: bytes, *, source: str) -> FetchResult:
        return parse_static(body, self.config, self.context, source=source)
