"""When nothing fits: the nearest option past each limit that left candidates out, and what blocks a model.

Each limit (the budget, the deadline, the filters) is lifted on its own and the request evaluated again,
so the option named is exactly what that limit alone kept out. Runs only when no candidate qualifies.
An option is chosen and told by the figures the limits judge: its high end when ``deadline_confidence``
or ``budget_confidence`` asks for it, so the deadline to extend to is one the option meets.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import msgspec
import numpy as np
import numpy.typing as npt

from schemas.quote import Excluded, QuoteRequest, RankBy
from schemas.vendor import ILLUSTRATIVE_LABEL
from service.quote.evaluate.evaluation import Evaluation
from service.quote.evaluate.judge import limit_rows
from service.quote.model.snapshot import Snapshot
from service.quote.model.tables import OfferTables
from service.quote.prose.empty import (
    Nearest,
    NearestOption,
    OutsideFilters,
    Supply,
    SupplyLimit,
    TooLarge,
    empty_summary,
    filters_text,
)
from service.quote.prose.names import ProseNames
from service.quote.prose.texts import join_text, text
from service.quote.rank import CandidateKeys, first
from service.quote.resolve import ResolvedRequest

__all__ = ["nothing_fits_summary"]


def _nearest_option(
    evaluation: Evaluation, snapshot: Snapshot, by: RankBy, request: QuoteRequest, *, top_k: bool
) -> NearestOption | None:
    """The best qualifying candidate of ``evaluation`` by ``by`` (cost or time), on the figures the
    request's limits judge."""
    hours, cost = evaluation.limit_figures(limit_rows(request))
    keys = CandidateKeys.of_cells(
        evaluation.qualifying,
        evaluation.cells,
        cost,
        hours,
        offers=snapshot.tables.size,
        id_order=snapshot.tables.id_order,
        cards=evaluation.cards,
        time_value_cny_per_hour=None,
    )
    if keys.size == 0:
        return None
    best = first(keys, by, top_k=top_k)
    column, offer = keys.cell(best)
    chosen = snapshot.tables.offers[offer]
    return NearestOption(
        cards=evaluation.counts[column],
        gpu=chosen.gpu,
        vendor=chosen.vendor,
        cost_cny=float(keys.cost[best]),
        hours=float(keys.hours[best]),
        illustrative=chosen.label == ILLUSTRATIVE_LABEL,
    )


def _fewest_cards(relaxed: Evaluation, snapshot: Snapshot) -> tuple[tuple[int, str], ...]:
    """Per GPU that qualifies once the card counts are lifted, the fewest cards that do: ``(2, "rtx4090")``."""
    tables = snapshot.tables
    columns, offers = np.divmod(relaxed.cells[relaxed.qualifying], tables.size)
    none = np.iinfo(np.int64).max
    fewest = np.full(len(tables.gpu_names), none, dtype=np.int64)
    np.minimum.at(
        fewest, tables.gpu_code.take(offers), np.asarray(relaxed.counts, dtype=np.int64).take(columns)
    )
    return tuple(
        sorted((int(cards), tables.gpu_names[code]) for code, cards in enumerate(fewest) if cards != none)
    )


# How many offers' supply the summary names, the largest first.
_SUPPLIES_NAMED = 3


def _supply_limit(tables: OfferTables, index: int) -> tuple[int, SupplyLimit, int]:
    """The most cards offer ``index`` supplies in one rental, what bounds it and that bound's figure."""
    terms = tables.terms[index]
    rental = terms.max_units * terms.unit_cards
    stock = float(tables.available_cards[index])
    in_all = float(tables.most_units[index]) * terms.unit_cards
    if stock < min(rental, in_all):
        return int(stock), "stock", int(stock)
    if in_all < rental:
        return int(in_all), "rental", int(in_all)
    if terms.spans_machines:
        return rental, "nodes", terms.max_units
    return rental, "machine" if rental == terms.machine_cards else "rental", rental


