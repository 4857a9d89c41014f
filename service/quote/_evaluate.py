"""Every (card count × offer) candidate evaluated and billed at once, as (counts × offers) arrays.

Each bound of speed-up, hours and cost (low / expected / high) is worked out here, once, for every
candidate; the quotes a response returns are gathered from these arrays, never billed again.

Stages, one word each (a candidate is one offer at one card count):

- ``matching`` (per offer): inside the request's gpus/regions/cities/vendors/pricing/min memory, and, when hours
  must be converted, its GPU is in the catalog. Failing this counts as ``filters``.
- ``possible``: matching, and the offer supplies exactly n cards (machine size, bundle multiples, node
  limits, stock: else ``capacity``) that hold the model (else ``memory``; both may count).
- ``runnable``: possible at a price the engine may use: fresh, or stale when no fresh candidate qualifies
  (``stale`` counts the stale ones left out, only when fresh candidates qualified).
- ``qualifying``: runnable, within the deadline and budget (``deadline``, ``budget``) and at a card count
  the caller asked for: the candidates ranked and returned.

Deadline and budget compare the expected figures as the response shows them (hours to 0.01 h, money to
the fen, rounded by the same ``cents_array`` that rounds the quotes), so a returned quote never shows a
figure past a limit. ``excluded`` counts only the card counts the caller asked for.

Hours on one card of an offer's GPU are a range too when they are converted from ``reference_gpu``: the
catalog's speed range between the two models (``adapters.gpus.conversion_range``), or the caller's
measured ratio (``workload.speed_ratios``) where given. The low bound pairs the optimistic conversion with
the optimistic scaling end, the high bound the pessimistic with the pessimistic; deadline and budget still
judge the expected figures, and a quote whose high end passes them says so.

The one-card column is always evaluated, asked for or not, so the summary can say what a single card
would cost and take.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import numpy.typing as npt

from adapters.gpus import GpuCatalog, conversion_range
from schemas.quote import Excluded
from service.quote._billing import KIND_CODES, billed_hours
from service.quote._candidates import (
    fewest_meeting_deadline,
    plan_candidates,
    price_plans,
    serving_candidates,
)
from service.quote._locality import copy_hours, data_fees, elsewhere
from service.quote._memory import min_cards
from service.quote._money import cents_array
from service.quote._resolve import ResolvedRequest
from service.quote._scaling import ScalingColumns, speedup_columns
from service.quote._tables import OfferTables

__all__ = ["Evaluation", "Figure", "evaluate"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class Figure(IntEnum):
    """Rows of ``Evaluation.figures``, each a (counts × offers) array of one figure per candidate.

    A range's bounds are consecutive rows, low first: a quote takes each range as one slice.
    """

    UNITS = 0  # rented: cards, nodes, bundles or packages
    HOURLY_RATE_CNY = 1
    HOURS_LOW = 2  # wall-clock, on the high speed-up
    HOURS_EXPECTED = 3
    HOURS_HIGH = 4  # on the low speed-up
    BILLED_HOURS = 5  # of the expected hours
    COST_LOW = 6  # each bound billed on its own hours
    COST_EXPECTED = 7
    COST_HIGH = 8
    STORAGE_CNY = 9  # of the expected cost: the data set stored over the expected hours (``_locality``)
    TRAFFIC_CNY = 10  # of every cost bound: the data set copied in from another city


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Per-offer columns ``(offers,)``, per-candidate masks ``(counts, offers)`` and their figures.

    Candidates are laid out count by count, so each per-offer column broadcasts along a contiguous row.
    """

    counts: tuple[int, ...]
    one_card_column: int
    one_card_hours: FloatArray  # (3, offers) low / expected / high hours on one card of the offer's GPU
    conversion: FloatArray  # (3, offers) low / expected / high speed over the reference GPU; 1 unconverted
    min_cards: FloatArray  # (offers,) memory minimum, 1 without a memory check
    stale: BoolArray  # (offers,)
    matching: BoolArray  # (offers,)
    figures: FloatArray  # (Figure, counts, offers): one allocation, gathered for the chosen in one index
    machine_code: IntArray  # (offers,) column of the speed-up tables: its machine size and interconnect
    speedup_low: FloatArray  # (counts, columns), gathered per offer by ``machine_code``
    speedup_expected: FloatArray
    speedup_high: FloatArray
    runnable: BoolArray
    qualifying: BoolArray
    used_stale: bool
    excluded: Excluded
    scaling: ScalingColumns | None = None  # each column's curve and cross-node factor, for the notes
    remote: BoolArray | None = None  # (offers,) outside ``workload.data_city``

    @property
    def base_hours(self) -> FloatArray:
        """Expected hours on one card of each offer's GPU, ``(offers,)``."""
        hours: FloatArray = self.one_card_hours[1]
        return hours

    @property
    def hours_expected(self) -> FloatArray:
        hours: FloatArray = self.figures[Figure.HOURS_EXPECTED]
        return hours

    @property
    def cost_expected(self) -> FloatArray:
        cost: FloatArray = self.figures[Figure.COST_EXPECTED]
        return cost


