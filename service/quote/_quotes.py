"""The ``Quote`` structs for the chosen candidates: ranges, bill, line items and warnings.

Only the few quotes a response returns are built here, in Python; the bulk arrays already decided which
and already hold every figure. The chosen candidates' figures are gathered from those arrays and rounded
together with ``cents_array``, the rounding the limits were checked with, so a quote shows exactly the
figures it was ranked and filtered on.

Ranges: hours low/expected/high come from speed-up high/expected/low; each bound's cost is billed on its
own hours (rounded up to the granularity), so the cost range is as honest as the time range. Hours
converted from another GPU model carry the conversion's range as well, and a warning naming where it
comes from: the catalog's sources or the caller's measured ratio.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from dataclasses import replace as replace_figures
from typing import Any

import numpy as np

from adapters.gpus import GpuCatalog
from schemas.offer import CardHourPricing, NodeHourPricing, Offer, TermPricing, pricing_kind
from schemas.quote import Lang, Quote, Range
from service.quote._billing import Bill
from service.quote._breakdown import line_items, mixed_line_items
from service.quote._evaluate import Evaluation, Figure
from service.quote._gpu_names import gpu_name
from service.quote._money import cents_array, format_cny, round_cny, round_hours
from service.quote._plans import cheapest_combination
from service.quote._resolve import ResolvedRequest
from service.quote._tables import NO_OFFER, OfferTables
from service.quote._texts import hours_text, number_text, text

__all__ = ["QuoteContext", "build_quotes", "quote_id"]


@dataclass(frozen=True, slots=True)
class QuoteContext:
    tables: OfferTables
    evaluation: Evaluation
    resolved: ResolvedRequest
    catalog: GpuCatalog
    now_s: float
    price_max_age_s: float
    lang: Lang
    # Sentences that depend only on the offer's GPU within one request (the conversion warning), worked
    # out for the first quote of each GPU and reused.
    by_gpu: dict[str, str] = field(default_factory=dict)


def quote_id(offer_id: str, cards: int) -> str:
    """``<offer id>@<cards>``: stable for the same offer and card count."""
    return f"{offer_id}@{cards}"


def _card_hour_reference(tables: OfferTables, index: int) -> Offer | None:
    for candidates in (tables.same_vendor_card_hour, tables.market_card_hour):
        reference = int(candidates[index])
        if reference != NO_OFFER:
            return tables.offers[reference]
    return None


def _break_even_hours(offer: Offer, reference: Offer | None) -> float | None:
    """Hours of use per period past which a term package costs less than the card-hour price."""
    if not isinstance(offer.pricing, TermPricing) or reference is None:
        return None
    if not isinstance(reference.pricing, CardHourPricing):  # pragma: no cover - tables pick card-hours
        return None
    return offer.pricing.cny_per_period / (offer.pricing.cards * reference.pricing.cny_per_card_hour)


@dataclass(frozen=True, slots=True)
class _Figures:
    """One chosen candidate's expected bill as computed, and its figures as the response shows them."""

    bill: Bill
    speedup: Range
    hours: Range
    cost_cny: Range
    billed_hours: float
    hourly_rate_cny: float
    effective_card_hour_cny: float
    value_cny: float | None
    raw_hours_expected: float
    raw_hours_high: float
    raw_cost_high: float


# Rows of the gathered figures: the three speed-ups, the evaluation's figures, then two derived ones.
_SPEEDUP = 0
_FIGURE = 3
_EFFECTIVE = _FIGURE + len(Figure)
_VALUE = _EFFECTIVE + 1


