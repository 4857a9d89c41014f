"""The figures of every candidate an evaluation bills: what ``Figure`` rows hold and how they are filled.

``bill`` lays out the figures every billed cell needs (``Figure`` rows up to ``EVERY_CELL``: what the
deadline, the budget, the ranking and the single-card comparison read) as one ``(rows, cells)`` block
over the cells the layout bills (``_layout``: the dense counts' whole rows, then the needed cells of the
others): the units and hourly rate copied from the layout, the expected hours divided from the one-card
hours by the expected speed-up, billed by the one rule in ``_billing``, and the data fees zero until
``add_data_fees`` adds a data set's storage and traffic (``_locality``). The low and high bounds only a
returned quote shows are billed for its cells alone (``bounds_at``), by the same arithmetic, so a
request's work follows the cells a response can read, not the (counts × rows) grid.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import numpy.typing as npt

from service.quote._billing import billed_hours
from service.quote._layout import GatheredSpeedups, Layout
from service.quote._locality import data_fees
from service.quote._tables import OfferTables

__all__ = [
    "EVERY_CELL",
    "BoundTerms",
    "Figure",
    "add_data_fees",
    "bill",
    "bound_hours",
    "bounds_at",
    "fees_per_offer",
    "unknown_hours",
]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


class Figure(IntEnum):
    """Rows of a cell's figures: those up to ``EVERY_CELL`` are billed for every cell
    (``Evaluation.figures``), the low and high bounds for the returned ones (``bounds_at``)."""

    UNITS = 0  # rented: cards, nodes, bundles or packages
    HOURLY_RATE_CNY = 1
    HOURS_EXPECTED = 2  # wall-clock
    BILLED_HOURS = 3  # of the expected hours
    COST_EXPECTED = 4
    STORAGE_CNY = 5  # of the expected cost: the data set stored over the expected hours (``_locality``)
    TRAFFIC_CNY = 6  # of every cost bound: the data set copied in from another city
    HOURS_LOW = 7  # on the high speed-up
    HOURS_HIGH = 8  # on the low speed-up
    COST_LOW = 9  # each bound billed on its own hours
    COST_HIGH = 10


EVERY_CELL = Figure.TRAFFIC_CNY + 1


def unknown_hours() -> np.errstate:
    """The floating-point state for arithmetic over every billed cell: an offer whose one-card hours
    are unknown (a GPU the catalog does not rate) has NaN or infinite figures, never kept."""
    return np.errstate(over="ignore", invalid="ignore")


def _hours(
    one_card_hours: FloatArray, speedups: FloatArray, extra_hours: FloatArray | None, *, out: FloatArray
) -> None:
    """Wall-clock hours into ``out``: the one-card hours over the speed-up, plus the wait for data
    copied from another city (not shortened by more cards)."""
    np.divide(one_card_hours, speedups, out=out)
    if extra_hours is not None:
        out += extra_hours


def bill(
    tables: OfferTables,
    layout: Layout,
    one_card_hours: FloatArray,
    speedups: GatheredSpeedups,
    extra_hours: FloatArray | None,
) -> FloatArray:
    """The figures every cell the layout bills needs, ``(EVERY_CELL, cells)`` (``_layout``): the dense
    counts' whole rows billed row by row, then the few needed cells of the other counts one by one."""
    figures = np.empty((EVERY_CELL, layout.cells.size))
    figures[Figure.UNITS : Figure.HOURLY_RATE_CNY + 1] = layout.units_rate
    figures[Figure.STORAGE_CNY :] = 0.0  # the data fees, added by ``add_data_fees`` with a data set
    hours, billed, cost = (
        figures[Figure.HOURS_EXPECTED],
        figures[Figure.BILLED_HOURS],
        figures[Figure.COST_EXPECTED],
    )
    rate = figures[Figure.HOURLY_RATE_CNY]
    dense = slice(None, layout.dense * tables.size)
    dense_shape = (layout.dense, tables.size)
    dense_hours = hours[dense].reshape(dense_shape)
    _hours(one_card_hours[1], speedups.dense, extra_hours, out=dense_hours)
    billed_hours(
        dense_hours,
        tables.granularity_hours,
        tables.min_billed_hours,
        out=billed[dense].reshape(dense_shape),
    )
    sparse = slice(dense.stop, None)
    if dense.stop < layout.cells.size:
        offers = layout.cell_offer[sparse]
        extra = None if extra_hours is None else extra_hours.take(offers)
        _hours(one_card_hours[1].take(offers), speedups.sparse, extra, out=hours[sparse])
        billed_hours(hours[sparse], layout.sparse_terms[0], layout.sparse_terms[1], out=billed[sparse])
    np.multiply(billed, rate, out=cost)
    return figures


