"""Line items of a quote's expected bill, adding up to the expected cost the quote shows.

Each item is rounded half-up to the fen; the compute line takes whatever rounding difference is left, so
the items always add up to the total the quote shows (``total_cny``, already rounded).

A bundle bought from a vendor that also sells the same GPU by the card-hour shows the saving: a compute
line with what that card-hour offer would bill for the same cards and wall-clock hours, at its own
granularity and minimum, and a negative discount line (44 h on 4 cards is 14.67 h: 4 × ¥6.00 × 14.67 h
by the minute = ¥352.00, the bundle bills 15 h × ¥22.00 = ¥330.00, discount −¥22.00, 6.25 % off).
Without a card-hour offer of the same vendor and GPU there is nothing the vendor would otherwise bill,
so one compute line (no discount against another vendor's price).

A combined plan (``pricing`` "mixed") has a line per part: each package period bought, then the
card-hours for the rest.
"""

from __future__ import annotations

import numpy as np

from schemas.offer import BundlePricing, CardHourPricing, NodeHourPricing, Offer, TermPricing
from schemas.quote import Lang, LineItem, LineItemKind
from service.quote.assemble.figures import ExpectedBill
from service.quote.base.money import cents, format_cny, round_cny
from service.quote.model.billing import PERIOD_HOURS, billed_hours
from service.quote.model.plans import Combination, MixedPlan
from service.quote.prose.texts import hours_text, number_text, partial_text, text

__all__ = ["CardHourLine", "line_items", "mixed_line_items"]


def _compute(description: str, total_cny: float, others: tuple[LineItem, ...] = ()) -> LineItem:
    """The compute line: the amount that makes the rounded items add up to the rounded total."""
    taken = sum(cents(item.amount_cny) for item in others) if others else 0
    rest = (cents(total_cny) - taken) / 100
    return LineItem(kind="compute", description=description, amount_cny=rest)


class CardHourLine:
    """A card-hour offer's compute line in one language, its GPU and price already written in: a quote's
    line is then one ``str.format`` with its cards and billed hours (made per offer, ``_quote_parts``)."""

    __slots__ = ("min_billed_hours", "minimum", "template")

    def __init__(self, pricing: CardHourPricing, gpu_name: str, price: str, lang: Lang) -> None:
        self.template = partial_text("item_card_hour", lang, ("cards", "hours"), gpu=gpu_name, price=price)
        self.min_billed_hours = pricing.min_billed_hours
        self.minimum = text("item_minimum", lang, hours=hours_text(pricing.min_billed_hours))

    def items(self, cards: int, bill: ExpectedBill, total_cny: float) -> list[LineItem]:
        """The one compute line; ``total_cny`` is the quote's cost as shown (already rounded to the fen)."""
        description = self.template.format(cards=cards, hours=hours_text(bill.billed_hours))
        if self.min_billed_hours > 0 and bill.billed_hours == self.min_billed_hours:
            description += self.minimum
        return [LineItem(kind="compute", description=description, amount_cny=total_cny)]


def _node_hour(
    pricing: NodeHourPricing, price: str, bill: ExpectedBill, total_cny: float, lang: Lang
) -> list[LineItem]:
    nodes, hours = bill.units, hours_text(bill.billed_hours)
    premiums: tuple[tuple[LineItemKind, str, float], ...] = (
        ("network", "item_network", pricing.network_premium_cny_per_node_hour),
        ("storage", "item_storage", pricing.storage_cny_per_node_hour),
    )
    extras = tuple(
        LineItem(
            kind=kind,
            description=text(key, lang, nodes=nodes, price=format_cny(price), hours=hours),
            amount_cny=round_cny(nodes * price * bill.billed_hours),
        )
        for kind, key, price in premiums
        if price > 0
    )
    node = {"nodes": nodes, "node_cards": pricing.cards_per_node, "price": price}
    return [_compute(text("item_node", lang, hours=hours, **node), total_cny, extras), *extras]


