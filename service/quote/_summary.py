"""The one-paragraph summary a chatbot can repeat, in English or Chinese.

It says, in this order:

1. the recommendation with its time and cost ranges; when it (or another option the paragraph names)
   uses an illustrative reference price, this first sentence says so, since a person may act on it alone;
2. what a single card would cost and take against the fastest option, once: no comparison of an option
   with itself, no "0 h sooner"; the single card must meet the deadline and budget and be billed for one
   card (or one machine rented as a unit), else the comparison is left out and only the fastest is named;
3. where a term package overtakes hourly pricing, only when the job's use per period is within a factor
   of two of that break-even (elsewhere the answer does not turn on it);
4. the caveats that change the decision, the deadline's or budget's first: every response warning and the
   recommendation's own warnings (less the ones the paragraph already carries: the converted hours are in
   its ranges, a stale price is told once); with none, how uncertain the multi-card speed-up is (unless
   the caller passed measured speed-ups) or that prices move.

With nothing to quote it names, for each limit that left candidates out, the nearest option: the cheapest
way past the budget, the fastest past the deadline (with both set: that no option meets both, and the
cheapest meeting the deadline or the fastest within the budget), the fewest cards per GPU when the caller's
card counts were the blocker, the largest offer when none sells enough cards for the model, where the
filters' excluded offers would run the job; and advice that matches that blocker, its first sentence saying
when a price it names is illustrative. Without one it says why (the excluded counts) and what to loosen.

Names in prose are people's names, in the summary's language: vendors by their display name (``name_zh``
in Chinese), places 苏州 / Suzhou, GPUs ``RTX 4090``, ``A100 80G``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from adapters.gpus import GpuCatalog
from schemas.quote import Excluded, Lang, Quote, QuoteRequest, Range
from schemas.vendor import ILLUSTRATIVE_LABEL
from service.names import place_display_name
from service.quote._billing import PERIOD_HOURS
from service.quote._gpu_names import gpu_name
from service.quote._money import format_cny
from service.quote._texts import TEMPLATES, hours_text, join_text, number_text, text

__all__ = [
    "BREAK_EVEN_FACTOR",
    "Nearest",
    "NearestOption",
    "OutsideFilters",
    "ProseNames",
    "TooLarge",
    "empty_summary",
    "filters_text",
    "quote_summary",
]

# Exclusion reasons in the order they are told when their counts tie.
_REASONS = ("memory", "capacity", "deadline", "budget", "stale", "filters")

BREAK_EVEN_FACTOR = 2.0
"""A package's break-even is told when the job's hours per period are within this factor of it."""

# Quote warnings the caveats leave out (the paragraph already carries them), and those told first.
_LIMIT_WARNINGS = ("warn_deadline", "warn_budget")


@dataclass(frozen=True, slots=True)
class ProseNames:
    """Display names for prose in one language: vendors (id → name), places and GPUs."""

    vendors: Mapping[str, str]
    catalog: GpuCatalog
    lang: Lang

    def vendor(self, vendor: str) -> str:
        return self.vendors.get(vendor) or vendor

    def gpu(self, gpu: str) -> str:
        return gpu_name(gpu, self.catalog)

    def place(self, place: str) -> str:
        return place_display_name(place, self.lang)


@dataclass(frozen=True, slots=True)
class NearestOption:
    """The best candidate a single limit left out: its card count, GPU, vendor and expected figures, and
    whether its price is an illustrative reference price."""

    cards: int
    gpu: str
    vendor: str
    cost_cny: float
    hours: float
    illustrative: bool = False


@dataclass(frozen=True, slots=True)
class TooLarge:
    """No offer (inside the filters, when ``filtered``) sells enough cards to hold the model: its memory,
    the fewest cards per GPU ``(cards, gpu)``, and the largest offer (its most cards)."""

    needed_gb: float
    cards: tuple[tuple[int, str], ...]
    largest: NearestOption
    filtered: bool


@dataclass(frozen=True, slots=True)
class OutsideFilters:
    """What the filters left out that would run the job: where (place ids), which GPUs, whether all of it
    is clusters, whether a model's memory decided it, and the filters as the caller set them (display)."""

    places: tuple[str, ...]
    gpus: tuple[str, ...]
    clusters: bool
    model: bool
    filtered: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Nearest:
    """What the summary of an empty response names: the cheapest and fastest past the budget and deadline
    (with both limits set: each lifted alone too, ``cheapest_in_time`` and ``fastest_in_budget``), the
    fewest cards per GPU when the caller's card counts blocked the model, a model no offer sells enough
    cards for, and what the filters left out."""

    cheapest: NearestOption | None = None
    fastest: NearestOption | None = None
    cheapest_in_time: NearestOption | None = None
    fastest_in_budget: NearestOption | None = None
    fewest_cards: tuple[tuple[int, str], ...] = ()
    too_large: TooLarge | None = None
    outside_filters: OutsideFilters | None = None

    def named(self) -> tuple[NearestOption, ...]:
        """The options named with a price."""
        options = (self.cheapest, self.fastest, self.cheapest_in_time, self.fastest_in_budget)
        return tuple(option for option in options if option is not None)


