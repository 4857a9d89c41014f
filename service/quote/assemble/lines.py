"""A combined plan's line items (``pricing`` "mixed"): a line per part, adding up to the quote's cost.

Each package period bought, then the card-hours for the rest; every item is rounded half-up to the fen and
the last line takes whatever rounding difference is left, so the items add up to the total the quote
shows. An offer's own line items are its pricing kind's (``model.pricing``).
"""

from __future__ import annotations

from schemas.offer import Offer
from schemas.quote import Lang, LineItem
from service.quote.base.money import format_cny, round_cny
from service.quote.model.plans import Combination, MixedPlan
from service.quote.model.pricing.base import compute_line
from service.quote.prose.texts import billed_time_text, hours_text, text

__all__ = ["mixed_line_items"]


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
                units=combination.units * package.units,
                period=text(f"period_{package.period}", lang),
                unit_cards=package.unit_cards,
                price=format_cny(package.vendor_cny_per_period),
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
            hours=billed_time_text(combination.card_hours_billed, lang),
            offer=hourly.id,
        )
        parts.append((description, cards * plan.cny_per_card_hour * combination.card_hours_billed))
    items = tuple(LineItem(kind="compute", description=d, amount_cny=round_cny(a)) for d, a in parts[:-1])
    return [*items, compute_line(parts[-1][0], total_cny, items)]