def _supplies(
    relaxed: Evaluation, evaluation: Evaluation, resolved: ResolvedRequest, snapshot: Snapshot, top_k: bool
) -> tuple[Supply, ...]:
    """Per offer inside the filters that sells fewer cards than asked: its most cards, what bounds them,
    and the count nearest the largest asked that runs the job (``relaxed``: the counts lifted)."""
    tables, asked = snapshot.tables, max(resolved.card_counts or (1,))
    rows = tables.offer_count
    # Each offer's most cards (``_supply_limit``'s, for every offer at once): the least of its stock, its
    # most units in all and one rental's.
    in_all = np.minimum(tables.available_cards, tables.most_units * tables.unit_cards)
    most = np.minimum(in_all, tables.max_units * tables.unit_cards)[:rows]
    short = np.flatnonzero(evaluation.matching[:rows] & (most < asked))
    # The largest first, then by vendor and GPU (their codes follow their names), then in row order; only
    # the offers named are searched for the count nearest, each search reading every cell.
    order = np.lexsort(
        (short, tables.gpu_code.take(short), tables.vendor_code.take(short), -most.take(short))
    )
    return tuple(
        Supply(tables.offers[index].vendor, tables.offers[index].gpu, *_supply_limit(tables, index),
               _nearest_count(relaxed, snapshot, resolved, index, asked, top_k))
        for index in short.take(order[:_SUPPLIES_NAMED]).tolist()
    )  # fmt: skip