def _figures(context: QuoteContext, offers: Sequence[int], columns: Sequence[int]) -> list[_Figures]:
    """The figures of every chosen candidate, gathered from the evaluation and rounded in one pass."""
    evaluation, time_value = context.evaluation, context.resolved.request.time_value_cny_per_hour
    rows, counts = np.asarray(offers), np.asarray(columns)
    block = evaluation.figures[:, counts, rows]
    hours, cost = block[Figure.HOURS_EXPECTED], block[Figure.COST_EXPECTED]
    cards = np.asarray(evaluation.counts, dtype=np.float64)[counts]
    speedup_at = (counts, evaluation.machine_code[rows])
    raw = np.vstack(
        [
            evaluation.speedup_low[speedup_at],
            evaluation.speedup_expected[speedup_at],
            evaluation.speedup_high[speedup_at],
            block,
            cost / (cards * hours),
            cost + (time_value or 0.0) * hours,
        ]
    )
    shown_rows = (cents_array(raw) / 100).T.tolist()
    chosen: list[_Figures] = []
    for index, raw_row, shown in zip(offers, raw.T.tolist(), shown_rows, strict=True):
        figure = raw_row[_FIGURE:]
        units = int(figure[Figure.UNITS])
        bill = Bill(
            units=units,
            billed_cards=units * context.tables.terms[index].unit_cards,
            billed_hours=figure[Figure.BILLED_HOURS],
            hourly_rate_cny=figure[Figure.HOURLY_RATE_CNY],
            cost_cny=figure[Figure.COST_EXPECTED],
        )
        figure_shown = shown[_FIGURE:]
        chosen.append(
            _Figures(
                bill=bill,
                speedup=Range(*shown[_SPEEDUP:_FIGURE]),
                hours=Range(*figure_shown[Figure.HOURS_LOW : Figure.HOURS_HIGH + 1]),
                cost_cny=Range(*figure_shown[Figure.COST_LOW : Figure.COST_HIGH + 1]),
                billed_hours=figure_shown[Figure.BILLED_HOURS],
                hourly_rate_cny=figure_shown[Figure.HOURLY_RATE_CNY],
                effective_card_hour_cny=shown[_EFFECTIVE],
                value_cny=None if time_value is None else shown[_VALUE],
                raw_hours_expected=figure[Figure.HOURS_EXPECTED],
                raw_hours_high=figure[Figure.HOURS_HIGH],
                raw_cost_high=figure[Figure.COST_HIGH],
            )
        )
    return chosen


# Words in a catalog speed source that say what kind of evidence it is, earliest mention wins.
_SOURCE_WORDS = (
    ("throughput", "source_measured"),
    ("measure", "source_measured"),
    ("peak", "source_peak"),
    ("bandwidth", "source_bandwidth"),
)


def _source_kind(sources: Sequence[str], end: str) -> str:
    """The message id naming the evidence behind the ``end`` ("low" or "high") of a model's speed."""
    return _source_kind_of(tuple(sources), end)


@functools.lru_cache(maxsize=256)
def _source_kind_of(sources: tuple[str, ...], end: str) -> str:
    source = next((item.lower() for item in sources if item.startswith(f"{end} ")), "")
    if "derived" in source:
        return "source_derived"
    found = [(source.find(word), kind) for word, kind in _SOURCE_WORDS if word in source]
    return min(found)[1] if found else "source_peak"  # no sources: the catalog's peak ratio


_OTHER_END = {"low": "high", "high": "low"}


def _end_source(context: QuoteContext, gpu: str, reference: str, end: str) -> str:
    """What the ``end`` of a conversion rests on: the GPU's own ``end`` over the reference's other end
    (``adapters.gpus.conversion_range``); the GPU's source alone against a reference of one speed."""
    catalog, lang = context.catalog, context.lang
    target = text(_source_kind(catalog.get(gpu).speed_sources, end), lang)
    speed = catalog.get(reference).speed
    if speed is None or speed.low == speed.high:
        return target
    return text(
        "source_pair",
        lang,
        gpu=gpu_name(gpu, catalog),
        target=target,
        reference_gpu=gpu_name(reference, catalog),
        reference=text(_source_kind(catalog.get(reference).speed_sources, _OTHER_END[end]), lang),
    )


def _factor_text(factor: float) -> str:
    """A speed ratio to 0.01 with at least one decimal: ``3.0``, ``3.3``, ``0.43``."""
    shown = f"{factor:.2f}"
    return shown[:-1] if shown.endswith("0") else shown


