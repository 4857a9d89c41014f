"""What a pricing kind is to the engine: the one interface every variant of ``schemas.offer.Pricing`` has.

A kind says how an offer of its variant bills (``terms``: its units, rate, granularity and limits, the one
billing rule of ``model.billing``) and how that bill reads (``lines``: the line items of a returned quote,
adding up to its expected cost), plus the few facts other rules ask of an offer: the card-hour price a
bundle's discount and a package's break-even are measured against, the prepaid period a combined plan
joins, why billed cards sit idle. Everything else in the engine reads the terms, never the variant.

A new kind is a new ``Pricing`` variant in the schema, a module here with its ``PricingRule`` subclass,
a line in ``model.pricing.KINDS`` and its messages in ``prose.texts``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

import msgspec

from schemas.offer import Offer, Pricing, PricingKind, TermPeriod
from schemas.quote import Lang, LineItem
from service.quote.base.money import cents
from service.quote.model.billing import BillingTerms, ExpectedBill
from service.quote.prose.texts import text

__all__ = [
    "CardHourRate",
    "LineSheet",
    "LineWriter",
    "OfferWords",
    "Prepaid",
    "PricingRule",
    "compute_line",
]

P = TypeVar("P", bound=Pricing)


# Structs, not frozen dataclasses: a snapshot asks every offer for these, twice (a frozen dataclass takes
# a setattr per field to make, ten times a struct).
class CardHourRate(msgspec.Struct, frozen=True, gc=False):
    """A per-card-hour price and how it rounds: what other offers are compared against."""

    cny_per_card_hour: float
    granularity_hours: float
    min_billed_hours: float


class Prepaid(msgspec.Struct, frozen=True, gc=False):
    """A prepaid period a combined plan can buy whole: per unit of ``cards`` (1, or a machine's)."""

    period: TermPeriod
    cny_per_period: float
    cards: int


@dataclass(frozen=True, slots=True)
class OfferWords:
    """What one offer's line items say in one language whatever the quote: made once per offer."""

    offer: Offer
    reference: Offer | None  # the same vendor's card-hour offer for the GPU, when it sells one
    reference_rate: CardHourRate | None  # its price per card-hour
    gpu_name: str
    price_text: str  # the offer's list price as text
    lang: Lang


class LineSheet(msgspec.Struct, frozen=True, gc=False):
    """One quote's figures its line items show (a struct: one is made per returned quote)."""

    cards: int
    bill: ExpectedBill
    total_cny: float  # the quote's expected cost as shown (rounded to the fen): the items add up to it
    wall_clock_hours: float  # expected, unrounded


class LineWriter:
    """Writes one offer's line items in one language (``PricingRule.writer``), made once per offer."""

    __slots__ = ("_pricing", "_rule", "words")

    def __init__(self, rule: PricingRule[Pricing], pricing: Pricing, words: OfferWords) -> None:
        self._rule, self._pricing, self.words = rule, pricing, words

    def items(self, sheet: LineSheet) -> list[LineItem]:
        return self._rule.lines(self._pricing, self.words, sheet)


def compute_line(description: str, total_cny: float, others: tuple[LineItem, ...] = ()) -> LineItem:
    """The compute line: the amount that makes the rounded items add up to the rounded total."""
    taken = sum(cents(item.amount_cny) for item in others) if others else 0
    rest = (cents(total_cny) - taken) / 100
    return LineItem(kind="compute", description=description, amount_cny=rest)


class PricingRule(ABC, Generic[P]):
    """How offers priced by variant ``P`` bill, and how their bill reads."""

    kind: ClassVar[PricingKind]

    @abstractmethod
    def terms(self, pricing: P) -> BillingTerms:
        """The billing rule's parameters for ``pricing``."""

    @abstractmethod
    def lines(self, pricing: P, words: OfferWords, sheet: LineSheet) -> list[LineItem]:
        """The expected bill's line items, adding up to ``sheet.total_cny``."""

    def writer(self, pricing: P, words: OfferWords) -> LineWriter:
        """A writer of this offer's line items (a kind may write its words in once here)."""
        return LineWriter(self, pricing, words)  # type: ignore[arg-type]

    def card_hour_rate(self, pricing: P) -> CardHourRate | None:
        """The price per card-hour other offers of the GPU are compared with; None unless per card-hour."""
        del pricing
        return None

    def package(self, pricing: P) -> Prepaid | None:
        """The prepaid period a combined plan can join with card-hours; None unless prepaid."""
        del pricing
        return None

    def break_even_hours(self, pricing: P, card_hour_cny: float) -> float | None:
        """Hours of use per period past which the offer costs less than ``card_hour_cny`` per card-hour."""
        del pricing, card_hour_cny
        return None

    def price_text(self, pricing: P, price: str, lang: Lang) -> str:
        """``price`` (formatted) with the unit this kind prices in: "¥6.50 per card-hour"."""
        del pricing
        return text(f"price_per_{self.kind}", lang, price=price)

    def idle_reason(self, pricing: P, bill: ExpectedBill, lang: Lang) -> str:
        """Why cards billed beyond those asked for sit idle."""
        del pricing
        return text("why_machine", lang, billed=bill.billed_cards)
