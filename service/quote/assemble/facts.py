"""What an operator sees about a quote's offer that the quote must say too: a held-back price, a city assumed.

- A price the vendor's feed moved past the quarantine threshold is held back until a second refresh
  confirms it (``service.refresh.quarantine``); the offer keeps its previous price. Its quotes are at
  that price, and say first what the feed now asks and what the quote costs at it (``HeldBackPrice``), so
  a person sees the ¥1,400 the vendor will charge, not only the ¥650 served.
- An offer whose zone names no city the service knows keeps the vendor's city (``Offer.city_assumed``):
  its quotes say so, since the data-locality rule and the city filter rest on it.
"""

from __future__ import annotations

import math

from schemas.offer import Pricing, headline_price_cny
from schemas.quote import HeldBackPrice, Lang
from schemas.vendor import QuarantinedPrice
from service.ages import age_text
from service.names import place_display_name
from service.quote.assemble.context import QuoteContext
from service.quote.base.money import format_cny, round_cny
from service.quote.model.billing import billed_hours_of
from service.quote.model.pricing import rule_of
from service.quote.prose.texts import Message, said, text

__all__ = ["city_assumed_warning", "held_back"]


def _held_part(context: QuoteContext, index: int) -> QuarantinedPrice | None:
    """The held-back price of the offer at row ``index``, or of the first part of a combined plan."""
    tables = context.tables
    if not context.held:
        return None
    rows = (index,) if index < tables.offer_count else tables.plans[index - tables.offer_count].rows
    return next(
        (context.held[tables.offers[row].id] for row in rows if tables.offers[row].id in context.held), None
    )


def _cost_at(pricing: Pricing, cards: int, hours: float) -> float:
    """What ``cards`` cards for ``hours`` cost billed as ``pricing`` bills (one rental)."""
    terms = rule_of(pricing).terms(pricing)
    units = max(terms.min_units, math.ceil(cards / terms.unit_cards))
    return (
        units
        * terms.unit_rate_cny_per_hour
        * billed_hours_of(hours, terms.granularity_hours, terms.min_billed_hours)
    )


def _price_text(pricing: Pricing, lang: Lang) -> str:
    return rule_of(pricing).price_text(pricing, format_cny(headline_price_cny(pricing)), lang)


def held_back(
    context: QuoteContext, index: int, cards: int, hours: float
) -> tuple[HeldBackPrice, Message] | None:
    """The held-back price of offer ``index`` and the warning said first, for ``cards`` cards over the
    quote's expected wall-clock ``hours``; None when its price is served as the feed gives it."""
    held = _held_part(context, index)
    if held is None:
        return None
    lang = context.lang
    same_shape = index < context.tables.offer_count and type(held.pricing) is type(held.previous)
    cost = _cost_at(held.pricing, cards, hours) if same_shape else None
    figure = HeldBackPrice(
        offer_id=held.offer_id,
        price_cny=headline_price_cny(held.pricing),
        previous_cny=headline_price_cny(held.previous),
        change_ratio=held.change_ratio,
        seen_at=held.seen_at,
        cost_cny=None if cost is None else round_cny(cost),
    )
    rising = figure.price_cny > figure.previous_cny
    message = said(
        "warn_held_price",
        lang,
        offer=held.offer_id,
        price=_price_text(held.pricing, lang),
        previous=_price_text(held.previous, lang),
        change=("+" if rising else "−") + f"{round(100 * held.change_ratio):,} %",
        age=age_text(context.now_s - held.seen_at.timestamp(), lang),
        at_new="" if cost is None else text("held_at_new", lang, cost=format_cny(cost)),
    )
    return figure, message


def city_assumed_warning(context: QuoteContext, index: int) -> Message | None:
    """The warning of an offer placed in its vendor's city because its zone names no city known."""
    offer = context.tables.offers[index]
    if not offer.city_assumed:
        return None
    return said(
        "warn_city_assumed",
        context.lang,
        zone=offer.zone,
        city=place_display_name(offer.city, context.lang),
    )