def _conversion_warning(context: QuoteContext, index: int, reference: str) -> str:
    offer, lang, evaluation = context.tables.offers[index], context.lang, context.evaluation
    low, high = float(evaluation.conversion[0, index]), float(evaluation.conversion[2, index])
    measured = context.resolved.speed_ratios.get(offer.gpu)
    if measured is not None:
        conversion = text("conversion_measured", lang, ratio=_factor_text(measured))
    else:
        factors = _factor_text(low) if low == high else f"{_factor_text(low)}–{_factor_text(high)}"
        conversion = text(
            "conversion_catalog",
            lang,
            factors=factors,
            low_source=_end_source(context, offer.gpu, reference, "low"),
            high_source=_end_source(context, offer.gpu, reference, "high"),
        )
    hours_low, hours, hours_high = (
        hours_text(bound) for bound in evaluation.one_card_hours[:, index].tolist()
    )
    hours_range = (
        ""
        if hours_low == hours_high
        else text("range_suffix", lang, low=hours_low, high=hours_high, unit=text("unit_hours", lang))
    )
    return text(
        "warn_converted",
        lang,
        reference=gpu_name(reference, context.catalog),
        gpu=gpu_name(offer.gpu, context.catalog),
        conversion=conversion,
        reference_hours=hours_text(context.resolved.job_hours),
        hours=hours,
        hours_range=hours_range,
    )


def _warnings(context: QuoteContext, index: int, cards: int, figures: _Figures) -> list[str]:
    offer, terms, lang = context.tables.offers[index], context.tables.terms[index], context.lang
    request, evaluation, expected = context.resolved.request, context.evaluation, figures.bill
    warnings: list[str] = []
    idle = expected.billed_cards - cards
    if idle > 0:
        pricing = offer.pricing
        why = (
            text("why_nodes", lang, node_cards=pricing.cards_per_node, min_nodes=pricing.min_nodes)
            if isinstance(pricing, NodeHourPricing)
            else text("why_machine", lang, billed=expected.billed_cards)
        )
        warnings.append(text("warn_idle", lang, idle=idle, billed=expected.billed_cards, why=why))
    reference = context.resolved.reference_gpu
    if reference is not None and offer.gpu != reference:
        # Every figure in it is the GPU's: its conversion and its hours on one card.
        conversion = context.by_gpu.get(offer.gpu)
        if conversion is None:
            conversion = context.by_gpu[offer.gpu] = _conversion_warning(context, index, reference)
        warnings.append(conversion)
    if context.resolved.memory_needed_gb is not None and evaluation.min_cards[index] > terms.machine_cards:
        warnings.append(
            text(
                "warn_cluster",
                lang,
                min_cards=int(evaluation.min_cards[index]),
                memory=offer.gpu_memory_gb,
                need=number_text(context.resolved.memory_needed_gb),
                node_cards=terms.machine_cards,
                interconnect=text(f"interconnect_{offer.interconnect}", lang),
            )
        )
    if terms.min_billed_hours > 0 and expected.billed_hours == terms.min_billed_hours:
        warnings.append(text("warn_minimum", lang, hours=hours_text(terms.min_billed_hours)))
    if request.deadline_hours is not None and figures.hours.high > request.deadline_hours:
        warnings.append(
            text(
                "warn_deadline",
                lang,
                hours=hours_text(figures.raw_hours_high),
                deadline=number_text(request.deadline_hours),
            )
        )
    if request.budget_cny is not None and figures.cost_cny.high > request.budget_cny:
        cost, budget = format_cny(figures.raw_cost_high), format_cny(request.budget_cny)
        warnings.append(text("warn_budget", lang, cost=cost, budget=budget))
    if evaluation.stale[index]:
        age_hours = (context.now_s - offer.fetched_at.timestamp()) / 3600
        warnings.append(
            text(
                "warn_stale",
                lang,
                age=number_text(age_hours),
                max_age=number_text(context.price_max_age_s / 3600),
            )
        )
    return warnings


def _offer_fields(offer: Offer) -> dict[str, Any]:
    """What a quote repeats from its offer."""
    return {
        "offer_id": offer.id,
        "vendor": offer.vendor,
        "region": offer.region,
        "city": offer.city,
        "gpu": offer.gpu,
        "gpu_memory_gb": offer.gpu_memory_gb,
        "interconnect": offer.interconnect,
        "pricing": pricing_kind(offer.pricing),
        "price_fetched_at": offer.fetched_at,
        "label": offer.label,
    }