def _lookup(names: tuple[str, ...], chosen: frozenset[str] | None) -> npt.NDArray[np.bool_]:
    return np.array([chosen is None or name in chosen for name in names], dtype=np.bool_)


def _filter_mask(tables: OfferTables, resolved: ResolvedRequest) -> BoolArray:
    mask = _lookup(tables.gpu_names, resolved.gpus)[tables.gpu_code]
    if resolved.regions is not None:
        mask &= _lookup(tables.region_names, resolved.regions)[tables.region_code]
    if resolved.cities is not None:
        mask &= _lookup(tables.city_names, resolved.cities)[tables.city_code]
    if resolved.vendors is not None:
        mask &= _lookup(tables.vendor_names, resolved.vendors)[tables.vendor_code]
    if resolved.pricing is not None:
        kinds = np.array([kind in resolved.pricing for kind in (*KIND_CODES, "mixed")], dtype=np.bool_)
        mask &= kinds[tables.kind_code]
    minimum_memory = resolved.request.min_gpu_memory_gb
    if minimum_memory is not None:
        mask &= tables.gpu_memory_gb >= minimum_memory
    return mask


def _conversion(tables: OfferTables, resolved: ResolvedRequest, catalog: GpuCatalog) -> FloatArray:
    """``(3, offers)``: each offer's low / expected / high speed over the reference GPU.

    1 at every end without a reference; the caller's measured ratio at every end where given; NaN for a
    GPU the catalog does not rate (its hours cannot be converted, and it is dropped with the filters).
    """
    reference = resolved.reference_gpu
    if reference is None:
        return np.ones((3, tables.size))
    key = (id(catalog), reference, tuple(sorted(resolved.speed_ratios.items())))
    cached = tables.conversions.get(key)
    if cached is not None:
        return cached[1]
    if len(tables.conversions) >= _CONVERSIONS_KEPT:
        tables.conversions.clear()
    by_gpu = np.full((len(tables.gpu_names), 3), np.nan)
    for code, name in enumerate(tables.gpu_names):
        if name == reference:
            by_gpu[code] = 1.0
        elif name in resolved.speed_ratios:
            by_gpu[code] = resolved.speed_ratios[name]
        elif name in catalog:
            by_gpu[code] = conversion_range(catalog, reference, name)
    factors: FloatArray = by_gpu[tables.gpu_code].T
    factors.flags.writeable = False  # shared by the requests with the same reference
    tables.conversions[key] = (catalog, factors)
    return factors


_CONVERSIONS_KEPT = 64  # (catalog, reference, measured ratios) kept per snapshot


def _supplies(units: FloatArray, cards: FloatArray, tables: OfferTables) -> BoolArray:
    """Whether renting ``units`` gives exactly the cards asked for, within the offer's limits and stock."""
    billed_cards = units * tables.unit_cards
    supplies = (units <= tables.max_units) & (billed_cards <= tables.available_cards)
    if tables.whole_units_only.any():
        # A bundle supplies exactly n cards only when n is a whole number of bundles.
        supplies &= ~tables.whole_units_only | (billed_cards == cards)
    return supplies


