"""The figures of every candidate an evaluation bills: what ``Figure`` rows hold and how they are filled.

``bill`` lays the figures out as one ``(Figure, counts, rows)`` block: the units and hourly rate copied
from the layout, each hours bound divided from the one-card hours by its speed-up, billed by the one rule
in ``_billing``, and the data fees zero until ``add_data_fees`` adds a data set's storage and traffic
(``_locality``). Where the layout bills only the cells a response can read, the other hours and costs
are never written: whatever works on whole planes (the deadline and budget checks, the data fees) keeps
only what it finds at cells that are read, and ignores floating-point warnings from the rest.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np
import numpy.typing as npt

from service.quote._billing import billed_hours
from service.quote._layout import GatheredSpeedups, Layout
from service.quote._locality import data_fees
from service.quote._tables import OfferTables

__all__ = ["Figure", "add_data_fees", "bill", "unbilled_cells"]

FloatArray = npt.NDArray[np.float64]
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


def unbilled_cells() -> np.errstate:
    """The floating-point state for whole-plane arithmetic over the figures: the cells never billed
    hold arbitrary floats (overflowing or invalid ones among them), whose results are never kept."""
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
    """Every figure of every candidate the layout bills, in one block (``_layout``: the counts past
    ``dense`` bill only the cells a response can read). The other cells' hours and costs are left as
    allocated: nothing reads them, and filling them cost more than billing the cells that are read."""
    figures = np.empty((len(Figure), layout.cards.size, tables.size))
    dense = layout.dense
    # Units, rate and the data-fee rows (added by ``add_data_fees`` when a data set is given) are written
    # where cells are billed only: past ``dense``, a few cells of many counts are (whole planes of 100+
    # counts cost more to copy than the billing itself).
    figures[Figure.UNITS : Figure.HOURLY_RATE_CNY + 1, :dense] = layout.units_rate[:, :dense]
    figures[Figure.STORAGE_CNY :, :dense] = 0.0
    _bill_cells(
        figures[_BILLED_ROWS, :dense],
        one_card_hours[:, None, :],
        speedups.dense,
        extra_hours,
        (tables.granularity_hours, tables.min_billed_hours, figures[Figure.HOURLY_RATE_CNY, :dense]),
    )
    if dense < layout.cards.size:
        cells = np.empty((_BILLED_ROWS.stop - _BILLED_ROWS.start, layout.sparse_at.size))
        granularity_hours, min_billed_hours, hourly_rate = layout.sparse_terms
        _bill_cells(
            cells,
            one_card_hours.take(layout.sparse_offer, axis=1),
            speedups.sparse,
            None if extra_hours is None else extra_hours.take(layout.sparse_offer),
            (granularity_hours, min_billed_hours, hourly_rate),
        )
        grid = figures.reshape(len(Figure), -1)
        for row, values in enumerate(cells, start=_BILLED_ROWS.start):
            grid[row][layout.sparse_at] = values  # row by row: twice as fast as one 2-D scatter
        units_rate = layout.units_rate.reshape(2, -1)
        for row in (Figure.UNITS, Figure.HOURLY_RATE_CNY):
            grid[row][layout.sparse_at] = units_rate[row].take(layout.sparse_at)
        for row in (Figure.STORAGE_CNY, Figure.TRAFFIC_CNY):
            grid[row][layout.sparse_at] = 0.0
    return figures


def add_data_fees(
    figures: FloatArray, tables: OfferTables, remote: BoolArray, dataset_gb: float | None
) -> None:
    """Storage over each bound's hours and the copy's traffic, added to the cost bounds (``_locality``)."""
    if not dataset_gb:
        return
    storage_per_gb_hour, traffic_per_gb = data_fees(tables, remote)
    traffic = dataset_gb * traffic_per_gb
    figures[Figure.TRAFFIC_CNY] = traffic
    with unbilled_cells():
        for hours_row, cost_row in (
            (Figure.HOURS_LOW, Figure.COST_LOW),
            (Figure.HOURS_EXPECTED, Figure.COST_EXPECTED),
            (Figure.HOURS_HIGH, Figure.COST_HIGH),
        ):
            storage = dataset_gb * storage_per_gb_hour * figures[hours_row]
            if cost_row == Figure.COST_EXPECTED:
                figures[Figure.STORAGE_CNY] = storage
            figures[cost_row] += storage + traffic
