"""The figures of every candidate an evaluation bills: what ``Figure`` rows hold and how they are filled.

``bill`` lays the figures out as one ``(Figure, cells)`` block over the cells the layout bills
(``_layout``: the dense counts' whole rows, then the needed cells of the others): the units and hourly
rate copied from the layout, each hours bound divided from the one-card hours by its speed-up, billed by
the one rule in ``_billing``, and, with a data set, ``add_data_fees`` writes its storage and traffic
(``_locality``). A row no pass writes is never read (the block is not zeroed).

The ranking, the combined plans' keep test and the single-card comparison read only the expected
bound (as do the deadline and the budget, unless their confidence asks for the high end); the low and
high bounds only a returned quote shows. So unless the layout bills them up front
(``Layout.bounds_up_front``: a small table, where the numpy calls of billing a few cells cost more than
the cells they skip), the bounds' rows are left unwritten and ``evaluate.bounds`` bills them for the
returned cells alone (or the high end for every cell, when a limit reads it), element by element with
the same arithmetic. A request's work thus follows the cells a response can read, not the (counts × rows)
grid. Every hours figure goes through ``evaluate.hours.wall_clock_hours``.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from service.quote.base.arrays import BoolArray, FloatArray, IntArray
from service.quote.evaluate.combined import PricedPlans, bound_costs, price_kept, price_plans
from service.quote.evaluate.hours import CellLosses, wall_clock_hours
from service.quote.evaluate.layout import GatheredSpeedups, Layout
from service.quote.evaluate.locality import data_fees
from service.quote.model.billing import billed_hours
from service.quote.model.interruptions import LossTerms
from service.quote.model.one_card import OneCardHours
from service.quote.model.tables import OfferTables

__all__ = [
    "Figure",
    "add_data_fees",
    "bill",
    "expected_figures",
    "fees_per_offer",
    "price_plan_cells",
    "unknown_hours",
]


class Figure(IntEnum):
    """Rows of ``Evaluation.figures``, each one figure per billed cell (``Evaluation.cells``).

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


# Rows ``HOURS_LOW`` to ``COST_HIGH``, as ``_bill_cells`` fills them, and the low and high bounds alone.
_BILLED = Figure.BILLED_HOURS - Figure.HOURS_LOW
_BILLED_ROWS = slice(Figure.HOURS_LOW, Figure.COST_HIGH + 1)
_EVERY_HOURS = slice(Figure.HOURS_LOW, Figure.HOURS_HIGH + 1)
_EVERY_COST = slice(Figure.COST_LOW, Figure.COST_HIGH + 1)


def unknown_hours() -> np.errstate:
    """The floating-point state for arithmetic over every billed cell: an offer whose one-card hours
    are unknown (a GPU the catalog does not rate) has NaN or infinite figures, never kept."""
    return np.errstate(over="ignore", invalid="ignore")


def _bill_cells(
    out: FloatArray,
    one_card_hours: FloatArray,
    speedups: FloatArray,
    extra_hours: FloatArray | None,
    terms: tuple[FloatArray, FloatArray, FloatArray],
    losses: CellLosses | None,
) -> None:
    """Every bound's hours, the billed hours and the cost bounds of some cells into ``out``, rows
    ``HOURS_LOW`` to ``COST_HIGH`` (``speedups``: high / expected / low, the order the hours bounds divide
    by); ``terms``: the granularity, the minimum billed hours and the hourly rate; ``losses``: the high
    end's interruptions."""
    granularity_hours, min_billed_hours, hourly_rate = terms
    hours = out[:_BILLED]
    for bound in range(3):
        wall_clock_hours(
            one_card_hours[bound],
            speedups[bound],
            extra_hours,
            out=hours[bound],
            losses=losses if bound == 2 else None,
        )
    # The cost rows hold the billed hours until multiplied by the rate.
    billed = billed_hours(hours, granularity_hours, min_billed_hours, out=out[_BILLED + 1 :])
    out[_BILLED] = billed[1]
    billed *= hourly_rate