def _is(warning: str, keys: Iterable[str], lang: Lang) -> bool:
    """Whether ``warning`` was written from one of the messages ``keys`` (by their text before any field)."""
    return any(warning.startswith(TEMPLATES[key][lang].partition("{")[0]) for key in keys)


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
    city, region = names.place(quote.city), names.place(quote.region)
    return text(
        "option",
        lang,
        cards=quote.cards,
        gpu=names.gpu(quote.gpu),
        vendor=names.vendor(quote.vendor),
        place=city
        if quote.city == quote.region
        else text("place_city_region", lang, city=city, region=region),
        pricing=text(f"pricing_{quote.pricing}", lang),
        hours=hours,
        hours_range=hours_range,
        cost=cost,
        cost_range=cost_range,
    )


def _illustrative_note(recommended: Quote, others: Iterable[Quote | None], lang: Lang) -> str:
    if recommended.label == ILLUSTRATIVE_LABEL:
        return text("note_illustrative", lang)
    if any(quote is not None and quote.label == ILLUSTRATIVE_LABEL for quote in others):
        return text("note_illustrative_others", lang)
    return ""


def _single_vs_fastest(
    single: Quote | None, fastest: Quote, recommended: Quote, names: ProseNames, min_cards: int | None
) -> str:
    lang = names.lang
    fastest_text = _option(fastest, names)
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
    comparison = text(case, lang, single=_option(single, names), fastest=fastest_text)
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


def _caveats(recommended: Quote, response_warnings: Sequence[str], lang: Lang) -> list[str]:
    """Warnings that change the decision: the limits' first, then the response's, then the quote's own."""
    own = recommended.warnings
    limits = [warning for warning in own if _is(warning, _LIMIT_WARNINGS, lang)]
    stale_told = any(_is(warning, ("warn_stale_fallback",), lang) for warning in response_warnings)
    left_out = ("warn_converted", *_LIMIT_WARNINGS, *(("warn_stale",) if stale_told else ()))
    rest = [warning for warning in own if not _is(warning, left_out, lang)]
    return list(dict.fromkeys([*limits, *response_warnings, *rest]))


def quote_summary(
    *,
    recommended: Quote,
    fastest: Quote,
    single: Quote | None,
    quotes: Sequence[Quote],
    response_warnings: Sequence[str],
    names: ProseNames,
    min_cards: int | None,
    request: QuoteRequest,
) -> str:
    """The paragraph for a response with quotes."""
    lang = names.lang
    caveats = _caveats(recommended, response_warnings, lang)
    if len(caveats) > 1:
        caveat = text("summary_caveats", lang, caveats=join_text("join_caveats", caveats, lang))
    else:
        caveat = text(
            "summary_caveat", lang, caveat=caveats[0] if caveats else _default_caveat(fastest, request, lang)
        )
    note = _illustrative_note(recommended, (fastest, single), lang)
    sentences = [
        text("summary_recommended", lang, option=_option(recommended, names), note=note),
        (
            text("serving_same_hours", lang, hours=number_text(recommended.hours.expected))
            if request.workload.kind == "serving"  # every plan runs the hours asked for: none is faster
            else _single_vs_fastest(single, fastest, recommended, names, min_cards)
        ),
        _break_even(quotes, names),
        caveat,
    ]
    return join_text("join_sentences", sentences, lang)


