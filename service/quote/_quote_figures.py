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
    block = evaluation.figures[:, counts, rows]
    hours, cost = block[Figure.HOURS_EXPECTED], block[Figure.COST_EXPECTED]
    cards = np.asarray(evaluation.counts, dtype=np.float64)[counts]
    speedup_at = (counts, evaluation.machine_code[rows])
    raw = np.vstack(
        [
            evaluation.speedup_low[speedup_at],
            evaluation.speedup_expected[speedup_at],
            evaluation.speedup_high[speedup_at],
            block,
            cost / (cards * hours),
            cost + (time_value_cny_per_hour or 0.0) * hours,
        ]
    )
    shown_rows = (cents_array(raw) / 100).T.tolist()
    gathered: list[QuoteFigures] = []
    for index, raw_row, shown in zip(offers, raw.T.tolist(), shown_rows, strict=True):
        units = int(raw_row[_FIGURE + Figure.UNITS])
        bill = ExpectedBill(
            units=units,
            billed_cards=units * tables.terms[index].unit_cards,
            billed_hours=raw_row[_FIGURE + Figure.BILLED_HOURS],
            hourly_rate_cny=raw_row[_FIGURE + Figure.HOURLY_RATE_CNY],
            cost_cny=raw_row[_FIGURE + Figure.COST_EXPECTED],
        )
        gathered.append(
            QuoteFigures(
                bill=bill,
                speedup=Range(*shown[_SPEEDUP:_FIGURE]),
                hours=Range(*shown[_HOURS]),
                cost_cny=Range(*shown[_COST]),
                billed_hours=shown[_FIGURE + Figure.BILLED_HOURS],
                hourly_rate_cny=shown[_FIGURE + Figure.HOURLY_RATE_CNY],
                effective_card_hour_cny=shown[_EFFECTIVE],
                value_cny=None if time_value_cny_per_hour is None else shown[_VALUE],
                raw_hours_expected=raw_row[_FIGURE + Figure.HOURS_EXPECTED],
                raw_hours_high=raw_row[_FIGURE + Figure.HOURS_HIGH],
                raw_cost_high=raw_row[_FIGURE + Figure.COST_HIGH],
            )
        )
    return gathered
