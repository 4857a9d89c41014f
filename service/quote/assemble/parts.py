"""What a returned quote copies from its offer, worked out once per offer and catalog.

Every quote of an offer repeats the same words and figures whatever the request: the offer's fields, its
GPU's display name, its list price as text, the card-hour offer its line items and break-even compare
against. A snapshot's offers never change, so these are kept beside its tables
(``OfferTables.memos``), for the offers quoted lately.
"""

from __future__ import annotations

from typing import Any

from adapters.gpus import GpuCatalog
from schemas.offer import Offer, headline_price_cny, pricing_kind
from schemas.quote import Lang
from service.quote.base.memo import MemoSlot
from service.quote.base.money import format_cny, round_hours
from service.quote.model.pricing import LineWriter, OfferWords, rule_of
from service.quote.model.tables import NO_OFFER, OfferTables
from service.quote.prose.names import gpu_name

__all__ = ["OfferParts", "offer_parts"]


class OfferParts:
    """One offer's parts of a quote: ``fields`` are the ``Quote`` keyword arguments every quote of the
    offer repeats (``pricing`` is the offer's own: a combined plan's quote says ``mixed``)."""

    __slots__ = (
        "_offer",
        "_writers",
        "fields",
        "gpu_name",
        "price_text",
        "quote_fields",
        "reference",
        "reference_rate",
        "rule",
    )

    def __init__(self, tables: OfferTables, index: int, catalog: GpuCatalog) -> None:
        offer = self._offer = tables.offers[index]
        pricing = offer.pricing
        self.rule = rule_of(pricing)
        reference = _card_hour_reference(tables, index)
        reference_rate = (
            None if reference is None else rule_of(reference.pricing).card_hour_rate(reference.pricing)
        )
        break_even = (
            None
            if reference_rate is None
            else self.rule.break_even_hours(pricing, reference_rate.cny_per_card_hour)
        )
        prepaid = self.rule.package(pricing)
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
            "lead_time_h": offer.lead_time_h or None,
            "zone": offer.zone,
            "city_assumed": offer.city_assumed,
            "spot": tables.terms[index].interruptible,
        }
        self.gpu_name = gpu_name(offer.gpu, catalog)
        self.price_text = format_cny(headline_price_cny(offer.pricing))
        # Line items compare a bundle with the same vendor's card-hours only (``model.pricing.bundle``).
        same_vendor = reference is not None and reference.vendor == offer.vendor
        self.reference = reference if same_vendor else None
        self.reference_rate = reference_rate if same_vendor else None
        # The line writer, by language (made on first use).
        self._writers: dict[Lang, LineWriter] = {}
        # Its own quotes add the package's terms (a combined plan's quote is the plan's, not the package's).
        self.quote_fields: dict[str, Any] = {
            **self.fields,
            "term_period": None if prepaid is None else prepaid.period,
            "break_even_hours": None if break_even is None else round_hours(break_even),
        }

    def writer(self, lang: Lang) -> LineWriter:
        """This offer's line writer in ``lang``."""
        writer = self._writers.get(lang)
        if writer is None:
            offer = self._offer
            words = OfferWords(
                offer, self.reference, self.reference_rate, self.gpu_name, self.price_text, lang
            )
            writer = self._writers[lang] = self.rule.writer(offer.pricing, words)
        return writer


def offer_parts(tables: OfferTables, index: int, catalog: GpuCatalog) -> OfferParts:
    """Row ``index``'s parts, made on first use (the catalog is held in the key, so its id stays its own)."""
    memo, key = _PARTS.of(tables.memos), (index, catalog)
    return memo.lookup(key) or memo.keep(key, OfferParts(tables, index, catalog))


# The parts of the offers quoted lately, per snapshot: a response returns a dozen quotes.
_PARTS: MemoSlot[tuple[int, GpuCatalog], OfferParts] = MemoSlot("offer parts", size=4096)


def _card_hour_reference(tables: OfferTables, index: int) -> Offer | None:
    for candidates in (tables.same_vendor_card_hour, tables.market_card_hour):
        reference = int(candidates[index])
        if reference != NO_OFFER:
            return tables.offers[reference]
    return None
