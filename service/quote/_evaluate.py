"""Every (card count × offer) candidate evaluated and billed at once, as (counts × offers) arrays.

Each bound of speed-up, hours and cost (low / expected / high) is worked out here, once, for every
candidate; the quotes a response returns are gathered from these arrays, never billed again.

Stages, one word each (a candidate is one offer at one card count):

- ``matching`` (per offer): inside the request's gpus/regions/vendors/pricing/min memory, and, when hours
  must be converted, its GPU is in the catalog. Failing this counts as ``filters``.
- ``possible``: matching, and the offer supplies exactly n cards (machine size, bundle multiples, node
  limits, stock: else ``capacity``) that hold the model (else ``memory``; both may count).
- ``runnable``: possible at a price the engine may use: fresh, or stale when no fresh candidate qualifies
  (``stale`` counts the stale ones left out). Limits aside: the single-card comparison is chosen here.
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

from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import numpy.typing as npt

from adapters.gpus import GpuCatalog, conversion_range
from schemas.quote import Excluded
from service.quote._billing import KIND_CODES, billed_hours
from service.quote._memory import min_cards
from service.quote._money import cents_array
from service.quote._resolve import ResolvedRequest
from service.quote._scaling import speedup_table
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
    machine_code: IntArray  # (offers,) column of the speed-up tables
    speedup_low: FloatArray  # (counts, machine sizes), gathered per offer by ``machine_code``
    speedup_expected: FloatArray
    speedup_high: FloatArray
    runnable: BoolArray
    qualifying: BoolArray
    used_stale: bool
    excluded: Excluded

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
    if resolved.vendors is not None:
        mask &= _lookup(tables.vendor_names, resolved.vendors)[tables.vendor_code]
    if resolved.pricing is not None:
        kinds = np.array([kind in resolved.pricing for kind in KIND_CODES], dtype=np.bool_)
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
    by_gpu = np.full((len(tables.gpu_names), 3), np.nan)
    for code, name in enumerate(tables.gpu_names):
        if name == reference:
            by_gpu[code] = 1.0
        elif name in resolved.speed_ratios:
            by_gpu[code] = resolved.speed_ratios[name]
        elif name in catalog:
            by_gpu[code] = conversion_range(catalog, reference, name)
    factors: FloatArray = by_gpu[tables.gpu_code].T
    return factors


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
) -> FloatArray:
    """Every figure of every candidate, billed by the one rule in ``_billing``, in one block.

    Each hours bound divides that bound's one-card hours by the matching speed-up: the fewest hours by
    the highest speed-up, the most by the lowest.
    """
    figures = np.empty((len(Figure), cards.size, tables.size))
    units = figures[Figure.UNITS]
    np.divide(cards[:, None], tables.unit_cards, out=units)
    np.ceil(units, out=units)
    np.maximum(tables.min_units, units, out=units)
    hourly_rate = np.multiply(units, tables.unit_rate_cny_per_hour, out=figures[Figure.HOURLY_RATE_CNY])
    granularity, minimum = tables.granularity_hours, tables.min_billed_hours
    speedup_low, speedup_expected, speedup_high = speedups
    hours_low, hours_expected, hours_high = one_card_hours
    for hours_row, base_hours, speedup, billed_row, cost_row in (
        (Figure.HOURS_LOW, hours_low, speedup_high, Figure.COST_LOW, Figure.COST_LOW),
        (Figure.HOURS_EXPECTED, hours_expected, speedup_expected, Figure.BILLED_HOURS, Figure.COST_EXPECTED),
        (Figure.HOURS_HIGH, hours_high, speedup_low, Figure.COST_HIGH, Figure.COST_HIGH),
    ):
        # Each offer's speed-ups by its machine size (``take`` gathers several times faster than indexing).
        hours = np.take(speedup, tables.machine_code, axis=1, out=figures[hours_row])
        np.divide(base_hours, hours, out=hours)
        billed = billed_hours(hours, granularity, minimum, out=figures[billed_row])
        np.multiply(hourly_rate, billed, out=figures[cost_row])
    return figures


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
    requested = np.isin(counts, resolved.card_counts)[:, None]
    conversion = _conversion(tables, resolved, catalog)
    # Most hours on the lowest speed: rows low / expected / high of hours pair with high / expected / low.
    one_card_hours: FloatArray = request.workload.gpu_hours / conversion[::-1]
    matching = _filter_mask(tables, resolved) & np.isfinite(one_card_hours).all(axis=0)
    stale = (now_s - tables.fetched_at_s) > price_max_age_s
    if resolved.memory_needed_gb is None:
        fewest_cards = np.ones(tables.size)
    else:
        fewest_cards = min_cards(resolved.memory_needed_gb, tables.gpu_memory_gb)
    speedups = speedup_table(
        resolved.evaluated_counts, tables.machine_sizes, resolved.curve, cross_node_factor
    )
    figures = _bill(tables, counts, one_card_hours, speedups)

    capacity_ok = _supplies(figures[Figure.UNITS], counts[:, None], tables)
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
        filters=(tables.size - int(np.count_nonzero(matching))) * int(np.count_nonzero(requested)),
        capacity=requested_count(matching & ~capacity_ok),
        memory=requested_count(matching & ~memory_ok),
        deadline=0 if deadline_ok is None else requested_count(possible & ~deadline_ok),
        budget=0 if budget_ok is None else requested_count(possible & ~budget_ok),
        stale=0 if used_stale else requested_count(matching & ~fresh),
    )
    speedup_low, speedup_expected, speedup_high = speedups
    return Evaluation(
        counts=resolved.evaluated_counts,
        one_card_column=resolved.evaluated_counts.index(1),
        one_card_hours=one_card_hours,
        conversion=conversion,
        min_cards=fewest_cards,
        stale=stale,
        matching=matching,
        figures=figures,
        machine_code=tables.machine_code,
        speedup_low=speedup_low,
        speedup_expected=speedup_expected,
        speedup_high=speedup_high,
        runnable=possible if used_stale else possible & fresh,
        qualifying=qualifying,
        used_stale=used_stale,
        excluded=excluded,
    )
