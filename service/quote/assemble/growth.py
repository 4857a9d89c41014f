"""Whether a quote's offer carries the job grown by ``workload.growth_factor``, and at what cost.

Step 5 of the Shenzhen article's method: if the work doubles within months, a cluster adds nodes while a
single machine must be replaced. The grown job is the work (or the replicas, or the runs at once) times
the factor, on that many more cards of the same offer: it fits when one rental of the offer holds them
(its most cards and nodes) and its stock and most units do, or, for a job placed in pieces, when the
pieces place (``JobKind.placement``). Its hours follow the offer's speed-up at the grown count (the same
wall-clock hours for serving and for whole rounds of runs); its cost is billed as the offer bills them.
"""

from __future__ import annotations

import math

import numpy as np

from schemas.quote import Growth, Lang
from service.quote.assemble.context import QuoteContext
from service.quote.base.money import format_cny, round_cny, round_hours
from service.quote.model.billing import billed_hours_of
from service.quote.model.plans import cheapest_combination
from service.quote.prose.texts import Message, hours_text, number_text, said, text

__all__ = ["growth", "growth_note"]


def _grown_cards(context: QuoteContext, index: int, cards: int, factor: float) -> int:
    """The cards the grown job takes: its pieces times the factor, or its cards, in the offer's steps."""
    piece_cards = context.evaluation.piece_cards
    if piece_cards is not None:
        per_piece = float(piece_cards[index])
        return int(math.ceil(cards / per_piece * factor - 1e-9) * per_piece)
    step = float(context.tables.count_step[index])
    return int(math.ceil(cards * factor / step - 1e-9) * step)


def growth(context: QuoteContext, index: int, cards: int, hours: float) -> Growth | None:
    """The grown job on offer ``index`` (``hours``: the quote's expected wall-clock hours); None without a
    growth factor."""
    factor = context.resolved.request.workload.growth_factor
    if factor is None:
        return None
    tables, evaluation, resolved = context.tables, context.evaluation, context.resolved
    grown = _grown_cards(context, index, cards, factor)
    terms = tables.terms[index]
    placed = resolved.kind.placement(tables, resolved.job, evaluation.min_cards, np.array([float(grown)]))
    if placed is None:
        units = max(terms.min_units, math.ceil(grown / terms.unit_cards))
        rental_ok = units <= terms.max_units
    else:
        units = int(placed[0][0, index])
        rental_ok = bool(placed[1][0, index])
    stock = float(tables.available_cards[index])
    fits = rental_ok and units * terms.unit_cards <= stock and units <= float(tables.most_units[index])
    if not fits:
        most = min(
            terms.max_cards if placed is None else math.inf,
            stock,
            float(tables.most_units[index]) * terms.unit_cards,
        )
        why = text(
            "growth_short", context.lang, cards=grown, most=int(most) if math.isfinite(most) else grown
        )
        return Growth(factor=factor, cards=grown, fits=False, why=why)
    grown_hours = hours
    if resolved.kind.shortened_by_cards and placed is None:
        column = evaluation.scaling.columns[int(evaluation.scaling.code[index])]
        one_card = float(evaluation.one_card_hours.expected[index]) * factor
        grown_hours = one_card / column.speedup(grown).expected
    if index >= tables.offer_count:
        plan = tables.plans[index - tables.offer_count].at(grown)
        cost = cheapest_combination(plan, grown, grown_hours).cost_cny
    else:
        billed = billed_hours_of(grown_hours, terms.granularity_hours, terms.min_billed_hours)
        cost = units * terms.unit_rate_cny_per_hour * billed
    return Growth(
        factor=factor, cards=grown, fits=True, hours=round_hours(grown_hours), cost_cny=round_cny(cost)
    )


def growth_note(grown: Growth, lang: Lang) -> Message:
    """What the growth means for the choice, said with the quote's other warnings."""
    factor = number_text(grown.factor)
    if grown.fits:
        return said(
            "note_growth_fits",
            lang,
            factor=factor,
            cards=grown.cards,
            hours=hours_text(grown.hours or 0.0),
            cost=format_cny(grown.cost_cny or 0.0),
        )
    return said("warn_growth_short", lang, factor=factor, why=grown.why)
