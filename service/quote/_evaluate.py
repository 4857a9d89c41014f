"""Every (offer × card count) candidate evaluated at once, as (offers × counts) arrays.

Order of exclusion, and how ``excluded`` counts it (only the card counts the caller asked for):

1. ``filters``: the offer is outside the request's gpus/regions/vendors/pricing/min memory, or its GPU is
   missing from the catalog when hours must be converted.
2. ``capacity`` and ``memory`` (either or both): the offer cannot supply exactly n cards (machine size,
   bundle multiples, node limits, stock), or n cards cannot hold the model / the offer can never reach
   the cards it needs.
3. ``deadline`` and ``budget`` on the expected figures, compared as the response shows them (hours to
   0.01 h, money to the fen), so a returned quote never shows a figure past a limit.
4. ``stale``: the price is older than the maximum age, unless no fresh candidate qualifies; then stale
   candidates are used (and warned about) rather than answering with nothing.

The one-card column is always evaluated, asked for or not, so the summary can say what a single card
would cost and take.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from adapters.gpus import GpuCatalog
from schemas.quote import Excluded
from service.quote._billing import KIND_CODES, billed_hours_array
from service.quote._memory import min_cards_array
from service.quote._money import cents_array
from service.quote._resolve import ResolvedRequest
from service.quote._scaling import speedup_table
from service.quote._tables import OfferTables

__all__ = ["Evaluation", "evaluate"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class Evaluation:
    counts: tuple[int, ...]
    one_card_column: int
    base_hours: FloatArray  # (offers,) hours on one card of the offer's GPU
    min_cards: FloatArray  # (offers,) memory minimum, 1 without a memory check
    stale: BoolArray  # (offers,)
    considered: BoolArray  # (offers,) passed the filters
    units: FloatArray  # (offers, counts)
    speedup_low: FloatArray
    speedup_high: FloatArray
    hours_expected: FloatArray
    cost_expected: FloatArray
    runnable: BoolArray  # (offers, counts) feasible, fresh unless falling back; limits aside
    usable: BoolArray  # runnable and within the limits
    qualifying: BoolArray  # usable and a requested count
    used_stale: bool
    excluded: Excluded


def _lookup(names: tuple[str, ...], chosen: frozenset[str] | None) -> npt.NDArray[np.bool_]:
    return np.array([chosen is None or name in chosen for name in names], dtype=np.bool_)


def _filter_mask(tables: OfferTables, resolved: ResolvedRequest) -> BoolArray:
    mask = _lookup(tables.gpu_names, resolved.gpus)[tables.gpu_code]
    if resolved.regions is not None:
        mask &= _lookup(tables.region_names, resolved.regions)[tables.region_code]
    if resolved.vendors is not None:
        mask &= _lookup(tables.vendor_names, resolved.vendors)[tables.vendor_code]
    if resolved.pricing is not None:
        kinds = np.array([kind in resolved.pricing for kind in KIND_CODES], dtype=np.bool_)
        mask &= kinds[tables.kind_code]
    minimum_memory = resolved.request.min_gpu_memory_gb
    if minimum_memory is not None:
        mask &= tables.gpu_memory_gb >= minimum_memory
    return mask


def _base_hours(tables: OfferTables, resolved: ResolvedRequest, catalog: GpuCatalog) -> FloatArray:
    gpu_hours = resolved.request.workload.gpu_hours
    if resolved.reference_gpu is None:
        return np.full(tables.size, gpu_hours)
    # A GPU the catalog does not rate cannot be converted: NaN hours, dropped with the filters.
    perf_index = np.array(
        [catalog.get(name).perf_index if name in catalog else np.nan for name in tables.gpu_names]
    )
    reference_index = catalog.get(resolved.reference_gpu).perf_index
    converted: FloatArray = gpu_hours * reference_index / perf_index[tables.gpu_code]
    return converted


def evaluate(
    tables: OfferTables,
    resolved: ResolvedRequest,
    *,
    catalog: GpuCatalog,
    now_s: float,
    price_max_age_s: float,
    cross_node_factor: float,
) -> Evaluation:
    request = resolved.request
    counts = np.array(resolved.evaluated_counts, dtype=np.float64)
    requested = np.isin(counts, resolved.card_counts)
    base_hours = _base_hours(tables, resolved, catalog)
    considered = _filter_mask(tables, resolved) & np.isfinite(base_hours)
    stale = (now_s - tables.fetched_at_s) > price_max_age_s
    if resolved.memory_needed_gb is None:
        min_cards = np.ones(tables.size)
    else:
        min_cards = min_cards_array(resolved.memory_needed_gb, tables.gpu_memory_gb)

    cards = counts[None, :]
    unit_cards = tables.unit_cards[:, None]
    units = np.maximum(tables.min_units[:, None], np.ceil(cards / unit_cards))
    billed_cards = units * unit_cards
    capacity_ok = (units <= tables.max_units[:, None]) & (billed_cards <= tables.available_cards[:, None])
    if tables.whole_units_only.any():
        # A bundle supplies exactly n cards only when n is a whole number of bundles.
        capacity_ok &= ~tables.whole_units_only[:, None] | (billed_cards == cards)
    reachable = min_cards <= tables.max_units * tables.unit_cards
    memory_ok = (cards >= min_cards[:, None]) & reachable[:, None]

    table_low, table_high = speedup_table(
        resolved.evaluated_counts, tables.machine_sizes, resolved.curve, cross_node_factor
    )
    speedup_low, speedup_high = table_low[tables.machine_code], table_high[tables.machine_code]
    hours_expected = base_hours[:, None] / ((speedup_low + speedup_high) * 0.5)
    billed = billed_hours_array(
        hours_expected, tables.granularity_hours[:, None], tables.min_billed_hours[:, None]
    )
    cost_expected = units * tables.unit_rate_cny_per_hour[:, None] * billed

    feasible = considered[:, None] & capacity_ok & memory_ok
    within = feasible
    deadline_ok = budget_ok = None
    if request.deadline_hours is not None:
        deadline_ok = cents_array(hours_expected) / 100 <= request.deadline_hours
        within = within & deadline_ok
    if request.budget_cny is not None:
        budget_ok = cents_array(cost_expected) / 100 <= request.budget_cny
        within = within & budget_ok
    fresh = within & ~stale[:, None]
    used_stale = not np.any(fresh & requested) and bool(np.any(within & requested))
    usable = within if used_stale else fresh
    runnable = feasible if used_stale else feasible & ~stale[:, None]
    qualifying = usable & requested

    asked = considered[:, None] & requested
    asked_feasible = feasible & requested
    count = np.count_nonzero
    excluded = Excluded(
        filters=(tables.size - int(count(considered))) * int(count(requested)),
        capacity=int(count(asked & ~capacity_ok)),
        memory=int(count(asked & ~memory_ok)),
        deadline=0 if deadline_ok is None else int(count(asked_feasible & ~deadline_ok)),
        budget=0 if budget_ok is None else int(count(asked_feasible & ~budget_ok)),
        stale=0 if used_stale else int(count(asked & stale[:, None])),
    )
    return Evaluation(
        counts=resolved.evaluated_counts,
        one_card_column=resolved.evaluated_counts.index(1),
        base_hours=base_hours,
        min_cards=min_cards,
        stale=stale,
        considered=considered,
        units=units,
        speedup_low=speedup_low,
        speedup_high=speedup_high,
        hours_expected=hours_expected,
        cost_expected=cost_expected,
        runnable=runnable,
        usable=usable,
        qualifying=qualifying,
        used_stale=used_stale,
        excluded=excluded,
    )
