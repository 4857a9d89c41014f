"""What a returned quote copies from its offer, worked out once per offer and catalog.

Every quote of an offer repeats the same words and figures whatever the request: the offer's fields, its
GPU's display name, its list price as text, the card-hour offer its line items and break-even compare
against. A snapshot's offers never change, so these are kept beside its tables
(``OfferTables.memos``), for the offers quoted lately.
"""

from __future__ import annotations

from typing import Any

from adapters.gpus import GpuCatalog
from schemas.offer import (
    CardHourPricing,
    Offer,
    TermPricing,
    headline_price_cny,
    pricing_kind,
)
from schemas.quote import Lang, Quote, Range
from service.quote.assemble.lines import CardHourLine
from service.quote.base.memo import MemoSlot
from service.quote.base.money import format_cny, round_hours
from service.quote.model.tables import NO_OFFER, OfferTables
from service.quote.prose.names import gpu_name

__all__ = ["OfferParts", "offer_parts"]

_NO_RANGE = Range(0.0, 0.0, 0.0)
# What ``OfferParts.quote`` holds until a returned quote replaces every one of these.
_REPLACED: dict[str, Any] = {
    "id": "",
    "rank": 0,
    "cards": 0,
    "nodes": 0,
    "billed_cards": 0,
    "speedup": _NO_RANGE,
    "hours": _NO_RANGE,
    "cost_cny": _NO_RANGE,
    "billed_hours": 0.0,
    "hourly_rate_cny": 0.0,
    "effective_card_hour_cny": 0.0,
    "breakdown": (),
    "warnings": (),
    "stale": False,
    "value_cny": None,
}


class OfferParts:
    """One offer's parts of a quote: ``fields`` are ``Quote`` keyword arguments as they are, ``quote``
    a quote with them whose other fields every returned quote replaces (``msgspec.structs.replace``
    takes a fifth of the time of a new ``Quote`` with all 27 arguments)."""

    __slots__ = ("card_hour", "fields", "gpu_name", "lines", "price_text", "quote", "reference")

    def __init__(self, tables: OfferTables, index: int, catalog: GpuCatalog) -> None:
        offer = tables.offers[index]
        pricing = offer.pricing
        reference = _card_hour_reference(tables, index)
        break_even = _break_even_hours(offer, reference)
        self.fields: dict[str, Any] = {
            "offer_id": offer.id,
            "vendor": offer.vendor,
            "region": offer.region,
            "city": offer.city,
            "gpu": offer.gpu,
            "gpu_memory_gb": offer.gpu_memory_gb,
            "interconnect": offer.interconnect,
            "pricing": pricing_kind(pricing),
            "price_fetched_at": offer.fetched_at,
            "label": offer.label,
        }
        self.gpu_name = gpu_name(offer.gpu, catalog)
        self.price_text = format_cny(headline_price_cny(offer.pricing))
        # Line items compare a bundle with the same vendor's card-hours only (``_breakdown``).
        self.reference = reference if reference is not None and reference.vendor == offer.vendor else None
        self.card_hour = pricing if isinstance(pricing, CardHourPricing) else None
        # The card-hour compute line, by language (made on first use).
        self.lines: dict[Lang, CardHourLine] = {}
        self.quote = Quote(
            **self.fields,
            term_period=pricing.period if isinstance(pricing, TermPricing) else None,
            break_even_hours=None if break_even is None else round_hours(break_even),
            **_REPLACED,
        )

    def card_hour_line(self, lang: Lang) -> CardHourLine | None:
        """The compute line of a card-hour offer in ``lang``; None for other pricing."""
        line = self.lines.get(lang)
        if line is None and self.card_hour is not None:
            line = self.lines[lang] = CardHourLine(self.card_hour, self.gpu_name, self.price_text, lang)
        return line


def offer_parts(tables: OfferTables, index: int, catalog: GpuCatalog) -> OfferParts:
    """Row ``index``'s parts, made on first use (the catalog is held in the key, so its id stays its own)."""
    return _PARTS.of(tables.memos).get((index, catalog), lambda: OfferParts(tables, index, catalog))


# The parts of the offers quoted lately, per snapshot: a response returns a dozen quotes.
_PARTS: MemoSlot[tuple[int, GpuCatalog], OfferParts] = MemoSlot("offer parts", size=4096)


def _card_hour_reference(tables: OfferTables, index: int) -> Offer | None:
    for candidates in (tables.same_vendor_card_hour, tables.market_card_hour):
        reference = int(candidates[index])
        if reference != NO_OFFER:
            return tables.offers[reference]
    return None


def _break_even_hours(offer: Offer, reference: Offer | None) -> float | None:
    """Hours of use per period past which a term package costs less than the card-hour price."""
    if not isinstance(offer.pricing, TermPricing) or reference is None:
        return None
    if not isinstance(reference.pricing, CardHourPricing):  # pragma: no cover - tables pick card-hours
        return None
    return offer.pricing.cny_per_period / (offer.pricing.cards * reference.pricing.cny_per_card_hour)
