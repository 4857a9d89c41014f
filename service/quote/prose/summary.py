"""The one-paragraph summary a chatbot can repeat, in English or Chinese.

It says, in this order:

1. the recommendation with its time and cost ranges; when it (or another option the paragraph names)
   uses an illustrative reference price, this first sentence says so, since a person may act on it alone;
   so it does when the recommendation has a risk (``Quote.risks``: its high end past the deadline or the
   budget, spot capacity), with the best plan without it and what that costs more ("¥20 more removes the
   risk"). Every option named says when it is spot / interruptible, and, when its interruptions cost 1 %
   of its hours or more, the hours they add next to its own ("plus about 15 h for 20 expected
   interruptions");
2. what a single card would cost and take against the fastest option, once: no comparison of an option
   with itself, no "0 h sooner"; the single card must meet the deadline and budget and be billed for one
   card (or one machine rented as a unit), else the comparison is left out and only the fastest is named;
3. where a term package overtakes hourly pricing, only when the job's use per period is within a factor
   of two of that break-even (elsewhere the answer does not turn on it);
4. the caveats that change the decision, the deadline's or budget's first: every response warning and the
   recommendation's own warnings (less the ones the paragraph already carries: the converted hours are in
   its ranges, a stale price is told once); with none, how uncertain the multi-card speed-up is (unless
   the caller passed measured speed-ups) or that prices move.

Names are written as ``_prose_names.ProseNames`` gives them; an empty response's paragraph is
``_empty_summary``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from schemas.offer import PERIOD_HOURS
from schemas.quote import Lang, Quote, QuoteRequest, Range
from schemas.vendor import ILLUSTRATIVE_LABEL
from service.quote.base.memo import memoized
from service.quote.base.money import format_cny
from service.quote.prose.names import ProseNames
from service.quote.prose.risk import interruptions_told, risk_clause, told_in_first_sentence
from service.quote.prose.texts import (
    Message,
    hours_text,
    join_text,
    number_text,
    partial_text,
    significant_text,
    text,
)

__all__ = [
    "BREAK_EVEN_FACTOR",
    "LEADING_WARNINGS",
    "alternative_sentence",
    "lead_sentences",
    "quote_summary",
]

BREAK_EVEN_FACTOR = 2.0
"""A package's break-even is told when the job's hours per period are within this factor of it."""

# Quote warnings the caveats leave out (the paragraph already carries them), and those told first.
_LIMIT_WARNINGS = ("warn_held_price", "warn_idle_better", "warn_deadline", "warn_budget")
# Response warnings said before anything else: what the answer rests on that a person must know first.
LEADING_WARNINGS = frozenset({"warn_memory_floor"})


def _span(values: Range, unit: str, *, money: bool, lang: Lang) -> tuple[str, str]:
    """The expected figure and, when the range is not a point, its ``(low–high)`` suffix."""
    show = format_cny if money else hours_text
    expected = show(values.expected)
    if values.low == values.high:
        return expected, ""
    return expected, text("range_suffix", lang, low=show(values.low), high=show(values.high), unit=unit)


def _option(quote: Quote, names: ProseNames) -> str:
    lang = names.lang
    hours, hours_range = _span(quote.hours, text("unit_hours", lang), money=False, lang=lang)
    cost, cost_range = _span(quote.cost_cny, "", money=True, lang=lang)
    template = _option_template(
        names.gpu(quote.gpu),
        names.vendor(quote.vendor),
        names.place(quote.city),
        None if quote.city == quote.region else names.place(quote.region),
        quote.pricing,
        quote.spot,
        lang,
    )
    lost = ""
    interruptions = quote.interruptions
    if interruptions is not None and interruptions_told(quote.hours.expected, interruptions):
        count = significant_text(interruptions.expected)
        lost = text("option_lost", lang, hours=hours_text(interruptions.hours_lost), count=count)
    return template.format(
        cards=quote.cards, hours=hours, hours_range=hours_range, lost=lost, cost=cost, cost_range=cost_range
    )


@memoized(1024)
def _option_template(
    gpu: str, vendor: str, city: str, region: str | None, pricing: str, spot: bool, lang: Lang
) -> str:
    """An option's sentence with its names written in (the same for every job on one offer), leaving the
    cards and the job's figures to fill in."""
    billed = text(f"pricing_{pricing}", lang)
    return partial_text(
        "option",
        lang,
        ("cards", "hours", "hours_range", "lost", "cost", "cost_range"),
        gpu=gpu,
        vendor=vendor,
        place=city if region is None else text("place_city_region", lang, city=city, region=region),
        pricing=text("pricing_spot", lang, pricing=billed) if spot else billed,
    )