def filters_text(
    request: QuoteRequest,
    *,
    regions: Iterable[str] | None,
    cities: Iterable[str] | None,
    gpus: Iterable[str] | None,
    vendors: Iterable[str] | None,
    names: ProseNames,
) -> tuple[str, ...]:
    """The filters the caller set, as prose names (``Jiangsu``, ``RTX 4090``, ``billed per node-hour``)."""
    lang = names.lang
    shown = [
        *(names.place(place) for place in sorted(regions or ())),
        *(names.place(place) for place in sorted(cities or ())),
        *(names.gpu(gpu) for gpu in sorted(gpus or ())),
        *(names.vendor(vendor) for vendor in sorted(vendors or ())),
        *(text(f"pricing_{kind}", lang) for kind in request.pricing or ()),
    ]
    if request.min_gpu_memory_gb is not None:
        shown.append(text("filtered_memory", lang, memory=number_text(request.min_gpu_memory_gb)))
    return tuple(shown)


def _cards_text(cards: Iterable[tuple[int, str]], names: ProseNames, join: str) -> str:
    """``2 × RTX 4090`` per (cards, GPU), joined by ``join``."""
    shown = (text("cards_of_gpu", names.lang, cards=count, gpu=names.gpu(gpu)) for count, gpu in cards)
    return join_text(join, shown, names.lang)


def _limit_clauses(request: QuoteRequest, names: ProseNames, nearest: Nearest) -> tuple[list[str], list[str]]:
    """The cheapest way against the budget, the fastest against the deadline; with both limits set, that
    no option meets both and the nearest that meets one of them."""
    lang, counts = names.lang, request.card_counts
    clauses: list[str] = []
    hints: list[str] = []
    both = request.budget_cny is not None and request.deadline_hours is not None
    cheapest, fastest = nearest.cheapest, nearest.fastest
    if cheapest is not None and request.budget_cny is not None:
        cost = format_cny(cheapest.cost_cny)
        clauses.append(text("nearest_budget", lang, cards=cheapest.cards, gpu=names.gpu(cheapest.gpu),
                            vendor=names.vendor(cheapest.vendor), cost=cost,
                            budget="¥" + number_text(request.budget_cny)))  # fmt: skip
        if not both:
            hints.append(text("hint_raise_budget", lang, cost=cost))
            if counts and min(counts) > 1:  # fewer cards can only help when one card is not already allowed
                hints.append(text("hint_fewer_cards", lang))
    if fastest is not None and request.deadline_hours is not None:
        hours = hours_text(fastest.hours)
        clauses.append(text("nearest_deadline", lang, cards=fastest.cards, gpu=names.gpu(fastest.gpu),
                            vendor=names.vendor(fastest.vendor), hours=hours,
                            deadline=number_text(request.deadline_hours)))  # fmt: skip
        if not both:
            hints.append(text("hint_relax_deadline", lang, hours=hours))
            if counts and fastest.cards >= max(counts):  # more cards help only past the counts allowed
                hints.append(text("hint_more_cards", lang))
    if both and (cheapest is not None or fastest is not None):
        clauses.append(text("nearest_both_none", lang))
        in_time, in_budget = nearest.cheapest_in_time, nearest.fastest_in_budget
        if in_time is not None:
            cost = format_cny(in_time.cost_cny)
            clauses.append(text("nearest_cheapest_in_time", lang, cards=in_time.cards,
                                gpu=names.gpu(in_time.gpu), vendor=names.vendor(in_time.vendor), cost=cost))  # fmt: skip
            hints.append(text("hint_raise_budget", lang, cost=cost))
        if in_budget is not None:
            hours = hours_text(in_budget.hours)
            clauses.append(text("nearest_fastest_in_budget", lang, cards=in_budget.cards,
                                gpu=names.gpu(in_budget.gpu), vendor=names.vendor(in_budget.vendor),
                                hours=hours))  # fmt: skip
            hints.append(text("hint_relax_deadline", lang, hours=hours))
        if in_time is None and in_budget is None:
            hints.append(text("hint_relax_both", lang))
    return clauses, hints