def _bill(
    tables: OfferTables,
    cards: FloatArray,
    one_card_hours: FloatArray,
    speedups: tuple[FloatArray, FloatArray, FloatArray],
    column_code: IntArray,
    extra_hours: FloatArray,
    units_rented: FloatArray | None = None,
    needed: BoolArray | None = None,
) -> FloatArray:
    """Every figure of every candidate, billed by the one rule in ``_billing``, in one block.

    Each hours bound divides that bound's one-card hours by the matching speed-up: the fewest hours by
    the highest speed-up, the most by the lowest. ``units_rented`` replaces the one-rental units (a
    serving job's replicas placed over several machines, ``_candidates.serving_units``). With
    ``needed`` (``_needed``), the counts where few candidates can be read bill only those; their other
    hours and costs are NaN.
    """
    figures = np.empty((len(Figure), cards.size, tables.size))
    figures[Figure.STORAGE_CNY :] = 0.0  # data fees, added by ``_add_data_fees`` when a data set is given
    units = figures[Figure.UNITS]
    np.divide(cards[:, None], tables.unit_cards, out=units)
    np.ceil(units, out=units)
    np.maximum(tables.min_units, units, out=units)
    if units_rented is not None:
        units[...] = units_rented
    hourly_rate = np.multiply(units, tables.unit_rate_cny_per_hour, out=figures[Figure.HOURLY_RATE_CNY])
    # The three bounds in one pass each: hours rows low / expected / high divide the one-card hours of
    # the same bound by the high / expected / low speed-up, gathered per offer by its column.
    speedup_low, speedup_expected, speedup_high = speedups
    stacked = np.stack((speedup_high, speedup_expected, speedup_low))
    dense = cards.size if needed is None else _dense_rows(needed)
    block = figures[:, :dense]
    hours = block[Figure.HOURS_LOW : Figure.HOURS_HIGH + 1]
    np.take(stacked[:, :dense], column_code, axis=2, out=hours)
    np.divide(one_card_hours[:, None, :], hours, out=hours)
    hours += extra_hours  # waiting for data copied from another city: not shortened by more cards
    # Each bound billed on its own hours; the cost rows hold the billed hours until multiplied by the rate.
    billed = billed_hours(
        hours,
        tables.granularity_hours,
        tables.min_billed_hours,
        out=block[Figure.COST_LOW : Figure.COST_HIGH + 1],
    )
    block[Figure.BILLED_HOURS] = billed[1]
    billed *= hourly_rate[:dense]
    if needed is not None and dense < cards.size:
        # The sparse counts: only the candidates a response can read, the same arithmetic cell by cell;
        # the rest stays NaN (never quoted, ranked or counted).
        figures[Figure.HOURS_LOW : Figure.COST_HIGH + 1, dense:] = np.nan
        flat = np.flatnonzero(needed[dense:]) + dense * tables.size  # positions in a (counts, rows) grid
        rows, offers = np.divmod(flat, tables.size)
        cell_speedups = stacked.reshape(3, -1).take(rows * stacked.shape[2] + column_code[offers], axis=1)
        cell_hours = one_card_hours.take(offers, axis=1) / cell_speedups
        cell_hours += np.broadcast_to(extra_hours, (tables.size,)).take(offers)
        cell_billed = billed_hours(
            cell_hours, tables.granularity_hours.take(offers), tables.min_billed_hours.take(offers)
        )
        grid = figures.reshape(len(Figure), -1)
        cell_billed_expected = cell_billed[1].copy()
        cell_billed *= grid[Figure.HOURLY_RATE_CNY].take(flat)
        for at in range(3):
            grid[Figure.HOURS_LOW + at][flat] = cell_hours[at]
            grid[Figure.COST_LOW + at][flat] = cell_billed[at]
        grid[Figure.BILLED_HOURS][flat] = cell_billed_expected
    return figures


# A count at which fewer than this share of the candidates can be read is billed cell by cell.
_SPARSE_SHARE = 0.5


def _dense_rows(needed: BoolArray) -> int:
    """How many leading counts ``_bill`` bills whole: up to the last one with many candidates needed."""
    dense = np.flatnonzero(np.count_nonzero(needed, axis=1) >= _SPARSE_SHARE * needed.shape[1])
    return int(dense[-1]) + 1 if dense.size else 0


