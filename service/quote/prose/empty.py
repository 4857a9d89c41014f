"""The paragraph of a response with no quotes, in English or Chinese.

It names, for each limit that left candidates out, the nearest option: the cheapest
way past the budget, the fastest past the deadline (with both set: that no option meets both, and the
cheapest meeting the deadline or the fastest within the budget), the fewest cards per GPU when the caller's
card counts were the blocker, the largest offer when none sells enough cards for the model, where the
filters' excluded offers would run the job; and advice that matches that blocker, its first sentence saying
when a price it names is illustrative. Without one it says why (the excluded counts) and what to loosen.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from schemas.quote import Excluded, Lang, QuoteRequest
from service.quote.base.money import format_cny
from service.quote.prose.names import ProseNames
from service.quote.prose.texts import hours_text, join_text, number_text, text

__all__ = [
    "Nearest",
    "NearestOption",
    "OutsideFilters",
    "Supply",
    "SupplyLimit",
    "TooLarge",
    "empty_summary",
    "filters_text",
]

# Exclusion reasons in the order they are told when their counts tie.
_REASONS = ("memory", "capacity", "deadline", "budget", "stale", "filters")


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


SupplyLimit = Literal["stock", "machine", "rental", "nodes"]


@dataclass(frozen=True, slots=True)
class Supply:
    """What one offer inside the filters can supply when the caller's card counts are more: its most
    cards, what bounds them (its stock, one machine, one rental, its most nodes) and the count nearest the
    caller's it runs the job at, with its figures (None when no count it supplies does)."""

    vendor: str
    gpu: str
    most: int
    limit: SupplyLimit
    limit_value: int
    nearest: NearestOption | None


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
    supplies: tuple[Supply, ...] = ()

    def named(self) -> tuple[NearestOption, ...]:
        """The options named with a price."""
        options = (
            self.cheapest,
            self.fastest,
            self.cheapest_in_time,
            self.fastest_in_budget,
            *(supply.nearest for supply in self.supplies),
        )
        return tuple(option for option in options if option is not None)


def filters_text(
    request: QuoteRequest,
    *,
    regions: Iterable[str] | None,
    cities: Iterable[str] | None,
    gpus: Iterable[str] | None,
    vendors: Iterable[str] | None,
    names: ProseNames,
    spot_refused: bool = False,
) -> tuple[str, ...]:
    """The filters the caller set, as prose names (``Jiangsu``, ``RTX 4090``, ``billed per node-hour``),
    and spot capacity left out when it was (``allow_spot``, or a serving job's default)."""
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
    if spot_refused:
        shown.append(text("filtered_no_spot", lang))
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


def _supply_clause(asked: Iterable[int], supplies: Iterable[Supply], names: ProseNames) -> str:
    """What each offer inside the filters supplies, and its nearest count's figures."""
    lang = names.lang
    listed = []
    for supply in supplies:
        limit = text(f"supply_{supply.limit}", lang, stock=supply.limit_value, nodes=supply.limit_value)
        option = supply.nearest
        near = (
            text("supply_nearest_none", lang)
            if option is None
            else text("supply_nearest", lang, cards=option.cards, gpu=names.gpu(option.gpu),
                      hours=hours_text(option.hours), cost=format_cny(option.cost_cny))
        )  # fmt: skip
        listed.append(
            text("supply_offer", lang, vendor=names.vendor(supply.vendor), most=supply.most,
                 gpu=names.gpu(supply.gpu), limit=limit, nearest=near)
        )  # fmt: skip
    counts = join_text("join_or_list", map(str, sorted(set(asked))), lang)
    return text("nearest_supply", lang, counts=counts, supplies=join_text("join_caveats", listed, lang))


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
    if nearest.supplies and request.card_counts:
        clauses.append(_supply_clause(request.card_counts, nearest.supplies, names))
        counts = sorted({supply.nearest.cards for supply in nearest.supplies if supply.nearest is not None})
        if counts:
            hints.append(
                text("hint_allow_supply", lang, cards=join_text("join_or_list", map(str, counts), lang))
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
