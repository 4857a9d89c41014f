"""Cards billed but idle: why, and when the billed count itself is the better plan.

An offer that rents whole nodes or machines bills cards the job does not use (twelve cards on a cluster
that rents 16-card minimums, three cards of a machine rented whole). Running on every billed card costs
the same units for fewer hours wherever the job speeds up with them, so the warning says what the billed
count takes and costs when that is no more money and less time: the caller then asks for it.
"""

from __future__ import annotations

from service.quote.assemble.context import QuoteContext
from service.quote.assemble.figures import QuoteFigures
from service.quote.base.money import cents, format_cny
from service.quote.evaluate.locality import copy_hours
from service.quote.model.billing import billed_hours_of
from service.quote.model.pricing import rule_of
from service.quote.prose.texts import Message, hours_text, said, text

__all__ = ["idle_warning"]

_SOONER_H = 0.005  # finishing sooner by less than the hundredth of an hour the quotes show is not sooner


def _on_billed_cards(context: QuoteContext, index: int, figures: QuoteFigures) -> str:
    """The clause saying what every billed card takes and costs, when that is no dearer and sooner."""
    tables, evaluation, resolved = context.tables, context.evaluation, context.resolved
    bill, terms = figures.bill, tables.terms[index]
    billed = bill.billed_cards
    placed = evaluation.machines is not None
    if index >= tables.offer_count or placed or not resolved.kind.shortened_by_cards:
        return ""
    if billed > min(terms.max_cards, float(tables.available_cards[index])):
        return ""
    column = evaluation.scaling.columns[int(evaluation.scaling.code[index])]
    hours = float(evaluation.one_card_hours.expected[index]) / column.speedup(billed).expected
    dataset_gb = resolved.request.workload.dataset_gb
    remote = evaluation.remote
    if dataset_gb and remote is not None and remote[index]:
        hours += copy_hours(dataset_gb, context.cross_city_mbps)
    cost = bill.hourly_rate_cny * billed_hours_of(hours, terms.granularity_hours, terms.min_billed_hours)
    rent = bill.hourly_rate_cny * bill.billed_hours
    if hours > figures.raw_hours_expected - _SOONER_H or cost > rent + 1e-9:
        return ""
    key = "idle_billed_cheaper" if cents(cost) < cents(rent) else "idle_billed_sooner"
    return text(key, context.lang, billed=billed, hours=hours_text(hours), cost=format_cny(cost))


def idle_warning(context: QuoteContext, index: int, cards: int, figures: QuoteFigures) -> Message | None:
    """The idle-cards warning of offer ``index`` at ``cards`` cards, or None when every billed card works."""
    bill = figures.bill
    idle = bill.billed_cards - cards
    if idle <= 0:
        return None
    lang = context.lang
    offer = context.tables.offers[index]
    why = rule_of(offer.pricing).idle_reason(offer.pricing, bill, lang)
    better = _on_billed_cards(context, index, figures)
    written = said("warn_idle", lang, idle=idle, billed=bill.billed_cards, why=why + better)
    # Told among the summary's first caveats when the billed count is the better plan: it changes it.
    return Message("warn_idle_better", written.text) if better else written
