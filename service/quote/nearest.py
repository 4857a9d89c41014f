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
from service.quote.base.arrays import FloatArray, IntArray
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


# How many supplies the summary names, the largest first.
_SUPPLIES_NAMED = 3
# What bounds an offer's most cards, by code (``_supply_limits``).
_LIMITS: tuple[SupplyLimit, ...] = ("stock", "rental", "nodes", "machine")


def _supply_limits(tables: OfferTables) -> tuple[FloatArray, IntArray, FloatArray]:
    """Per offer row, the most cards it supplies in one rental, what bounds it (a code into ``_LIMITS``)
    and that bound's figure: its stock when less than the rest, its most units in all when fewer than one
    rental's, a cluster's most nodes, else one machine (or one rental of several)."""
    rows = tables.offer_count
    unit_cards, max_units = tables.unit_cards[:rows], tables.max_units[:rows]
    rental = max_units * unit_cards
    stock = tables.available_cards[:rows]
    in_all = tables.most_units[:rows] * unit_cards
    by_stock = stock < np.minimum(rental, in_all)
    by_all = ~by_stock & (in_all < rental)
    nodes = ~by_stock & ~by_all & tables.spans_machines[:rows]
    machine = ~by_stock & ~by_all & ~nodes & (rental == tables.machine_cards[:rows])
    most = np.select([by_stock, by_all], [stock, in_all], default=rental)
    limit = np.select([by_stock, nodes, machine], [0, 2, 3], default=1)
    value = np.select([by_stock, by_all, nodes], [stock, in_all, max_units], default=rental)
    return most, limit, value


def _supplies(
    relaxed: Evaluation, evaluation: Evaluation, resolved: ResolvedRequest, snapshot: Snapshot, top_k: bool
) -> tuple[Supply, ...]:
    """What the offers inside the filters that sell fewer cards than asked supply: per vendor, GPU, most
    cards and what bounds them (one sentence each), the largest first, then by vendor and GPU, and the
    count nearest the largest asked that one of those offers runs the job at (``relaxed``: the counts
    lifted)."""
    tables, asked = snapshot.tables, max(resolved.card_counts or (1,))
    most, limit, value = _supply_limits(tables)
    short = np.flatnonzero(evaluation.matching[: tables.offer_count] & (most < asked))
    vendor, gpu = tables.vendor_code.take(short), tables.gpu_code.take(short)
    # Largest first, then by vendor and GPU (their codes follow their names), then in row order.
    ordered = short.take(np.lexsort((short, gpu, vendor, -most.take(short))))
    # One supply per sentence: vendor, GPU, most cards and what bounds them, first met in that order.
    keys = np.stack(
        [column.take(ordered) for column in (tables.vendor_code, tables.gpu_code, most, limit, value)], axis=1
    )
    _, first_at, sentence = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    sentence = sentence.reshape(-1)
    supplies = []
    for at in np.sort(first_at)[:_SUPPLIES_NAMED].tolist():
        index = int(ordered[at])
        offer = tables.offers[index]
        alike = ordered[sentence == sentence[at]]
        nearest_count = _nearest_count(relaxed, snapshot, resolved, alike, asked, top_k)
        supplies.append(Supply(offer.vendor, offer.gpu, int(most[index]), _LIMITS[int(limit[index])],
                               int(value[index]), nearest_count))  # fmt: skip
    return tuple(supplies)


def _nearest_count(
    relaxed: Evaluation,
    snapshot: Snapshot,
    resolved: ResolvedRequest,
    rows: IntArray,
    asked: int,
    top_k: bool,
) -> NearestOption | None:
    """The qualifying candidate of offers ``rows`` at the most cards up to ``asked`` (the cheapest there)."""
    of_rows = np.zeros(snapshot.tables.size, dtype=np.bool_)
    of_rows[rows] = True
    counts = relaxed.cards.take(relaxed.cells // snapshot.tables.size)
    cells = relaxed.qualifying & of_rows.take(relaxed.cell_offer) & (counts <= asked)
    if not cells.any():
        return None
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
