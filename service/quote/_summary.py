"""The one-paragraph summary a chatbot can repeat, in English or Chinese.

It says, in this order: the recommendation with its time and cost ranges; what a single card would cost
and take against the fastest option; where a term package overtakes hourly pricing (when one is quoted);
and the main caveat: the first response warning, else the recommendation's first warning, else how
uncertain the multi-card speed-up is. With nothing to quote it says why (the excluded counts) and what to
loosen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from schemas.quote import Excluded, Lang, Quote, Range
from service.quote._billing import PERIOD_HOURS
from service.quote._money import format_cny
from service.quote._texts import hours_text, join_text, number_text, text

__all__ = ["empty_summary", "quote_summary"]

# Exclusion reasons in the order they are told when their counts tie.
_REASONS = ("memory", "capacity", "deadline", "budget", "stale", "filters")


def _span(values: Range, unit: str, *, money: bool, lang: Lang) -> tuple[str, str]:
    """The expected figure and, when the range is not a point, its ``(low–high)`` suffix."""
    show = format_cny if money else hours_text
    expected = show(values.expected)
    if values.low == values.high:
        return expected, ""
    return expected, text("range_suffix", lang, low=show(values.low), high=show(values.high), unit=unit)


def _option(quote: Quote, names: Mapping[str, str], lang: Lang) -> str:
    hours, hours_range = _span(quote.hours, text("unit_hours", lang), money=False, lang=lang)
    cost, cost_range = _span(quote.cost_cny, "", money=True, lang=lang)
    return text(
        "option",
        lang,
        cards=quote.cards,
        gpu=quote.gpu,
        vendor=names.get(quote.vendor) or quote.vendor,
        place=quote.city
        if quote.city == quote.region
        else text("place_city_region", lang, city=quote.city, region=quote.region),
        pricing=text(f"pricing_{quote.pricing}", lang),
        hours=hours,
        hours_range=hours_range,
        cost=cost,
        cost_range=cost_range,
    )


def _single_vs_fastest(
    single: Quote | None,
    fastest: Quote,
    recommended: Quote,
    names: Mapping[str, str],
    min_cards: int | None,
    lang: Lang,
) -> str:
    fastest_text = _option(fastest, names, lang)
    if single is None:
        needs_more = min_cards is not None and min_cards > 1
        reason = text("single_needs_more" if needs_more else "single_no_offer", lang, min_cards=min_cards)
        case = "single_none_fastest" if fastest.id == recommended.id else "single_none"
        return text(case, lang, reason=reason, fastest=fastest_text)
    if single.id == fastest.id:
        case = "single_fastest"
    elif single.id == recommended.id:
        case = "single_recommended"
    elif fastest.id == recommended.id:
        case = "single_recommended_fastest"
    else:
        case = "single_other"
    comparison = text(case, lang, single=_option(single, names, lang), fastest=fastest_text)
    return comparison + _trade_off(single, fastest, lang)


def _trade_off(single: Quote, fastest: Quote, lang: Lang) -> str:
    """What the fastest option saves against one card, and what it costs more (or less)."""
    hours_saved = number_text(single.hours.expected - fastest.hours.expected)
    extra_cny = fastest.cost_cny.expected - single.cost_cny.expected
    key = "trade_more" if extra_cny >= 0 else "trade_less"
    return text(key, lang, hours=hours_saved, cost=format_cny(abs(extra_cny)))


def _break_even(quotes: Sequence[Quote], names: Mapping[str, str], lang: Lang) -> str:
    for quote in quotes:
        period = quote.term_period
        if period is None or quote.break_even_hours is None or quote.break_even_hours >= PERIOD_HOURS[period]:
            continue
        return text(
            "break_even",
            lang,
            gpu=quote.gpu,
            period=text(f"period_{period}", lang),
            vendor=names.get(quote.vendor) or quote.vendor,
            hours=number_text(quote.break_even_hours),
        )
    return ""


def _default_caveat(fastest: Quote, lang: Lang) -> str:
    if fastest.cards > 1:
        low, high = number_text(fastest.speedup.low), number_text(fastest.speedup.high)
        return text("caveat_speedup", lang, low=low, high=high, cards=fastest.cards)
    return text("caveat_prices", lang)


def quote_summary(
    *,
    recommended: Quote,
    fastest: Quote,
    single: Quote | None,
    quotes: Sequence[Quote],
    response_warnings: Sequence[str],
    vendor_names: Mapping[str, str],
    min_cards: int | None,
    lang: Lang,
) -> str:
    """The paragraph for a response with quotes; ``vendor_names`` maps vendor ids to display names."""
    caveats = [*response_warnings, *recommended.warnings]
    caveat = caveats[0] if caveats else _default_caveat(fastest, lang)
    sentences = [
        text("summary_recommended", lang, option=_option(recommended, vendor_names, lang)),
        _single_vs_fastest(single, fastest, recommended, vendor_names, min_cards, lang),
        _break_even(quotes, vendor_names, lang),
        text("summary_caveat", lang, caveat=caveat),
    ]
    return join_text("join_sentences", sentences, lang)


def empty_summary(excluded: Excluded, *, offers_loaded: int, lang: Lang) -> str:
    """The paragraph for a response with no quotes: why, and what to loosen."""
    if offers_loaded == 0:
        return text("empty_no_offers", lang)
    reasons = [(getattr(excluded, name), name) for name in _REASONS if getattr(excluded, name)]
    reasons.sort(key=lambda pair: -pair[0])
    listed = (
        text("empty_excluded", lang, count=count, reason=text(f"reason_{name}", lang))
        for count, name in reasons
    )
    hint = text(f"hint_{reasons[0][1] if reasons else 'filters'}", lang)
    return text("empty_no_fit", lang, excluded=join_text("join_list", listed, lang), hint=hint)
