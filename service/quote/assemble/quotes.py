"""The ``Quote`` structs for the chosen candidates: ranges, bill, line items, warnings and notes.

Only the few quotes a response returns are built here, in Python, each once with its final line items
and warnings: figures from ``figures`` (gathered from the evaluation, never billed again), line items
from the offer's pricing kind (``model.pricing``; a combined plan's from ``lines``), the quote's own
warnings from ``warnings``, then the derivation notes and data fees from ``notes``. Each quote comes
with its warnings as ``Message``s, so the summary picks among them by message id.

Ranges: hours low/expected/high come from speed-up high/expected/low; each bound's cost is billed on its
own hours (rounded up to the granularity), so the cost range is as honest as the time range, and the
high end includes a bad-luck count of interruptions (``interruptions``). Hours converted from another
GPU model carry the conversion's range as well, and a warning naming where it comes from: the catalog's
sources or the caller's measured ratio. A spot quote's compute line says it is spot / interruptible, and
every quote lists its risks: a high end past the deadline or budget, spot capacity.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import msgspec

from schemas.quote import HeldBackPrice, LineItem, Quote, QuoteRequest, Risk
from service.quote.assemble.context import QuoteContext
from service.quote.assemble.copy import rent_lines
from service.quote.assemble.facts import city_assumed_warning, held_back
from service.quote.assemble.figures import QuoteFigures, gather_figures
from service.quote.assemble.growth import growth, growth_note
from service.quote.assemble.interruptions import QuoteInterruptions, interruptions_of
from service.quote.assemble.lines import mixed_line_items
from service.quote.assemble.notes import fee_items, quote_notes
from service.quote.assemble.parts import offer_parts
from service.quote.assemble.pieces import piece_fields, piece_notes
from service.quote.assemble.warnings import quote_warnings
from service.quote.base.money import round_cny, round_hours
from service.quote.model.billing import ExpectedBill
from service.quote.model.plans import cheapest_combination
from service.quote.model.pricing import LineSheet
from service.quote.prose.names import gpu_name
from service.quote.prose.texts import Message

__all__ = ["BuiltQuote", "build_quotes", "quote_id"]


class BuiltQuote(NamedTuple):
    quote: Quote
    warnings: list[Message]  # ``quote.warnings`` with the message each was written from


def quote_id(offer_id: str, cards: int) -> str:
    """``<offer id>@<cards>``: stable for the same offer and card count."""
    return f"{offer_id}@{cards}"


def _risks(request: QuoteRequest, figures: QuoteFigures, *, spot: bool, lead_time_h: float) -> list[Risk]:
    """What can go wrong with the quote: its high end (after the vendor's lead time) past the deadline,
    its high end past the budget, spot capacity."""
    risks: list[Risk] = []
    if request.deadline_hours is not None and figures.hours.high + lead_time_h > request.deadline_hours:
        risks.append("deadline")
    if request.budget_cny is not None and figures.cost_cny.high > request.budget_cny:
        risks.append("budget")
    if spot:
        risks.append("spot")
    return risks


def _spot_lines(context: QuoteContext, breakdown: list[LineItem]) -> list[LineItem]:
    """The line items of a spot quote: its compute line says the capacity is spot / interruptible."""
    label = context.word("item_spot")
    at = next(i for i, item in enumerate(breakdown) if item.kind == "compute")
    labelled = msgspec.structs.replace(breakdown[at], description=label + breakdown[at].description)
    return [*breakdown[:at], labelled, *breakdown[at + 1 :]]


def _offer_facts(
    context: QuoteContext, index: int, cards: int, figures: QuoteFigures, warnings: list[Message]
) -> HeldBackPrice | None:
    """Said first among ``warnings``: a held-back price (returned for the quote) and a city assumed."""
    first = []
    held = held_back(context, index, cards, figures.raw_hours_expected)
    if held is not None:
        first.append(held[1])
    assumed = city_assumed_warning(context, index)
    if assumed is not None:
        first.append(assumed)
    warnings[:0] = first
    return None if held is None else held[0]


def _with_notes(
    context: QuoteContext,
    index: int,
    column: int,
    cards: int,
    nodes: int,
    figures: QuoteFigures,
    breakdown: list[LineItem],
    warnings: list[Message],
) -> tuple[list[LineItem], list[Message]]:
    """The line items with the data fees, the warnings followed by the derivation notes."""
    warnings.extend(piece_notes(context, index, cards, figures.raw_hours_expected))
    warnings.extend(quote_notes(context, index, column, cards, nodes, figures.speedup))
    if context.resolved.request.workload.dataset_gb:
        breakdown = fee_items(context, index, column, breakdown)
    return breakdown, warnings


def _mixed_quote(
    context: QuoteContext,
    index: int,
    column: int,
    rank: int,
    figures: QuoteFigures,
    interruptions: QuoteInterruptions,
) -> BuiltQuote:
    """A combined plan's quote: under its longest-period package's offer id, a line per part."""
    tables, evaluation = context.tables, context.evaluation
    cards = evaluation.counts[column]
    plan, offer = tables.plans[index - tables.offer_count].at(cards), tables.offers[index]
    combination = cheapest_combination(plan, cards, figures.raw_hours_expected)
    billed = combination.billed_hours(plan)
    total = figures.cost_cny.expected
    bill = ExpectedBill(
        units=combination.units,
        billed_cards=combination.billed_cards,
        billed_hours=billed,
        hourly_rate_cny=total / billed,
        cost_cny=figures.bill.cost_cny,
    )
    nodes = _nodes(context, index, column, combination.units)
    breakdown, warnings = _with_notes(
        context,
        index,
        column,
        cards,
        nodes,
        figures,
        mixed_line_items(
            plan, tables.offers, cards, combination, total, context.lang, gpu_name(offer.gpu, context.catalog)
        ),
        quote_warnings(
            context, index, cards, msgspec.structs.replace(figures, bill=bill), interruptions.warnings
        ),
    )
    grown = growth(context, index, cards, figures.raw_hours_expected)
    if grown is not None:
        warnings.append(growth_note(grown, context.lang))
    held = _offer_facts(context, index, cards, figures, warnings)
    quote = Quote(
        id=quote_id(f"{offer.id}+mixed", cards),
        held_back=held,
        rank=rank,
        **{
            **offer_parts(tables, index, context.catalog).fields,
            "pricing": "mixed",
            "lead_time_h": float(tables.lead_time_h[index]) or None,  # the longest of its parts'
        },
        **piece_fields(context, index, cards),
        growth=grown,
        cards=cards,
        nodes=nodes,
        billed_cards=bill.billed_cards,
        speedup=figures.speedup,
        hours=figures.hours,
        cost_cny=figures.cost_cny,
        billed_hours=round_hours(billed),
        hourly_rate_cny=round_cny(bill.hourly_rate_cny),
        effective_card_hour_cny=figures.effective_card_hour_cny,
        breakdown=breakdown,
        warnings=[message.text for message in warnings],
        stale=bool(evaluation.stale[index]),
        value_cny=figures.value_cny,
        interruptions=interruptions.figures,
        risks=_risks(
            context.resolved.request, figures, spot=False, lead_time_h=float(tables.lead_time_h[index])
        ),
    )
    return BuiltQuote(quote, warnings)


def _nodes(context: QuoteContext, index: int, column: int, units: int) -> int:
    """The machines (or cluster nodes) a candidate takes: a placement's (replicas, runs over several
    machines of one offer), else a cluster's nodes, else one machine."""
    machines = context.evaluation.machines
    if machines is not None:
        return int(machines[context.evaluation.cell(column, index)])
    return units if context.tables.terms[index].spans_machines else 1