def _bundle(
    offer: Offer,
    pricing: BundlePricing,
    price: str,
    cards: int,
    bill: ExpectedBill,
    total_cny: float,
    reference: Offer | None,
    lang: Lang,
    wall_clock_hours: float,
    gpu_name: str,
) -> list[LineItem]:
    hours = hours_text(bill.billed_hours)
    fields = {"bundles": bill.units, "bundle_cards": pricing.cards, "price": price}
    if reference is not None and isinstance(reference.pricing, CardHourPricing):
        card_hour_price = reference.pricing.cny_per_card_hour
        # What the card-hour offer itself would bill for the same run: its granularity, its minimum.
        list_hours = float(
            billed_hours(
                np.array([wall_clock_hours]),
                np.array([reference.pricing.granularity_s / 3600]),
                np.array([reference.pricing.min_billed_hours]),
            )[0]
        )
        list_cny = cards * card_hour_price * list_hours
        if cents(list_cny) > cents(total_cny):
            percent = number_text((1 - bill.cost_cny / list_cny) * 100)
            listed = LineItem(
                kind="compute",
                description=text(
                    "item_bundle_list",
                    lang,
                    cards=cards,
                    gpu=gpu_name,
                    price=format_cny(card_hour_price),
                    reference=reference.id,
                    hours=hours_text(list_hours),
                ),
                amount_cny=round_cny(list_cny),
            )
            discount = LineItem(
                kind="discount",
                description=text("item_bundle_discount", lang, percent=percent, **fields),
                amount_cny=(cents(total_cny) - cents(list_cny)) / 100,
            )
            return [listed, discount]
    return [_compute(text("item_bundle", lang, hours=hours, **fields), total_cny)]


def _term(
    pricing: TermPricing, price: str, bill: ExpectedBill, total_cny: float, lang: Lang
) -> list[LineItem]:
    description = text(
        "item_term",
        lang,
        units=bill.units,
        period=text(f"period_{pricing.period}", lang),
        unit_cards=pricing.cards,
        price=price,
        periods=number_text(bill.billed_hours / PERIOD_HOURS[pricing.period]),
        hours=hours_text(bill.billed_hours),
    )
    return [_compute(description, total_cny)]


def mixed_line_items(
    plan: MixedPlan,
    offers: tuple[Offer, ...],
    cards: int,
    combination: Combination,
    total_cny: float,
    lang: Lang,
    gpu_name: str,
) -> list[LineItem]:
    """A combined plan's lines: each package period bought, then the card-hours for the rest; the last
    line takes the rounding difference, so the lines add up to ``total_cny``."""
    parts: list[tuple[str, float]] = []
    for package, count in zip(plan.packages, combination.package_counts, strict=True):
        if count:
            description = text(
                "item_mixed_package",
                lang,
                units=combination.units,
                period=text(f"period_{package.period}", lang),
                unit_cards=plan.unit_cards,
                price=format_cny(package.cny_per_period),
                periods=count,
                hours=hours_text(count * package.period_hours),
                offer=offers[package.row].id,
            )
            parts.append((description, combination.units * count * package.cny_per_period))
    if combination.card_hours_billed > 0 and plan.hourly_row is not None:
        hourly = offers[plan.hourly_row]
        description = text(
            "item_mixed_hourly",
            lang,
            cards=cards,
            gpu=gpu_name,
            price=format_cny(plan.cny_per_card_hour),
            hours=hours_text(combination.card_hours_billed),
            offer=hourly.id,
        )
        parts.append((description, cards * plan.cny_per_card_hour * combination.card_hours_billed))
    items = tuple(LineItem(kind="compute", description=d, amount_cny=round_cny(a)) for d, a in parts[:-1])
    return [*items, _compute(parts[-1][0], total_cny, items)]


def line_items(
    offer: Offer,
    cards: int,
    bill: ExpectedBill,
    *,
    total_cny: float,
    card_hour_reference: Offer | None,
    lang: Lang,
    gpu_name: str,
    price: str,
    wall_clock_hours: float = 0.0,
) -> list[LineItem]:
    """The expected bill's lines for ``cards`` cards of ``offer`` (called ``gpu_name``, as people write it,
    its list price ``price`` as text), adding up to ``total_cny``."""
    pricing = offer.pricing
    match pricing:
        case CardHourPricing():
            return CardHourLine(pricing, gpu_name, price, lang).items(cards, bill, total_cny)
        case NodeHourPricing():
            return _node_hour(pricing, price, bill, total_cny, lang)
        case BundlePricing():
            return _bundle(
                offer,
                pricing,
                price,
                cards,
                bill,
                total_cny,
                card_hour_reference,
                lang,
                wall_clock_hours,
                gpu_name,
            )
        case TermPricing():
            return _term(pricing, price, bill, total_cny, lang)
    raise TypeError(f"unknown pricing variant {type(pricing).__name__}")  # pragma: no cover