def _illustrative_note(recommended: Quote, others: Iterable[Quote | None], lang: Lang) -> str:
    if recommended.label == ILLUSTRATIVE_LABEL:
        return text("note_illustrative", lang)
    if any(quote is not None and quote.label == ILLUSTRATIVE_LABEL for quote in others):
        return text("note_illustrative_others", lang)
    return ""


def _held_note(recommended: Quote, lang: Lang) -> str:
    """A held-back price on the recommendation, in its own sentence: the vendor now asks more (or less)."""
    held = recommended.held_back
    if held is None:
        return ""
    if held.cost_cny is None:
        return text("note_held", lang, price=format_cny(held.price_cny))
    return text("note_held_cost", lang, price=format_cny(held.price_cny), cost=format_cny(held.cost_cny))


def _single_vs_fastest(
    single: Quote | None,
    fastest: Quote,
    recommended: Quote,
    option: Callable[[Quote], str],
    min_cards: int | None,
    lang: Lang,
    safe: Quote | None = None,
) -> str:
    # The plan without the recommendation's risk is already told in full in the first sentence.
    fastest_text = text("safe_plan", lang) if safe is not None and fastest.id == safe.id else option(fastest)
    if single is None:
        if min_cards is None or min_cards <= 1:
            # No single card within the limits (or billed as one card): no comparison, only the fastest.
            case = "recommended_fastest_only" if fastest.id == recommended.id else "fastest_only"
            return text(case, lang, fastest=fastest_text)
        reason = text("single_needs_more", lang, min_cards=min_cards)
        case = "single_none_fastest" if fastest.id == recommended.id else "single_none"
        return text(case, lang, reason=reason, fastest=fastest_text)
    if single.id == fastest.id:
        # One card is the fastest: said once, with no comparison of an option against itself.
        return text(
            "single_is_recommended_fastest" if single.id == recommended.id else "single_fastest", lang
        )
    if single.id == recommended.id:
        case = "single_recommended"
    elif fastest.id == recommended.id:
        case = "single_recommended_fastest"
    else:
        case = "single_other"
    comparison = text(case, lang, single=option(single), fastest=fastest_text)
    return comparison + _trade_off(single, fastest, lang)


def _trade_off(single: Quote, fastest: Quote, lang: Lang) -> str:
    """What the fastest option saves against one card, and what it costs more (or less); nothing when
    it saves no time as shown."""
    hours_saved = number_text(single.hours.expected - fastest.hours.expected)
    if hours_saved in ("0", "-0"):
        return ""
    extra_cny = fastest.cost_cny.expected - single.cost_cny.expected
    if format_cny(abs(extra_cny)) == format_cny(0):
        return text("trade_same", lang, hours=hours_saved)
    key = "trade_more" if extra_cny >= 0 else "trade_less"
    return text(key, lang, hours=hours_saved, cost=format_cny(abs(extra_cny)))


def _break_even(quotes: Sequence[Quote], names: ProseNames) -> str:
    """The first package whose break-even the job's use per period is near (within ``BREAK_EVEN_FACTOR``)."""
    for quote in quotes:
        period, break_even = quote.term_period, quote.break_even_hours
        if period is None or break_even is None or break_even >= PERIOD_HOURS[period]:
            continue
        used_per_period = min(quote.hours.expected, PERIOD_HOURS[period])
        if not break_even / BREAK_EVEN_FACTOR <= used_per_period <= break_even * BREAK_EVEN_FACTOR:
            continue
        return text(
            "break_even",
            names.lang,
            gpu=names.gpu(quote.gpu),
            period=text(f"period_{period}", names.lang),
            vendor=names.vendor(quote.vendor),
            hours=number_text(break_even),
        )
    return ""


