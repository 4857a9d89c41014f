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
from service.quote._evaluate import Evaluation, Figure
from service.quote._money import cents_array
from service.quote._tables import OfferTables

__all__ = ["ExpectedBill", "QuoteFigures", "gather_figures"]


# Structs rather than frozen dataclasses: a response makes two per quote, and a frozen dataclass takes
# a microsecond to make (a setattr per field), ten times a struct.


class ExpectedBill(msgspec.Struct, frozen=True, gc=False):
    """One candidate's expected bill, as the evaluation computed it (unrounded)."""

    units: int  # rented: cards, nodes, bundles or packages
    billed_cards: int
    billed_hours: float
    hourly_rate_cny: float
    cost_cny: float


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


# Rows of the gathered figures: the three speed-ups, the evaluation's figures, then two derived ones.
_SPEEDUP = 0
_FIGURE = 3
_EFFECTIVE = _FIGURE + len(Figure)
_VALUE = _EFFECTIVE + 1
_ROWS = _VALUE + 1
# Positions in one gathered candidate's row (fields are passed in order: a dozen structs per response).
_UNITS = _FIGURE + Figure.UNITS
_BILLED_HOURS = _FIGURE + Figure.BILLED_HOURS
_HOURLY_RATE = _FIGURE + Figure.HOURLY_RATE_CNY
_HOURS_EXPECTED = _FIGURE + Figure.HOURS_EXPECTED
_HOURS_HIGH = _FIGURE + Figure.HOURS_HIGH
_COST_EXPECTED = _FIGURE + Figure.COST_EXPECTED
_COST_HIGH = _FIGURE + Figure.COST_HIGH
_HOURS = slice(_FIGURE + Figure.HOURS_LOW, _FIGURE + Figure.HOURS_HIGH + 1)
_COST = slice(_FIGURE + Figure.COST_LOW, _FIGURE + Figure.COST_HIGH + 1)


def gather_figures(
    evaluation: Evaluation,
    tables: OfferTables,
    time_value_cny_per_hour: float | None,
    offers: Sequence[int],
    columns: Sequence[int],
) -> list[QuoteFigures]:
    """The figures of offer ``offers[i]`` at count column ``columns[i]``, for each i."""
    rows, counts = np.asarray(offers), np.asarray(columns)
    # Filled in place rather than stacked: a response gathers a dozen candidates, where each array
    # call's overhead, not the arithmetic, is the cost.
    raw = np.empty((_ROWS, rows.size))
    raw[_FIGURE:_EFFECTIVE] = evaluation.figures[:, counts, rows]
    speedup_at = (counts, evaluation.machine_code[rows])
    raw[_SPEEDUP] = evaluation.speedup_low[speedup_at]
    raw[_SPEEDUP + 1] = evaluation.speedup_expected[speedup_at]
    raw[_SPEEDUP + 2] = evaluation.speedup_high[speedup_at]
    hours, cost = raw[_HOURS_EXPECTED], raw[_COST_EXPECTED]
    cards = np.asarray(evaluation.counts, dtype=np.float64)[counts]
    np.divide(cost, cards * hours, out=raw[_EFFECTIVE])
    np.add(cost, (time_value_cny_per_hour or 0.0) * hours, out=raw[_VALUE])
    shown_rows = (cents_array(raw) / 100).T.tolist()
    gathered: list[QuoteFigures] = []
    for index, raw_row, shown in zip(offers, raw.T.tolist(), shown_rows, strict=True):
        units = int(raw_row[_UNITS])
        bill = ExpectedBill(
            units,
            units * tables.terms[index].unit_cards,
            raw_row[_BILLED_HOURS],
            raw_row[_HOURLY_RATE],
            raw_row[_COST_EXPECTED],
        )
        gathered.append(
            QuoteFigures(
                bill,
                Range(*shown[_SPEEDUP:_FIGURE]),
                Range(*shown[_HOURS]),
                Range(*shown[_COST]),
                shown[_BILLED_HOURS],
                shown[_HOURLY_RATE],
                shown[_EFFECTIVE],
                None if time_value_cny_per_hour is None else shown[_VALUE],
                raw_row[_HOURS_EXPECTED],
                raw_row[_HOURS_HIGH],
                raw_row[_COST_HIGH],
            )
        )
    return gathered