def add_data_fees(
    figures: FloatArray, cell_offer: IntArray, fees: tuple[FloatArray, FloatArray] | None
) -> None:
    """Storage over the expected hours and the copy's traffic, added to the expected cost;
    ``cell_offer``: the row of each cell of ``figures``; ``fees``: ``DataFees.per_offer``."""
    if fees is None:
        return
    storage_per_hour, traffic = fees
    figures[Figure.TRAFFIC_CNY] = traffic.take(cell_offer)
    with unknown_hours():
        storage = storage_per_hour.take(cell_offer) * figures[Figure.HOURS_EXPECTED]
        figures[Figure.STORAGE_CNY] = storage
        figures[Figure.COST_EXPECTED] += storage + figures[Figure.TRAFFIC_CNY]


def fees_per_offer(
    tables: OfferTables, remote: BoolArray, dataset_gb: float | None
) -> tuple[FloatArray, FloatArray] | None:
    """Per offer: a data set's storage CNY per hour and its copy's traffic CNY (``_locality``); None
    without a data set."""
    if not dataset_gb:
        return None
    storage_per_gb_hour, traffic_per_gb = data_fees(tables, remote)
    return dataset_gb * storage_per_gb_hour, dataset_gb * traffic_per_gb


def bound_hours(
    one_card_hours: FloatArray,
    offers: IntArray,
    speedups: FloatArray,
    extra_hours: FloatArray | None,
    out: FloatArray | None = None,
) -> FloatArray:
    """``(2, cells)``: the low and high hours of the cells of ``offers`` (``speedups``: theirs, high then
    low: the fewest hours divide by the highest speed-up, the most by the lowest), as ``bill`` works out
    the expected ones; into ``out`` when given."""
    hours = np.empty(speedups.shape) if out is None else out
    extra = None if extra_hours is None else extra_hours.take(offers)
    _hours(one_card_hours[::2].take(offers, axis=1), speedups, extra, out=hours)
    return hours


@dataclass(frozen=True, slots=True)
class BoundTerms:
    """What billing the low and high bounds of some cells needs beside the tables (``bounds_at``)."""

    one_card_hours: FloatArray  # (3, offers) low / expected / high
    extra_hours: FloatArray | None  # (offers,) waiting for data copied from another city
    fees: tuple[FloatArray, FloatArray] | None  # ``fees_per_offer``
    plan_cells: IntArray  # (plan cells,) the combined plans' cells priced, ascending
    plan_costs: FloatArray  # (2, plan cells) their low and high costs (``_candidates.price_plans``)


def bounds_at(
    tables: OfferTables,
    terms: BoundTerms,
    figures: FloatArray,
    cells: IntArray,
    offers: IntArray,
    speedups: FloatArray,
) -> FloatArray:
    """``(Figure, cells)``: every figure of some billed ``cells`` (of ``offers``), with ``figures`` (theirs,
    ``(EVERY_CELL, cells)``) and ``speedups`` (theirs, high then low) given; the low and high bounds are
    billed here as ``bill``, the combined plans' pricing and ``add_data_fees`` bill the expected one:
    element by element, the same arithmetic, so the same floats."""
    result = np.empty((len(Figure), cells.size))
    result[:EVERY_CELL] = figures
    hours = result[Figure.HOURS_LOW : Figure.HOURS_HIGH + 1]
    bound_hours(terms.one_card_hours, offers, speedups, terms.extra_hours, out=hours)
    cost = result[Figure.COST_LOW : Figure.COST_HIGH + 1]
    billed_hours(hours, tables.granularity_hours.take(offers), tables.min_billed_hours.take(offers), out=cost)
    cost *= figures[Figure.HOURLY_RATE_CNY]
    plan = [at for at, offer in enumerate(offers.tolist()) if offer >= tables.offer_count]
    if plan:
        # Combined plans: the cheapest combination for each bound's hours, priced with the others.
        cost[:, plan] = terms.plan_costs[:, np.searchsorted(terms.plan_cells, cells[plan])]
    if terms.fees is not None:
        storage_per_hour, traffic = terms.fees
        with unknown_hours():
            cost += storage_per_hour.take(offers) * hours + traffic.take(offers)
    return result
