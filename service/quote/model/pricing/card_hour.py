"""按卡时 — per card-hour: cards × hours at one price, rounded up to the granularity, at least a minimum.

The unit is one card, at most a machine's cards; this is the price the other kinds are compared with
(a bundle's discount, a package's break-even).
"""

from __future__ import annotations

from schemas.offer import CardHourPricing
from schemas.quote import LineItem
from service.quote.model.billing import BillingTerms
from service.quote.model.pricing.base import CardHourRate, LineSheet, LineWriter, OfferWords, PricingRule
from service.quote.prose.texts import billed_time_text, hours_text, partial_text, text

__all__ = ["CardHourRule"]


class _CardHourWriter(LineWriter):
    """The one compute line with the GPU and price already written in: a quote's line is then one
    ``str.format`` with its cards and billed hours."""

    __slots__ = ("_lang", "_min_billed_hours", "_minimum", "_template")

    def __init__(self, rule: CardHourRule, pricing: CardHourPricing, words: OfferWords) -> None:
        super().__init__(rule, pricing, words)  # type: ignore[arg-type]
        lang = words.lang
        self._template = partial_text(
            "item_card_hour", lang, ("cards", "hours"), gpu=words.gpu_name, price=words.price_text
        )
        self._lang = lang
        self._min_billed_hours = pricing.min_billed_hours
        self._minimum = text("item_minimum", lang, hours=hours_text(pricing.min_billed_hours))

    def items(self, sheet: LineSheet) -> list[LineItem]:
        bill = sheet.bill
        description = self._template.format(
            cards=sheet.cards, hours=billed_time_text(bill.billed_hours, self._lang)
        )
        if self._min_billed_hours > 0 and bill.billed_hours == self._min_billed_hours:
            description += self._minimum
        return [LineItem(kind="compute", description=description, amount_cny=sheet.total_cny)]


class CardHourRule(PricingRule[CardHourPricing]):
    kind = "card_hour"

    def terms(self, pricing: CardHourPricing) -> BillingTerms:
        return BillingTerms(
            unit_cards=1,
            min_units=1,
            max_units=pricing.max_cards,
            whole_units_only=False,
            unit_rate_cny_per_hour=pricing.cny_per_card_hour,
            granularity_hours=pricing.granularity_s / 3600,
            min_billed_hours=pricing.min_billed_hours,
            machine_cards=pricing.max_cards,
            spans_machines=False,
        )

    def writer(self, pricing: CardHourPricing, words: OfferWords) -> LineWriter:
        return _CardHourWriter(self, pricing, words)

    def lines(self, pricing: CardHourPricing, words: OfferWords, sheet: LineSheet) -> list[LineItem]:
        return self.writer(pricing, words).items(sheet)

    def card_hour_rate(self, pricing: CardHourPricing) -> CardHourRate:
        return CardHourRate(
            cny_per_card_hour=pricing.cny_per_card_hour,
            granularity_hours=pricing.granularity_s / 3600,
            min_billed_hours=pricing.min_billed_hours,
        )