def bill(
    tables: OfferTables,
    layout: Layout,
    one_card_hours: OneCardHours,
    speedups: GatheredSpeedups,
    extra_hours: FloatArray | None,
    losses: LossTerms | None,
) -> FloatArray:
    """The figures of every cell the layout bills, ``(Figure, cells)`` (``_layout``): the dense counts'
    whole rows billed row by row, then the few needed cells of the other counts one by one; the low and
    high bounds only where the layout bills them up front (module docstring)."""
    # Unzeroed: every row a pass reads is written first. The bounds' rows of a layout that bills them for
    # the returned quotes alone are billed into those quotes' own figures (``bounds.bounds_at``), and the
    # data fees' rows are written, and read, only with a data set (``add_data_fees``, ``fee_items``).
    # A zeroed block cost a pass over all eleven rows: glibc serves blocks up to 32 MB from its heap once
    # it has freed one that large, and clears them there (1.3 ms for a serving job's 200,000 cells).
    figures = np.empty((len(Figure), layout.cells.size))
    figures[Figure.UNITS] = layout.units
    rate = figures[Figure.HOURLY_RATE_CNY]
    np.multiply(layout.units, layout.at_cells(tables.unit_rate_cny_per_hour), out=rate)
    dense_shape = (layout.dense, tables.size)
    if speedups.every_bound is not None:  # every count dense
        _bill_cells(
            figures[_BILLED_ROWS].reshape(_BILLED_ROWS.stop - _BILLED_ROWS.start, *dense_shape),
            one_card_hours.every()[:, None, :],
            speedups.every_bound,
            extra_hours,
            (tables.granularity_hours, tables.min_billed_hours, rate.reshape(dense_shape)),
            None if losses is None else CellLosses(losses, layout.cards[:, None], None),
        )
        return figures
    _bill_expected(
        tables,
        layout,
        (one_card_hours.expected, extra_hours),
        speedups,
        rate,
        (figures[Figure.HOURS_EXPECTED], figures[Figure.BILLED_HOURS], figures[Figure.COST_EXPECTED]),
    )
    return figures


def _bill_expected(
    tables: OfferTables,
    layout: Layout,
    hours_in: tuple[FloatArray, FloatArray | None],
    speedups: GatheredSpeedups,
    rate: FloatArray,
    out: tuple[FloatArray, FloatArray, FloatArray],
    sparse_terms: tuple[FloatArray, FloatArray] | None = None,
) -> None:
    """The expected hours, billed hours and cost of every cell of ``layout`` into ``out`` (each
    ``(cells,)``): the dense counts' whole rows row by row, then the other cells one by one, from the
    expected one-card and extra hours ``hours_in`` and each cell's hourly ``rate``; ``sparse_terms``:
    the granule and minimum billed at the other cells (None: read off their rows)."""
    one_card_hours, extra_hours = hours_in
    hours, billed, cost = out
    dense = slice(None, layout.dense * tables.size)
    dense_shape = (layout.dense, tables.size)
    dense_hours = hours[dense].reshape(dense_shape)
    wall_clock_hours(one_card_hours, speedups.dense, extra_hours, out=dense_hours)
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
        wall_clock_hours(one_card_hours.take(offers), speedups.sparse, extra, out=hours[sparse])
        granularity, minimum = sparse_terms or (
            tables.granularity_hours.take(offers),
            tables.min_billed_hours.take(offers),
        )
        billed_hours(hours[sparse], granularity, minimum, out=billed[sparse])
    np.multiply(billed, rate, out=cost)