def _needed(tables: OfferTables, requested: BoolArray, counts: int, one_card_column: int) -> BoolArray:
    """``(counts, rows)``: the candidates whose hours and costs a response can read: the requested ones,
    the one-card column (the summary's single card), and, where a combined plan is needed, the products
    it combines (``price_plans`` compares them). A plan left NaN is not priced (``plan_costs``)."""
    needed = np.array(np.broadcast_to(requested, (counts, tables.size)))
    needed[one_card_column] = True
    if tables.plans:
        count_at, plan_at = np.nonzero(needed[:, tables.offer_count :])
        needed[count_at[:, None], tables.plan_arrays.part_rows[plan_at]] = True
    return needed


def _batch_candidates(
    tables: OfferTables,
    resolved: ResolvedRequest,
    rows: tuple[BoolArray, FloatArray, FloatArray],
    speedups_at: Callable[[Sequence[int]], ScalingColumns],
    max_plan_cards: int,
) -> tuple[tuple[int, ...], BoolArray]:
    """The counts a batch job is evaluated at and which candidates are quoted: the requested counts, or
    every count each row sells (and the fewest meeting the deadline). ``rows``: matching, the memory
    minimum and the expected one-card hours."""
    matching, fewest_cards, one_card_hours = rows
    if resolved.card_counts is not None:
        return resolved.evaluated_counts, np.isin(resolved.evaluated_counts, resolved.card_counts)[:, None]
    deadline_hours = resolved.request.deadline_hours
    deadline_cards = None
    if deadline_hours is not None:
        deadline_cards = fewest_meeting_deadline(
            tables, speedups_at((1,)), one_card_hours, deadline_hours, matching, fewest_cards, max_plan_cards
        )
    return plan_candidates(tables, resolved.evaluated_counts, max_plan_cards, deadline_cards)


