"""One ``Quote`` struct for one chosen candidate: ranges, bill, line items and warnings.

Only the few quotes a response returns are built here, in Python; the bulk arrays already decided which.
The figures are recomputed from the same arrays with the same arithmetic as the bulk pass (``bill`` and
``billed_hours`` step for step), so a quote shows exactly the cost it was ranked and filtered on.

Ranges: hours low/expected/high come from speed-up high/expected/low; each bound's cost is billed on its
own hours (rounded up to the granularity), so the cost range is as honest as the time range.
"""

from __future__ import annotations

from dataclasses import dataclass

from adapters.gpus import GpuCatalog
from schemas.offer import CardHourPricing, NodeHourPricing, Offer, TermPricing, pricing_kind
from schemas.quote import Lang, Quote, Range
from service.quote._billing import PERIOD_HOURS, Bill, BillingTerms, bill, billed_hours
from service.quote._breakdown import line_items
from service.quote._evaluate import Evaluation
from service.quote._money import format_cny, round_cny, round_hours
from service.quote._resolve import ResolvedRequest
from service.quote._tables import NO_OFFER, OfferTables
from service.quote._texts import hours_text, number_text, text

__all__ = ["QuoteContext", "build_quote_struct", "quote_id"]


@dataclass(frozen=True, slots=True)
class QuoteContext:
    tables: OfferTables
    evaluation: Evaluation
    resolved: ResolvedRequest
    catalog: GpuCatalog
    now_s: float
    price_max_age_s: float
    lang: Lang


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


def _expected_bill(terms: BillingTerms, cards: int, hours: float) -> Bill:
    expected = bill(terms, cards, hours)
    if expected is None:  # pragma: no cover - the bulk pass only chooses feasible candidates
        raise AssertionError(f"{cards} cards chosen on an offer that cannot supply them")
    return expected


def _warnings(
    context: QuoteContext, index: int, cards: int, expected: Bill, hours_high: float, cost_high: float
) -> list[str]:
    offer, terms, lang = context.tables.offers[index], context.tables.terms[index], context.lang
    request, evaluation = context.resolved.request, context.evaluation
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
        warnings.append(
            text(
                "warn_converted",
                lang,
                reference=reference,
                gpu=offer.gpu,
                reference_index=context.catalog.get(reference).perf_index,
                gpu_index=context.catalog.get(offer.gpu).perf_index,
                reference_hours=hours_text(request.workload.gpu_hours),
                hours=hours_text(float(evaluation.base_hours[index])),
            )
        )
    if context.resolved.memory_needed_gb is not None and evaluation.min_cards[index] > terms.machine_cards:
        warnings.append(
            text(
                "warn_cluster",
                lang,
                min_cards=int(evaluation.min_cards[index]),
                memory=offer.gpu_memory_gb,
                need=number_text(context.resolved.memory_needed_gb),
                node_cards=terms.machine_cards,
                interconnect=offer.interconnect,
            )
        )
    if terms.min_billed_hours > 0 and expected.billed_hours == terms.min_billed_hours:
        warnings.append(text("warn_minimum", lang, hours=hours_text(terms.min_billed_hours)))
    if request.deadline_hours is not None and round_hours(hours_high) > request.deadline_hours:
        warnings.append(
            text(
                "warn_deadline",
                lang,
                hours=hours_text(hours_high),
                deadline=number_text(request.deadline_hours),
            )
        )
    if request.budget_cny is not None and round_cny(cost_high) > request.budget_cny:
        warnings.append(
            text("warn_budget", lang, cost=format_cny(cost_high), budget=format_cny(request.budget_cny))
        )
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


def build_quote_struct(context: QuoteContext, index: int, column: int, rank: int) -> Quote:
    """The quote for offer ``index`` at card count ``evaluation.counts[column]``."""
    offer, terms, evaluation = context.tables.offers[index], context.tables.terms[index], context.evaluation
    cards = evaluation.counts[column]
    speedup_low = float(evaluation.speedup_low[index, column])
    speedup_high = float(evaluation.speedup_high[index, column])
    speedup_expected = (speedup_low + speedup_high) * 0.5
    base_hours = float(evaluation.base_hours[index])
    hours_expected, hours_low, hours_high = (
        base_hours / speedup_expected,
        base_hours / speedup_high,
        base_hours / speedup_low,
    )
    expected = _expected_bill(terms, cards, hours_expected)
    cost_low = expected.hourly_rate_cny * billed_hours(
        hours_low, terms.granularity_hours, terms.min_billed_hours
    )
    cost_high = expected.hourly_rate_cny * billed_hours(
        hours_high, terms.granularity_hours, terms.min_billed_hours
    )
    reference = _card_hour_reference(context.tables, index)
    period_hours = PERIOD_HOURS[offer.pricing.period] if isinstance(offer.pricing, TermPricing) else 0.0
    time_value = context.resolved.request.time_value_cny_per_hour
    break_even = _break_even_hours(offer, reference)
    return Quote(
        id=quote_id(offer.id, cards),
        rank=rank,
        offer_id=offer.id,
        vendor=offer.vendor,
        region=offer.region,
        city=offer.city,
        gpu=offer.gpu,
        gpu_memory_gb=offer.gpu_memory_gb,
        interconnect=offer.interconnect,
        cards=cards,
        nodes=expected.units if terms.spans_machines else 1,
        billed_cards=expected.billed_cards,
        pricing=pricing_kind(offer.pricing),
        speedup=Range(round_hours(speedup_low), round_hours(speedup_expected), round_hours(speedup_high)),
        hours=Range(round_hours(hours_low), round_hours(hours_expected), round_hours(hours_high)),
        cost_cny=Range(round_cny(cost_low), round_cny(expected.cost_cny), round_cny(cost_high)),
        billed_hours=round_hours(expected.billed_hours),
        hourly_rate_cny=round_cny(expected.hourly_rate_cny),
        effective_card_hour_cny=round_cny(expected.cost_cny / (cards * hours_expected)),
        breakdown=line_items(
            offer,
            cards,
            expected,
            card_hour_reference=reference
            if reference is not None and reference.vendor == offer.vendor
            else None,
            period_hours=period_hours,
            lang=context.lang,
        ),
        price_fetched_at=offer.fetched_at,
        warnings=_warnings(context, index, cards, expected, hours_high, cost_high),
        stale=bool(evaluation.stale[index]),
        value_cny=None if time_value is None else round_cny(expected.cost_cny + time_value * hours_expected),
        term_period=offer.pricing.period if isinstance(offer.pricing, TermPricing) else None,
        break_even_hours=None if break_even is None else round_hours(break_even),
        label=offer.label,
    )