def expected_figures(
    tables: OfferTables,
    layout: Layout,
    hours_in: tuple[FloatArray, FloatArray | None],
    speedups: GatheredSpeedups,
    fees: tuple[FloatArray, FloatArray] | None,
) -> tuple[FloatArray, FloatArray, BoolArray | None]:
    """Every cell's expected hours and cost, ``(cells,)`` each, as ``bill``, ``price_plan_cells`` and
    ``add_data_fees`` work them out (the same floats), and whether each combined plan is quoted (None
    without plans); without the figure block: what a deadline and a budget judge at every cell, when
    only a few of them are then billed whole. Not for a layout that bills its bounds up front."""
    if speedups.every_bound is not None:
        raise ValueError("expected_figures bills layouts whose bounds are billed for the quotes alone")
    hours, cost = np.empty(layout.cells.size), np.empty(layout.cells.size)
    rows = layout.billing_rows(tables)
    # The cost row holds the billed hours until multiplied by the rate: two arrays of a million cells
    # at 96,000 offers, the rates and the billing terms read from the layout.
    terms = (rows.granularity_hours, rows.min_billed_hours)
    _bill_expected(tables, layout, hours_in, speedups, rows.hourly_rate, (hours, cost, cost), terms)
    keep = None
    if layout.plans is not None:
        keep, plan_cost = price_plans(tables, layout.plans, hours.take(layout.plans.at), cost)
        cost[layout.plans.at] = plan_cost
    if fees is not None:
        storage_per_hour, traffic = fees
        with unknown_hours():
            cost += storage_per_hour.take(layout.cell_offer) * hours + traffic.take(layout.cell_offer)
    return hours, cost, keep


def price_plan_cells(
    tables: OfferTables, plans: PricedPlans, figures: FloatArray, speedups: GatheredSpeedups
) -> BoolArray:
    """The combined plans' cells priced at their expected hours (``combined.price_plans``), and at every
    bound where the layout bills them up front, their costs written where ``figures`` bills them. Returns
    whether each plan is quoted; the low and high costs of the others are priced where they are read
    (``evaluate.bounds``)."""
    expected_cost = figures[Figure.COST_EXPECTED]
    if speedups.every_bound is not None:
        every_hours = figures[_EVERY_HOURS].take(plans.at, axis=1)
        costs = bound_costs(tables, plans, np.arange(plans.at.size), every_hours)
        keep = price_kept(plans, costs[1], expected_cost)
        figures[_EVERY_COST, plans.at] = costs
    else:
        keep, costs_expected = price_plans(
            tables, plans, figures[Figure.HOURS_EXPECTED].take(plans.at), expected_cost
        )
        expected_cost[plans.at] = costs_expected
    return keep


def add_data_fees(
    figures: FloatArray,
    cell_offer: IntArray,
    fees: tuple[FloatArray, FloatArray] | None,
    *,
    every_bound: bool,
) -> None:
    """Storage over each billed bound's hours (``every_bound``: all three, else the expected one) and the
    copy's traffic, added to the cost bounds; ``cell_offer``: the row of each cell of ``figures``;
    ``fees``: ``fees_per_offer``."""
    if fees is None:
        return
    storage_per_hour, traffic = fees
    storage_per_hour = storage_per_hour.take(cell_offer)
    figures[Figure.TRAFFIC_CNY] = traffic.take(cell_offer)
    bounds = _BOUNDS if every_bound else _BOUNDS[1:2]
    with unknown_hours():
        for hours_row, cost_row in bounds:
            storage = storage_per_hour * figures[hours_row]
            if cost_row == Figure.COST_EXPECTED:
                figures[Figure.STORAGE_CNY] = storage
            figures[cost_row] += storage + figures[Figure.TRAFFIC_CNY]


_BOUNDS = (
    (Figure.HOURS_LOW, Figure.COST_LOW),
    (Figure.HOURS_EXPECTED, Figure.COST_EXPECTED),
    (Figure.HOURS_HIGH, Figure.COST_HIGH),
)


def fees_per_offer(
    tables: OfferTables, remote: BoolArray, dataset_gb: float | None
) -> tuple[FloatArray, FloatArray] | None:
    """Per offer: a data set's storage CNY per hour and its copy's traffic CNY (``_locality``); None
    without a data set."""
    if not dataset_gb:
        return None
    storage_per_gb_hour, traffic_per_gb = data_fees(tables, remote)
    return dataset_gb * storage_per_gb_hour, dataset_gb * traffic_per_gb