def evaluate(
    tables: OfferTables,
    resolved: ResolvedRequest,
    *,
    catalog: GpuCatalog,
    now_s: float,
    price_max_age_s: float,
    cross_node_factor: float,
    cross_city_mbps: float = 500.0,
    max_plan_cards: int = 512,
) -> Evaluation:
    request = resolved.request
    conversion = _conversion(tables, resolved, catalog)
    # Most hours on the lowest speed: rows low / expected / high of hours pair with high / expected / low.
    one_card_hours: FloatArray = resolved.job_hours / conversion[::-1]
    finite = np.isfinite(one_card_hours)
    matching = _filter_mask(tables, resolved) & finite[0] & finite[1] & finite[2]
    stale = (now_s - tables.fetched_at_s) > price_max_age_s
    if resolved.memory_needed_gb is None:
        fewest_cards = np.ones(tables.size)
    else:
        fewest_cards = min_cards(resolved.memory_needed_gb, tables.gpu_memory_gb)
    workload = request.workload

    def speedups_at(card_counts: Sequence[int]) -> ScalingColumns:
        return speedup_columns(
            card_counts,
            tables.scaling_keys,
            tables.scaling_code,
            curve=None if request.scaling is None else resolved.curve,
            communication=workload.communication,
            cross_node_factor=workload.cross_node_factor,
            operator_factor=cross_node_factor,
            serving=resolved.serving,
        )

    units_rented: FloatArray | None
    placed: BoolArray | None
    if resolved.serving:
        evaluated_counts, requested, units_rented, placed = serving_candidates(
            tables, fewest_cards, resolved.replicas, resolved.card_counts, matching
        )
    else:
        evaluated_counts, requested = _batch_candidates(
            tables, resolved, (matching, fewest_cards, one_card_hours[1]), speedups_at, max_plan_cards
        )
        units_rented = placed = None
    counts = np.array(evaluated_counts, dtype=np.float64)
    scaling = speedups_at(evaluated_counts)
    remote = elsewhere(tables, resolved.data_city)
    figures = _bill(
        tables,
        counts,
        one_card_hours,
        (scaling.low, scaling.expected, scaling.high),
        scaling.code,
        extra_hours=np.where(remote, copy_hours(workload.dataset_gb or 0.0, cross_city_mbps), 0.0),
        units_rented=units_rented,
        needed=None
        if resolved.serving
        else _needed(tables, requested, counts.size, evaluated_counts.index(1)),
    )
    if tables.plans:
        # Combined plans: the cheapest combination of packages and card-hours for each bound's hours,
        # quoted only where it beats every product it combines on its own.
        bounds = [(Figure.HOURS_LOW + at, Figure.COST_LOW + at) for at in range(3)]
        requested = requested & price_plans(tables, figures, counts, bounds, Figure.COST_EXPECTED)
    _add_data_fees(figures, tables, remote, workload.dataset_gb)
    capacity_ok = placed if placed is not None else _supplies(figures[Figure.UNITS], counts[:, None], tables)
    # An offer whose most cards cannot hold the model fails on memory at every count.
    holds_model = fewest_cards <= tables.max_units * tables.unit_cards
    memory_ok = (counts[:, None] >= fewest_cards) & holds_model
    possible = matching & capacity_ok & memory_ok
    deadline_ok = budget_ok = None
    within_limits = possible
    if request.deadline_hours is not None:
        deadline_ok = cents_array(figures[Figure.HOURS_EXPECTED]) / 100 <= request.deadline_hours
        within_limits = within_limits & deadline_ok
    if request.budget_cny is not None:
        budget_ok = cents_array(figures[Figure.COST_EXPECTED]) / 100 <= request.budget_cny
        within_limits = within_limits & budget_ok
    fresh = ~stale
    requested_within = within_limits & requested
    qualifying = requested_within & fresh
    used_stale = not qualifying.any() and bool(requested_within.any())
    if used_stale:
        qualifying = requested_within

    def requested_count(mask: BoolArray) -> int:
        """Candidates in ``mask`` at a card count the caller asked for."""
        return int(np.count_nonzero(mask & requested))

    excluded = Excluded(
        filters=int(np.count_nonzero(~matching & np.broadcast_to(requested, (counts.size, tables.size)))),
        capacity=requested_count(matching & ~capacity_ok),
        memory=requested_count(matching & ~memory_ok),
        deadline=0 if deadline_ok is None else requested_count(possible & ~deadline_ok),
        budget=0 if budget_ok is None else requested_count(possible & ~budget_ok),
        # Stale prices are a reason only when fresh candidates qualified and the stale ones were dropped;
        # with nothing qualifying, or the stale fallback in use, staleness left nothing out.
        stale=requested_count(matching & stale) if qualifying.any() and not used_stale else 0,
    )
    return Evaluation(
        counts=evaluated_counts,
        one_card_column=evaluated_counts.index(1),
        one_card_hours=one_card_hours,
        conversion=conversion,
        min_cards=fewest_cards,
        stale=stale,
        matching=matching,
        figures=figures,
        machine_code=scaling.code,
        speedup_low=scaling.low,
        speedup_expected=scaling.expected,
        speedup_high=scaling.high,
        runnable=possible if used_stale else possible & fresh,
        qualifying=qualifying,
        used_stale=used_stale,
        excluded=excluded,
        scaling=scaling,
        remote=remote,
    )


def _add_data_fees(
    figures: FloatArray, tables: OfferTables, remote: BoolArray, dataset_gb: float | None
) -> None:
    """Storage over each bound's hours and the copy's traffic, added to the cost bounds (``_locality``)."""
    if not dataset_gb:
        return
    storage_per_gb_hour, traffic_per_gb = data_fees(tables, remote)
    traffic = dataset_gb * traffic_per_gb
    figures[Figure.TRAFFIC_CNY] = traffic
    for hours_row, cost_row in (
        (Figure.HOURS_LOW, Figure.COST_LOW),
        (Figure.HOURS_EXPECTED, Figure.COST_EXPECTED),
        (Figure.HOURS_HIGH, Figure.COST_HIGH),
    ):
        storage = dataset_gb * storage_per_gb_hour * figures[hours_row]
        if cost_row == Figure.COST_EXPECTED:
            figures[Figure.STORAGE_CNY] = storage
        figures[cost_row] += storage + traffic