def _nearest_count(
    relaxed: Evaluation, snapshot: Snapshot, resolved: ResolvedRequest, index: int, asked: int, top_k: bool
) -> NearestOption | None:
    """Offer ``index``'s qualifying candidate at the most cards up to ``asked`` (the cheapest there)."""
    cells = relaxed.qualifying & (relaxed.cell_offer == index)
    cells &= relaxed.cards.take(relaxed.cells // snapshot.tables.size) <= asked
    if not cells.any():
        return None
    counts = relaxed.cards.take(relaxed.cells // snapshot.tables.size)
    cells &= counts == counts[cells].max()
    masked = msgspec.structs.replace(relaxed, qualifying=cells)
    return _nearest_option(masked, snapshot, "cost", resolved.request, top_k=top_k)


def _too_large(evaluation: Evaluation, resolved: ResolvedRequest, snapshot: Snapshot) -> TooLarge | None:
    """When no offer inside the filters sells enough cards to hold the model: what it needs and the
    largest offer's cards."""
    needed, tables = resolved.memory_needed_gb, snapshot.tables
    matching = evaluation.matching
    if needed is None or not matching.any():
        return None
    most_cards = np.minimum(tables.max_units * tables.unit_cards, tables.available_cards)
    if (matching & (evaluation.min_cards <= most_cards)).any():
        return None
    per_gpu: dict[str, int] = {}
    for index in np.flatnonzero(matching):
        per_gpu[tables.offers[index].gpu] = int(evaluation.min_cards[index])
    largest = int(np.flatnonzero(matching)[np.argmax(most_cards[matching])])
    offer = tables.offers[largest]
    filtered = evaluation.excluded.filters > 0
    return TooLarge(
        needed_gb=needed,
        cards=tuple(sorted((cards, gpu) for gpu, cards in per_gpu.items())),
        largest=NearestOption(
            cards=int(most_cards[largest]),
            gpu=offer.gpu,
            vendor=offer.vendor,
            cost_cny=0.0,
            hours=0.0,
            illustrative=offer.label == ILLUSTRATIVE_LABEL,
        ),
        filtered=filtered,
    )


def _outside_filters(
    relaxed: Evaluation,
    resolved: ResolvedRequest,
    snapshot: Snapshot,
    names: ProseNames,
    snapshot_matching: npt.NDArray[np.bool_],
    counts_shown: tuple[str, ...] = (),
) -> OutsideFilters | None:
    """What the filters alone left out that would run the job: where, which GPUs, what kind of offer."""
    # Only the offers the filters left out: the ones inside them are not what the filters cost.
    outside = relaxed.offers_qualifying() & ~snapshot_matching
    rows = np.flatnonzero(outside)
    offers = [snapshot.tables.offers[index] for index in rows]
    if not offers:
        return None
    by_city = resolved.cities is not None
    places = sorted({offer.city if by_city else offer.region for offer in offers})
    gpus = sorted({offer.gpu for offer in offers}) if resolved.gpus is not None else []
    request = resolved.request
    filtered = filters_text(request, regions=resolved.regions, cities=resolved.cities, gpus=resolved.gpus,
                            vendors=resolved.vendors, names=names,
                            spot_refused=not resolved.risk.allow_spot and bool(snapshot.tables.interruptible.any()),
                            ) + counts_shown  # fmt: skip
    return OutsideFilters(
        places=tuple(places),
        gpus=tuple(gpus),
        clusters=bool(snapshot.tables.spans_machines[rows].all()),
        model=resolved.memory_needed_gb is not None,
        filtered=filtered,
    )


def nothing_fits_summary(
    runs: tuple[Callable[[ResolvedRequest], Evaluation], Callable[[ResolvedRequest], Evaluation]],
    resolved: ResolvedRequest,
    evaluation: Evaluation,
    snapshot: Snapshot,
    names: ProseNames,
    *,
    top_k: bool = True,
) -> str:
    """Why nothing fits, with the nearest option past each limit that alone left candidates out.

    Each limit is lifted on its own (the budget, the deadline, the filters) and the request evaluated again:
    what qualifies then was excluded by that limit only, and the best of it is the nearest option.
    ``runs``: the evaluation as the service runs it, and one billing every row. The nearest options
    read the first: the cheapest and the fastest candidate are billed by a pruned evaluation too (its
    bounds keep every row that can reach either), and a request whose limits read high ends is never
    pruned (``evaluate.pruning``). What is said of the fewest cards, the supply and the filters reads
    every row.
    """
    request, lang = resolved.request, names.lang
    excluded = evaluation.excluded
    nearest = Nearest()
    fast_run, run = runs
    if snapshot.tables.size:
        nearest = _nearest_limits(fast_run, resolved, excluded, snapshot, top_k=top_k)
        fewest: tuple[tuple[int, str], ...] = ()
        supplies: tuple[Supply, ...] = ()
        if resolved.card_counts is not None and (excluded.memory or excluded.capacity):
            lifted = msgspec.structs.replace(
                resolved,
                request=msgspec.structs.replace(request, card_counts=None),
                card_counts=None,
            )
            relaxed = run(lifted)
            if excluded.memory and resolved.memory_needed_gb is not None and resolved.kind.shortened_by_cards:
                fewest = _fewest_cards(relaxed, snapshot)
            if excluded.capacity:
                supplies = _supplies(relaxed, evaluation, resolved, snapshot, top_k)
        counts_shown = (
            (
                text(
                    "filtered_counts",
                    lang,
                    counts=join_text("join_list", map(str, resolved.card_counts), lang),
                ),
            )
            if fewest and resolved.card_counts is not None
            else ()
        )
        outside = None
        if excluded.filters:
            lifted = msgspec.structs.replace(
                resolved,
                request=msgspec.structs.replace(request, min_gpu_memory_gb=None),
                gpus=None,
                regions=None,
                cities=None,
                vendors=None,
                pricing=None,
                risk=msgspec.structs.replace(resolved.risk, allow_spot=True),
            )
            outside = _outside_filters(
                run(lifted), resolved, snapshot, names, evaluation.matching, counts_shown
            )
        nearest = replace(
            nearest,
            fewest_cards=fewest,
            supplies=supplies,
            too_large=_too_large(evaluation, resolved, snapshot),
            outside_filters=outside,
        )
    return empty_summary(
        excluded,
        offers_loaded=snapshot.tables.offer_count,
        lang=lang,
        request=request,
        names=names,
        nearest=nearest,
    )


def _nearest_limits(
    run: Callable[[ResolvedRequest], Evaluation],
    resolved: ResolvedRequest,
    excluded: Excluded,
    snapshot: Snapshot,
    *,
    top_k: bool,
) -> Nearest:
    """The nearest options past the budget and the deadline, each lifted on its own and both together."""
    request = resolved.request

    def lifted(by: RankBy, **limits: None) -> NearestOption | None:
        changed = msgspec.structs.replace(resolved, request=msgspec.structs.replace(request, **limits))
        return _nearest_option(run(changed), snapshot, by, request, top_k=top_k)

    budget, deadline = request.budget_cny is not None, request.deadline_hours is not None
    if budget and deadline:
        if not (excluded.budget or excluded.deadline):
            return Nearest()
        return Nearest(
            cheapest=lifted("cost", budget_cny=None, deadline_hours=None),
            fastest=lifted("time", budget_cny=None, deadline_hours=None),
            cheapest_in_time=lifted("cost", budget_cny=None),
            fastest_in_budget=lifted("time", deadline_hours=None),
        )
    return Nearest(
        cheapest=lifted("cost", budget_cny=None) if budget and excluded.budget else None,
        fastest=lifted("time", deadline_hours=None) if deadline and excluded.deadline else None,
    )