def _quote(
    context: QuoteContext,
    index: int,
    column: int,
    rank: int,
    figures: QuoteFigures,
    interruptions: QuoteInterruptions,
) -> BuiltQuote:
    """The quote for offer ``index`` at card count ``evaluation.counts[column]``."""
    tables = context.tables
    if index >= tables.offer_count:
        return _mixed_quote(context, index, column, rank, figures, interruptions)
    offer, evaluation = tables.offers[index], context.evaluation
    parts = offer_parts(tables, index, context.catalog)
    cards, expected = evaluation.counts[column], figures.bill
    nodes = _nodes(context, index, column, expected.units)
    sheet = LineSheet(cards, expected, figures.cost_cny.expected, figures.raw_hours_expected)
    spot = tables.terms[index].interruptible
    lines = rent_lines(context, index, sheet, parts.writer(context.lang))
    breakdown, warnings = _with_notes(
        context,
        index,
        column,
        cards,
        nodes,
        figures,
        _spot_lines(context, lines) if spot else lines,
        quote_warnings(context, index, cards, figures, interruptions.warnings),
    )
    grown = growth(context, index, cards, figures.raw_hours_expected)
    if grown is not None:
        warnings.append(growth_note(grown, context.lang))
    held = _offer_facts(context, index, cards, figures, warnings)
    quote = Quote(
        **parts.quote_fields,
        held_back=held,
        **piece_fields(context, index, cards),
        growth=grown,
        id=quote_id(offer.id, cards),
        rank=rank,
        cards=cards,
        nodes=nodes,
        billed_cards=expected.billed_cards,
        speedup=figures.speedup,
        hours=figures.hours,
        cost_cny=figures.cost_cny,
        billed_hours=figures.billed_hours,
        hourly_rate_cny=figures.hourly_rate_cny,
        effective_card_hour_cny=figures.effective_card_hour_cny,
        breakdown=breakdown,
        warnings=[message.text for message in warnings],
        stale=bool(evaluation.stale[index]),
        value_cny=figures.value_cny,
        interruptions=interruptions.figures,
        risks=_risks(
            context.resolved.request, figures, spot=spot, lead_time_h=float(tables.lead_time_h[index])
        ),
    )
    return BuiltQuote(quote, warnings)


def build_quotes(context: QuoteContext, chosen: Sequence[tuple[int, int, int]]) -> list[BuiltQuote]:
    """The quotes for ``(offer index, count column, rank)`` triples, in the order given."""
    if not chosen:
        return []
    offers, columns, _ = zip(*chosen, strict=True)
    time_value = context.resolved.request.time_value_cny_per_hour
    figures = gather_figures(context.evaluation, context.tables, time_value, offers, columns)
    counts = context.evaluation.counts
    interruptions = interruptions_of(context, offers, [counts[column] for column in columns], figures)
    return [
        _quote(context, index, column, rank, shown, interrupted)
        for (index, column, rank), shown, interrupted in zip(chosen, figures, interruptions, strict=True)
    ]