def _nearest_clauses(
    request: QuoteRequest, names: ProseNames, nearest: Nearest
) -> tuple[list[str], list[str]]:
    """For each limit that left out a candidate that would run: the nearest option and the advice."""
    lang = names.lang
    clauses, hints = _limit_clauses(request, names, nearest)
    if nearest.fewest_cards and request.card_counts:
        allowed = join_text("join_list", map(str, sorted(set(request.card_counts))), lang)
        clauses.append(text("nearest_card_counts", lang,
                            cards=_cards_text(nearest.fewest_cards, names, "join_or_list"), counts=allowed))  # fmt: skip
        hints.append(
            text("hint_allow_cards", lang, cards=_cards_text(nearest.fewest_cards, names, "join_or_list"))
        )
    too_large = nearest.too_large
    if too_large is not None:
        largest = too_large.largest
        clauses.append(text(
            "nearest_too_large_filtered" if too_large.filtered else "nearest_too_large",
            lang,
            need=number_text(too_large.needed_gb),
            cards=_cards_text(too_large.cards, names, "join_or_list"),
            largest=text("cards_of_gpu", lang, cards=largest.cards, gpu=names.gpu(largest.gpu)),
            vendor=names.vendor(largest.vendor),
        ))  # fmt: skip
        if not too_large.filtered:
            hints.append(text("hint_smaller_model", lang))
    outside = nearest.outside_filters
    if outside is not None:
        gpus = text("nearest_gpus", lang, gpus=join_text("join_list", map(names.gpu, outside.gpus), lang))
        what = text(
            "nearest_what",
            lang,
            places=join_text("join_list", map(names.place, outside.places), lang),
            gpus=gpus if outside.gpus else "",
            kinds=text("nearest_clusters" if outside.clusters else "nearest_offers", lang),
        )
        verb = text("nearest_hold_model" if outside.model else "nearest_fit_job", lang)
        filtered = join_text("join_list", outside.filtered, lang)
        clauses.append(text("nearest_filters", lang, what=what, verb=verb, filtered=filtered))
        hints.append(text("hint_widen_filters", lang))
    return clauses, hints


def empty_summary(
    excluded: Excluded,
    *,
    offers_loaded: int,
    lang: Lang,
    request: QuoteRequest | None = None,
    names: ProseNames | None = None,
    nearest: Nearest | None = None,
) -> str:
    """The paragraph for a response with no quotes: the nearest option past each limit that decided it
    and what to loosen; without one, the excluded counts and the main reason's advice."""
    if offers_loaded == 0:
        return text("empty_no_offers", lang)
    counted = {name: getattr(excluded, name) for name in _REASONS if getattr(excluded, name)}
    reasons = sorted(((count, name) for name, count in counted.items()), key=lambda pair: -pair[0])
    listed = join_text(
        "join_list",
        (
            text("empty_excluded", lang, count=count, reason=text(f"reason_{name}", lang))
            for count, name in reasons
        ),
        lang,
    )
    if request is not None and names is not None and nearest is not None:
        clauses, hints = _nearest_clauses(request, names, nearest)
        if clauses:
            # The first sentence says when a price it names is illustrative: a person may act on it alone.
            illustrative = any(option.illustrative for option in nearest.named())
            note = text("note_illustrative_nearest", lang) if illustrative else ""
            return text(
                "empty_nearest",
                lang,
                excluded=listed,
                nearest=join_text("join_caveats", clauses, lang) + note,
                hint=join_text("join_or", hints, lang),
            )
    hint = text(f"hint_{reasons[0][1] if reasons else 'filters'}", lang)
    return text("empty_no_fit", lang, excluded=listed, hint=hint)
