"""包日/包周/包月 — a prepaid package: whole periods, per card (cards = 1) or per machine (cards = N).

The unit is one package: n per-card packages (at most its most units) or one machine package holding n
cards; billed hours are whole periods (day 24 h, week 168 h, month 720 h), and the rate is the period
price spread over the period, so whole periods times the rate is the package price. A per-machine package
rents one machine: separately rented machines promise no interconnect between them.
"""

from __future__ import annotations

from schemas.offer import PERIOD_HOURS, TermPricing
from schemas.quote import Lang, LineItem
from service.quote.model.billing import BillingTerms
from service.quote.model.pricing.base import LineSheet, OfferWords, Prepaid, PricingRule, compute_line
from service.quote.prose.texts import hours_text, number_text, text

__all__ = ["TermRule"]


class TermRule(PricingRule[TermPricing]):
    kind = "term"

    def price_text(self, pricing: TermPricing, price: str, lang: Lang) -> str:
        return text("price_per_period", lang, price=price, period=text(f"period_{pricing.period}", lang))

    def terms(self, pricing: TermPricing) -> BillingTerms:
        period_hours = PERIOD_HOURS[pricing.period]
        per_card = pricing.cards == 1
        return BillingTerms(
            unit_cards=pricing.cards,
            min_units=1,
            max_units=pricing.max_units if per_card else 1,
            whole_units_only=False,
            unit_rate_cny_per_hour=pricing.cny_per_period / period_hours,
            granularity_hours=period_hours,
            min_billed_hours=0.0,
            machine_cards=pricing.max_units if per_card else pricing.cards,
            spans_machines=False,
            most_units=pricing.max_units,
        )

    def lines(self, pricing: TermPricing, words: OfferWords, sheet: LineSheet) -> list[LineItem]:
        bill, lang = sheet.bill, words.lang
        description = text(
            "item_term",
            lang,
            units=bill.units,
            period=text(f"period_{pricing.period}", lang),
            unit_cards=pricing.cards,
            price=words.price_text,
            periods=number_text(bill.billed_hours / PERIOD_HOURS[pricing.period]),
            hours=hours_text(bill.billed_hours),
        )
        return [compute_line(description, sheet.total_cny)]

    def package(self, pricing: TermPricing) -> Prepaid:
        return Prepaid(period=pricing.period, cny_per_period=pricing.cny_per_period, cards=pricing.cards)

    def break_even_hours(self, pricing: TermPricing, card_hour_cny: float) -> float:
        return pricing.cny_per_period / (pricing.cards * card_hour_cny)