def _mixed_quote(context: QuoteContext, index: int, column: int, rank: int, figures: _Figures) -> Quote:
    """A combined plan's quote: under its longest-period package's offer id, a line per part."""
    tables, evaluation = context.tables, context.evaluation
    plan, offer = tables.plans[index - tables.offer_count], tables.offers[index]
    cards = evaluation.counts[column]
    combination = cheapest_combination(plan, cards, figures.raw_hours_expected)
    billed = combination.billed_hours(plan)
    total = figures.cost_cny.expected
    bill = Bill(
        units=combination.units,
        billed_cards=combination.units * plan.unit_cards,
        billed_hours=billed,
        hourly_rate_cny=total / billed,
        cost_cny=figures.bill.cost_cny,
    )
    return Quote(
        id=quote_id(f"{offer.id}+mixed", cards),
        rank=rank,
        **{**_offer_fields(offer), "pricing": "mixed"},
        cards=cards,
        nodes=1,
        billed_cards=bill.billed_cards,
        speedup=figures.speedup,
        hours=figures.hours,
        cost_cny=figures.cost_cny,
        billed_hours=round_hours(billed),
        hourly_rate_cny=round_cny(bill.hourly_rate_cny),
        effective_card_hour_cny=figures.effective_card_hour_cny,
        breakdown=mixed_line_items(
            plan,
            tables.offers,
            cards,
            combination,
            total,
            context.lang,
            gpu_name(offer.gpu, context.catalog),
        ),
        warnings=_warnings(context, index, cards, replace_figures(figures, bill=bill)),
        stale=bool(evaluation.stale[index]),
        value_cny=figures.value_cny,
    )


def _quote(context: QuoteContext, index: int, column: int, rank: int, figures: _Figures) -> Quote:
    """The quote for offer ``index`` at card count ``evaluation.counts[column]``."""
    if index >= context.tables.offer_count:
        return _mixed_quote(context, index, column, rank, figures)
    offer, terms, evaluation = context.tables.offers[index], context.tables.terms[index], context.evaluation
    cards, expected = evaluation.counts[column], figures.bill
    reference = _card_hour_reference(context.tables, index)
    break_even = _break_even_hours(offer, reference)
    return Quote(
        id=quote_id(offer.id, cards),
        rank=rank,
        **_offer_fields(offer),
        cards=cards,
        nodes=expected.units if terms.spans_machines else 1,
        billed_cards=expected.billed_cards,
        speedup=figures.speedup,
        hours=figures.hours,
        cost_cny=figures.cost_cny,
        billed_hours=figures.billed_hours,
        hourly_rate_cny=figures.hourly_rate_cny,
        effective_card_hour_cny=figures.effective_card_hour_cny,
        breakdown=line_items(
            offer,
            cards,
            expected,
            total_cny=figures.cost_cny.expected,
            card_hour_reference=reference
            if reference is not None and reference.vendor == offer.vendor
            else None,
            lang=context.lang,
            gpu_name=gpu_name(offer.gpu, context.catalog),
            wall_clock_hours=figures.raw_hours_expected,
        ),
        warnings=_warnings(context, index, cards, figures),
        stale=bool(evaluation.stale[index]),
        value_cny=figures.value_cny,
        term_period=offer.pricing.period if isinstance(offer.pricing, TermPricing) else None,
        break_even_hours=None if break_even is None else round_hours(break_even),
    )


def build_quotes(context: QuoteContext, chosen: Sequence[tuple[int, int, int]]) -> list[Quote]:
    """The quotes for ``(offer index, count column, rank)`` triples, in the order given."""
    if not chosen:
        return []
    offers, columns, _ = zip(*chosen, strict=True)
    figures = _figures(context, offers, columns)
    return [
        _quote(context, index, column, rank, shown)
        for (index, column, rank), shown in zip(chosen, figures, strict=True)
    ]
