"""Wall-clock hours of billed cells: the one rule every bound of every path goes through.

A cell's hours are its one-card hours over its speed-up; the high end adds the hours its interruptions
lose (``model.interruptions``: a bad-luck count, each half a checkpoint interval and a restart), before
the wait for data copied from another city, which no job runs through. ``evaluate.figures`` bills the
cells a layout reads, ``evaluate.bounds`` the low and high ends of the returned ones (or of every cell,
when a limit judges the high end), all through ``wall_clock_hours``, so every path gives the same floats.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from service.quote.base.arrays import FloatArray, IntArray
from service.quote.model.interruptions import LossTerms
from service.quote.model.one_card import OneCardHours

__all__ = ["CellLosses", "bound_hours", "wall_clock_hours"]


class CellLosses(NamedTuple):
    """The interruptions of some cells: what interrupts them (``LossTerms``), their cards (per cell, or
    ``(counts, 1)`` against every row) and their rows (None: every row)."""

    terms: LossTerms
    cards: FloatArray
    rows: IntArray | None

    def add_to(self, high_hours: FloatArray) -> None:
        """The high end's hours (the compute hours, before any copy wait) with its interruptions added."""
        high_hours += self.terms.added_hours(high_hours, self.cards, self.rows)


def wall_clock_hours(
    one_card_hours: FloatArray,
    speedups: FloatArray,
    extra_hours: FloatArray | None,
    *,
    out: FloatArray,
    losses: CellLosses | None = None,
) -> None:
    """Wall-clock hours into ``out``: the one-card hours over the speed-up, with ``losses`` the hours a
    high end loses to interruptions, plus the wait for data copied from another city (not shortened by
    more cards, and no job runs to be interrupted). Every bound of every path goes through here, in this
    order, so every path gives the same floats."""
    np.divide(one_card_hours, speedups, out=out)
    if losses is not None:
        losses.add_to(out)
    if extra_hours is not None:
        out += extra_hours


def bound_hours(
    one_card_hours: OneCardHours,
    offers: IntArray,
    speedups: tuple[FloatArray, FloatArray],
    extra_hours: FloatArray | None,
    *,
    out: FloatArray,
    losses: CellLosses | None,
) -> None:
    """The low and high hours of the cells of ``offers`` into ``out`` (``(2, cells)``; ``speedups``:
    theirs, high and low: the fewest hours divide by the highest speed-up, the most by the lowest), as
    ``bill`` works out the expected ones; ``losses``: the high end's interruptions."""
    extra = None if extra_hours is None else extra_hours.take(offers)
    wall_clock_hours(one_card_hours.at(0, offers), speedups[0], extra, out=out[0])
    wall_clock_hours(one_card_hours.at(2, offers), speedups[1], extra, out=out[1], losses=losses)