def _default_caveat(fastest: Quote, request: QuoteRequest, lang: Lang) -> str:
    if fastest.cards > 1 and request.scaling is None and request.workload.kind != "serving":
        low, high = number_text(fastest.speedup.low), number_text(fastest.speedup.high)
        return text("caveat_speedup", lang, low=low, high=high, cards=fastest.cards)
    return text("caveat_prices", lang)


def _caveats(
    own: Sequence[Message], response_warnings: Sequence[Message], told: frozenset[str] = frozenset()
) -> list[str]:
    """Warnings that change the decision: the limits' first, then the response's, then the quote's own
    (``own``: the recommendation's), each said once, less those the paragraph already says (``told``);
    picked by message id, whatever their wording."""
    limits = [warning.text for warning in own if warning.key in _LIMIT_WARNINGS and warning.key not in told]
    stale_told = any(warning.key == "warn_stale_fallback" for warning in response_warnings)
    left_out = {
        "warn_converted",
        "warn_estimated",
        *_LIMIT_WARNINGS,
        *told,
        *(("warn_stale",) if stale_told else ()),
    }
    rest = [warning.text for warning in own if warning.key not in left_out]
    response = [warning.text for warning in response_warnings if warning.key not in LEADING_WARNINGS]
    return list(dict.fromkeys([*limits, *response, *rest]))


def lead_sentences(response_warnings: Sequence[Message], lang: Lang) -> list[str]:
    """The warnings a summary opens with (``LEADING_WARNINGS``), each its own sentence."""
    sentences = []
    for warning in response_warnings:
        if warning.key in LEADING_WARNINGS:
            lead = warning.text[:1].upper() + warning.text[1:] if lang == "en" else warning.text
            sentences.append(text("summary_lead", lang, lead=lead))
    return sentences


def quote_summary(
    *,
    recommended: Quote,
    recommended_warnings: Sequence[Message],
    fastest: Quote,
    single: Quote | None,
    safe: Quote | None = None,
    quotes: Sequence[Quote],
    response_warnings: Sequence[Message],
    names: ProseNames,
    min_cards: int | None,
    request: QuoteRequest,
    extra: Sequence[str] = (),
) -> str:
    """The paragraph for a response with quotes; ``extra`` sentences follow the comparison with one card
    (an alternative that changes the decision)."""
    lang = names.lang
    caveats = _caveats(recommended_warnings, response_warnings, told_in_first_sentence(recommended))
    if len(caveats) > 1:
        caveat = text("summary_caveats", lang, caveats=join_text("join_caveats", caveats, lang))
    else:
        caveat = text(
            "summary_caveat", lang, caveat=caveats[0] if caveats else _default_caveat(fastest, request, lang)
        )
    note = _illustrative_note(recommended, (fastest, single, safe), lang) + _held_note(recommended, lang)
    written: dict[str, str] = {}

    def option(quote: Quote) -> str:
        """``_option``, once per quote: the recommendation is often the single card or the fastest too."""
        found = written.get(quote.id)
        if found is None:
            found = written[quote.id] = _option(quote, names)
        return found

    sentences = [
        *lead_sentences(response_warnings, lang),
        text(
            "summary_recommended",
            lang,
            option=option(recommended),
            note=note,
            risk=risk_clause(recommended, safe, request, option, lang),
        ),
        (
            text("serving_same_hours", lang, hours=number_text(recommended.hours.expected))
            if request.workload.kind == "serving"  # every plan runs the hours asked for: none is faster
            else _single_vs_fastest(single, fastest, recommended, option, min_cards, lang, safe)
        ),
        *extra,
        _break_even(quotes, names),
        caveat,
    ]
    return join_text("join_sentences", sentences, lang)


def alternative_sentence(
    precision: str,
    bytes_per_weight: float,
    need_gb: float,
    quote: Quote,
    saving_cny: float | None,
    names: ProseNames,
) -> str:
    """The same job at quantized ``precision``: what it needs and its recommended option, with what it
    saves against the recommendation (``saving_cny``; None when nothing fitted without it)."""
    lang = names.lang
    saving = (
        text("alternative_fits", lang)
        if saving_cny is None
        else text("alternative_saves", lang, saving=format_cny(saving_cny))
    )
    return text(
        "alternative_quantized",
        lang,
        precision=precision,
        bytes=number_text(bytes_per_weight),
        need=number_text(need_gb),
        option=_option(quote, names),
        saving=saving,
    )
