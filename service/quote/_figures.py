"""The figures of every candidate an evaluation bills: what ``Figure`` rows hold and how they are filled.

``bill`` lays the figures out as one ``(Figure, cells)`` block over the cells the layout bills
(``_layout``: the dense counts' whole rows, then the needed cells of the others): the units and hourly
rate copied from the layout, each hours bound divided from the one-card hours by its speed-up, billed by
the one rule in ``_billing``, and the data fees zero until ``add_data_fees`` adds a data set's storage and
traffic (``_locality``). Cells never read are never billed, so a request's work follows the cells a
response can read, not the (counts × rows) grid.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np
import numpy.typing as npt

from service.quote._billing import billed_hours
from service.quote._layout import GatheredSpeedups, Layout
from service.quote._locality import data_fees
from service.quote._tables import OfferTables

__all__ = ["Figure", "add_data_fees", "bill", "unknown_hours"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]


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


def _bill_cells(
    out: FloatArray,
    one_card_hours: FloatArray,
    speedups: FloatArray,
    extra_hours: FloatArray | None,
    terms: tuple[FloatArray, FloatArray, FloatArray],
) -> None:
    """Hours, billed hours and cost bounds of some cells into ``out``, rows ``HOURS_LOW`` to ``COST_HIGH``.

    Each hours bound divides that bound's one-card hours by the matching speed-up (``speedups`` are high /
    expected / low): the fewest hours by the highest speed-up, the most by the lowest. Each bound is billed
    on its own hours by the one rule in ``_billing``; ``terms`` are the granularity, the minimum billed
    hours and the hourly rate.
    """
    granularity_hours, min_billed_hours, hourly_rate = terms
    hours = np.divide(one_card_hours, speedups, out=out[:_BILLED])
    if extra_hours is not None:
        hours += extra_hours  # waiting for data copied from another city: not shortened by more cards
    # The cost rows hold the billed hours until multiplied by the rate.
    billed = billed_hours(hours, granularity_hours, min_billed_hours, out=out[_BILLED + 1 :])
    out[_BILLED] = billed[1]
    billed *= hourly_rate


def unknown_hours() -> np.errstate:
    """The floating-point state for arithmetic over every billed cell: an offer whose one-card hours
    are unknown (a GPU the catalog does not rate) has NaN or infinite figures, never kept."""
    return np.errstate(over="ignore", invalid="ignore")


# Rows ``HOURS_LOW`` to ``COST_HIGH`` of ``Figure``, as ``_bill_cells`` fills them: the billed hours' row.
_BILLED = Figure.BILLED_HOURS - Figure.HOURS_LOW
_BILLED_ROWS = slice(Figure.HOURS_LOW, Figure.COST_HIGH + 1)


def bill(
    tables: OfferTables,
    layout: Layout,
    one_card_hours: FloatArray,
    speedups: GatheredSpeedups,
    extra_hours: FloatArray | None,
) -> FloatArray:
    """Every figure of every cell the layout bills, ``(Figure, cells)`` (``_layout``): the dense counts'
    whole rows billed row by row, then the few needed cells of the other counts one by one."""
    figures = np.empty((len(Figure), layout.cells.size))
    figures[Figure.UNITS : Figure.HOURLY_RATE_CNY + 1] = layout.units_rate
    figures[Figure.STORAGE_CNY :] = 0.0  # the data fees, added by ``add_data_fees`` with a data set
    dense_cells = layout.dense * tables.size
    dense_shape = (layout.dense, tables.size)
    _bill_cells(
        figures[_BILLED_ROWS, :dense_cells].reshape(_BILLED_ROWS.stop - _BILLED_ROWS.start, *dense_shape),
        one_card_hours[:, None, :],
        speedups.dense,
        extra_hours,
        (
            tables.granularity_hours,
            tables.min_billed_hours,
            figures[Figure.HOURLY_RATE_CNY, :dense_cells].reshape(dense_shape),
        ),
    )
    if dense_cells < layout.cells.size:
        sparse_offer = layout.cell_offer[dense_cells:]
        _bill_cells(
            figures[_BILLED_ROWS, dense_cells:],
            one_card_hours.take(sparse_offer, axis=1),
            speedups.sparse,
            None if extra_hours is None else extra_hours.take(sparse_offer),
            (layout.sparse_terms[0], layout.sparse_terms[1], layout.sparse_terms[2]),
        )
    return figures


def add_data_fees(
    figures: FloatArray,
    tables: OfferTables,
    cell_offer: IntArray,
    remote: BoolArray,
    dataset_gb: float | None,
) -> None:
    """Storage over each bound's hours and the copy's traffic, added to the cost bounds (``_locality``);
    ``cell_offer``: the row of each cell of ``figures``."""
    if not dataset_gb:
        return
    storage_per_gb_hour, traffic_per_gb = data_fees(tables, remote)
    traffic = (dataset_gb * traffic_per_gb).take(cell_offer)
    storage_per_hour = (dataset_gb * storage_per_gb_hour).take(cell_offer)
    figures[Figure.TRAFFIC_CNY] = traffic
    with unknown_hours():
        for hours_row, cost_row in (
            (Figure.HOURS_LOW, Figure.COST_LOW),
            (Figure.HOURS_EXPECTED, Figure.COST_EXPECTED),
            (Figure.HOURS_HIGH, Figure.COST_HIGH),
        ):
            storage = storage_per_hour * figures[hours_row]
            if cost_row == Figure.COST_EXPECTED:
                figures[Figure.STORAGE_CNY] = storage
            figures[cost_row] += storage + traffic
