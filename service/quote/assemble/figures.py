"""The chosen candidates' figures, gathered from the evaluation's arrays and rounded in one pass.

The bulk arrays already decided which candidates a response returns and already hold every figure, so
a quote is never billed again: its figures are gathered with one fancy index per array and rounded
together with ``cents_array``, the rounding the limits were checked with, so a quote shows exactly the
figures it was ranked and filtered on. Two figures are derived here, from the unrounded ones: the
effective card-hour price (expected cost over cards × expected hours) and the value (cost plus the
caller's time value of the expected hours).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec
import numpy as np

from schemas.quote import Range
from service.quote.base.arrays import FloatArray, IntArray
from service.quote.base.money import cents_array
from service.quote.evaluate.evaluation import Evaluation, Figure
from service.quote.model.billing import ExpectedBill
from service.quote.model.interruptions import high_count
from service.quote.model.tables import OfferTables

__all__ = ["QuoteFigures", "gather_figures"]


# A struct rather than a frozen dataclass: a response makes one per quote, and a frozen dataclass takes
# a microsecond to make (a setattr per field), ten times a struct.


class QuoteFigures(msgspec.Struct, frozen=True, gc=False):
    """One chosen candidate's expected bill as computed, and its figures as the response shows them."""

    bill: ExpectedBill
    speedup: Range
    hours: Range
    cost_cny: Range
    billed_hours: float
    hourly_rate_cny: float
    effective_card_hour_cny: float
    value_cny: float | None
    raw_hours_expected: float
    raw_hours_high: float
    raw_cost_high: float
    compute_hours: float  # expected, without the wait for a copy between cities
    high_interruptions: int  # the bad-luck count the high end includes


# Rows of the gathered figures: the three speed-ups, the evaluation's figures a quote shows (ordered so
# the ones also kept unrounded are together, ``_KEPT``), then the two derived ones.
_SPEEDUP = 0
_FIGURE_ROWS = np.array(
    [
        Figure.HOURS_LOW,
        Figure.COST_LOW,
        Figure.HOURS_EXPECTED,
        Figure.HOURS_HIGH,
        Figure.COST_EXPECTED,
        Figure.COST_HIGH,
        Figure.BILLED_HOURS,
        Figure.HOURLY_RATE_CNY,
        Figure.UNITS,
    ]
)
_FIGURE = 3
_HOURS_LOW, _COST_LOW, _HOURS_EXPECTED, _HOURS_HIGH, _COST_EXPECTED, _COST_HIGH = range(_FIGURE, _FIGURE + 6)
_BILLED_HOURS, _HOURLY_RATE, _UNITS = range(_FIGURE + 6, _FIGURE + 9)
_EFFECTIVE = _FIGURE + len(_FIGURE_ROWS)
_VALUE = _EFFECTIVE + 1
_KEPT = slice(_HOURS_EXPECTED, _UNITS + 1)
# Positions in one candidate's row of the unrounded ``_KEPT`` figures.
_KEPT_HOURS_EXPECTED, _KEPT_HOURS_HIGH, _KEPT_COST_EXPECTED, _KEPT_COST_HIGH = range(4)
_KEPT_BILLED_HOURS, _KEPT_HOURLY_RATE, _KEPT_UNITS = range(4, 7)


def gather_figures(
    evaluation: Evaluation,
    tables: OfferTables,
    time_value_cny_per_hour: float | None,
    offers: Sequence[int],
    columns: Sequence[int],
) -> list[QuoteFigures]:
    """The figures of offer ``offers[i]`` at count column ``columns[i]``, for each i."""
    rows, counts = np.array(offers), np.array(columns)
    # Filled in place rather than stacked, and only the rows a quote reads turned into Python floats: a
    # response gathers a dozen candidates, where each array call's overhead, not the arithmetic, is the
    # cost. The value row is left out without a time value.
    raw = np.empty((_EFFECTIVE + (1 if time_value_cny_per_hour is None else 2), rows.size))
    scaling = evaluation.scaling
    speedup_at = scaling.at(counts, rows)
    scaling.low.take(speedup_at, out=raw[_SPEEDUP])
    scaling.expected.take(speedup_at, out=raw[_SPEEDUP + 1])
    scaling.high.take(speedup_at, out=raw[_SPEEDUP + 2])
    figures = evaluation.figures_at(tables, counts, rows, (raw[_SPEEDUP + 2], raw[_SPEEDUP]))
    raw[_FIGURE:_EFFECTIVE] = figures[_FIGURE_ROWS]
    hours, cost = raw[_HOURS_EXPECTED], raw[_COST_EXPECTED]
    cards = np.array([evaluation.counts[column] for column in columns], dtype=np.float64)
    compute, high = _interrupted_hours(evaluation, rows, cards, (raw[_SPEEDUP + 1], raw[_SPEEDUP]))
    np.divide(cost, cards * hours, out=raw[_EFFECTIVE])
    if time_value_cny_per_hour is not None:
        np.add(cost, time_value_cny_per_hour * hours, out=raw[_VALUE])
    shown_rows = (cents_array(raw) / 100).T.tolist()
    gathered: list[QuoteFigures] = []
    for index, kept, shown, computing, interrupted in zip(
        offers, raw[_KEPT].T.tolist(), shown_rows, compute.tolist(), high.tolist(), strict=True
    ):
        units = int(kept[_KEPT_UNITS])
        bill = ExpectedBill(
            units,
            units * tables.terms[index].unit_cards,
            kept[_KEPT_BILLED_HOURS],
            kept[_KEPT_HOURLY_RATE],
            kept[_KEPT_COST_EXPECTED],
        )
        gathered.append(
            QuoteFigures(
                bill,
                Range(*shown[_SPEEDUP:_FIGURE]),
                Range(shown[_HOURS_LOW], shown[_HOURS_EXPECTED], shown[_HOURS_HIGH]),
                Range(shown[_COST_LOW], shown[_COST_EXPECTED], shown[_COST_HIGH]),
                shown[_BILLED_HOURS],
                shown[_HOURLY_RATE],
                shown[_EFFECTIVE],
                None if time_value_cny_per_hour is None else shown[_VALUE],
                kept[_KEPT_HOURS_EXPECTED],
                kept[_KEPT_HOURS_HIGH],
                kept[_KEPT_COST_HIGH],
                computing,
                int(interrupted),
            )
        )
    return gathered


def _interrupted_hours(
    evaluation: Evaluation, rows: IntArray, cards: FloatArray, speedups: tuple[FloatArray, FloatArray]
) -> tuple[FloatArray, FloatArray]:
    """The expected compute hours of each chosen candidate (``speedups``: expected and low) and the
    interruptions its high end includes (the count ``evaluate.figures`` adds, from the same figures)."""
    one_card_hours = evaluation.one_card_hours
    compute: FloatArray = one_card_hours.expected.take(rows) / speedups[0]
    losses = evaluation.losses
    if losses.lost_hours <= 0:
        return compute, np.zeros(rows.size)
    with np.errstate(invalid="ignore", over="ignore"):
        high_hours = one_card_hours.at(2, rows) / speedups[1]
        high: FloatArray = high_count(high_hours * losses.rate(cards, rows, 2))
    return compute, high
