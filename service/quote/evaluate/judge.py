"""Judging the billed cells of an evaluation: which are runnable and qualify, and why the others do not.

The stages and their counts are described in ``_evaluate``; every mask here is per billed cell
(``_layout``), so judging costs one pass over the cells a response can read, not over the grid.

The deadline and the budget judge the figure ``deadline_confidence`` and ``budget_confidence`` name:
the expected one (the figure quotes are ranked by), or the high end (``limit_rows``). With a limit, the
cells whose high ends meet every limit are told apart too (``high_ok``, a ``HighWithin``): the plans
with no risk of passing it, one of which the summary names when the recommendation may pass it.
``high_ok`` is read only at qualifying cells, which meet every limit by the figure it judges, and only at
the few the response names (the recommendation, then the candidates in ranking order until one has no
risk: ``assemble.extras``): when the limits judge the expected figures, the high end is billed for the
cells read alone (``high_figures``), not for every candidate within the limits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from schemas.quote import Excluded, QuoteRequest
from service.quote.base.arrays import BoolArray, FloatArray, IntArray
from service.quote.base.money import cents_array
from service.quote.evaluate.figures import Figure, unknown_hours

__all__ = [
    "BilledAt",
    "FigureRows",
    "HighWithin",
    "judge",
    "limit_rows",
    "limits_of",
    "past_however_shown",
    "single_card_eligible",
    "within_however_shown",
]

# Per limit: its value (None: no such limit), the figure row it judges, its high-end row, and per cell the
# hours that pass before the figure's (None: none).
Limits = tuple[tuple[float | None, Figure, Figure, FloatArray | None], ...]


@dataclass(frozen=True, slots=True)
class BilledAt:
    """A figure row known at some cells alone, past every limit at the others (cells left unbilled
    because no figure of theirs can meet one): ``values`` at the ascending positions ``at`` of ``size``
    cells. Judged at those cells alone, it judges every cell as the whole row, +inf elsewhere, would."""

    at: IntArray
    values: FloatArray
    size: int


# The figures judged, one per cell: an evaluation's ``(Figure, cells)`` block, or the rows a judgment reads
# by themselves (a deadline reads the expected hours, a budget the cost: ``evaluation._limits_pruned``),
# each whole or known at some cells alone (``BilledAt``).
FigureRows = FloatArray | Mapping[Figure, FloatArray | BilledAt]


def limit_rows(request: QuoteRequest) -> tuple[Figure, Figure]:
    """The ``Figure`` rows the deadline and the budget judge: expected, or high by their confidence."""
    hours = Figure.HOURS_HIGH if request.deadline_confidence == "high" else Figure.HOURS_EXPECTED
    cost = Figure.COST_HIGH if request.budget_confidence == "high" else Figure.COST_EXPECTED
    return hours, cost


# Of a limit's size: past this share of it from the limit, rounding cannot carry a figure across it.
_BAND = 1e-9


def _band(limit: float) -> float:
    """How far from ``limit`` a figure may be and still be rounded across it (``_within``)."""
    return max(1.0, abs(limit) * _BAND)


def past_however_shown(lower: FloatArray, limit: float) -> BoolArray:
    """Where every figure at least ``lower`` is past ``limit`` as the response shows it (further than
    ``_within``'s band: no rounding is read); NaN: not known to be past."""
    past: BoolArray = lower > limit + _band(limit)
    return past


def within_however_shown(upper: FloatArray, limit: float) -> BoolArray:
    """Where every figure at most ``upper`` is within ``limit`` as the response shows it (further than
    ``_within``'s band: no rounding is read); NaN: not known to be within."""
    within: BoolArray = upper < limit - _band(limit)
    return within


def _within(figures: FigureRows, row: Figure, limit: float, before: FloatArray | None = None) -> BoolArray:
    """Cells whose ``row`` figure, as the response shows it, is within ``limit``; ``before``: per cell,
    hours that pass before the figure's (a vendor's lead time), or None."""
    read = figures[row]
    if isinstance(read, BilledAt):
        within: BoolArray = np.zeros(read.size, dtype=np.bool_)
        values = read.values if before is None else read.values + before.take(read.at)
        within[read.at] = _within_shown(values, limit)
        return within
    return _within_shown(read if before is None else read + before, limit)


def _within_shown(figure: FloatArray, limit: float) -> BoolArray:
    """Where ``figure``, as the response shows it, is within ``limit``."""
    # Rounded to hundredths, a figure moves by half a hundredth at most (far less than the band of
    # float error below 1e15): one further than the band from the limit is within it or past it as
    # shown, so only the cells near the limit (or NaN) are rounded.
    band = _band(limit)
    within: BoolArray = figure < limit - band
    near = np.flatnonzero(~(within | (figure > limit + band)))
    if near.size:
        within[near] = cents_array(figure.take(near)) / 100 <= limit
    return within


@dataclass(frozen=True, slots=True)
class HighWithin:
    """Whether candidates' high ends meet every limit, read at the cells asked for (qualifying ones):
    from the judged figures when they hold every cell's high end (``known``), else billed for those
    cells alone (``high_figures``)."""

    limits: Limits
    known: BoolArray | None = None
    high_figures: Callable[[IntArray], FloatArray] | None = None

    def at(self, cells: IntArray) -> BoolArray:
        """Per cell of ``cells`` (positions among the billed cells), whether its high end meets every
        limit."""
        if self.known is not None:
            return self.known.take(cells)
        if self.high_figures is None:
            raise ValueError("HighWithin needs the known mask or a way to bill high ends")
        figures = self.high_figures(cells)
        high = np.ones(cells.size, dtype=np.bool_)
        with unknown_hours():
            for limit, _, high_row, before in self.limits:
                if limit is not None:
                    high &= _within(figures, high_row, limit, None if before is None else before.take(cells))
        return high


def limits_of(request: QuoteRequest, lead_hours: FloatArray | None) -> Limits:
    """The request's deadline and budget, each with the figure row it judges, its high-end row, and the
    hours before its figure per cell (``lead_hours`` for the deadline)."""
    hours_row, cost_row = limit_rows(request)
    return (
        (request.deadline_hours, hours_row, Figure.HOURS_HIGH, lead_hours),
        (request.budget_cny, cost_row, Figure.COST_HIGH, None),
    )


def single_card_eligible(
    request: QuoteRequest,
    runnable: BoolArray,
    rents: tuple[FloatArray, FloatArray, FloatArray],
    limited: tuple[FloatArray, FloatArray],
) -> BoolArray:
    """Which one-card cells can be the single card the summary compares: runnable, renting one card or
    one machine as one unit (a cluster whose minimum bills many cards is no single card), and within
    the deadline and the budget as shown. ``rents``: each cell's units, cards per unit and machine
    cards; ``limited``: its hours and cost as the limits read them (``limit_rows``), lead times aside."""
    units, unit_cards, machine_cards = rents
    hours, cost = limited
    eligible: BoolArray = runnable & (units * unit_cards <= np.maximum(machine_cards, 1))
    with unknown_hours():
        if request.deadline_hours is not None:
            eligible &= cents_array(hours) / 100 <= request.deadline_hours
        if request.budget_cny is not None:
            eligible &= cents_array(cost) / 100 <= request.budget_cny
    return eligible


def judge(
    request: QuoteRequest,
    figures: FigureRows,
    requested: BoolArray,
    masks: tuple[BoolArray | None, BoolArray, BoolArray | None, BoolArray | None],
    lead_hours: FloatArray | None = None,
    high_figures: Callable[[IntArray], FloatArray] | None = None,
) -> tuple[BoolArray, BoolArray, bool, Excluded, HighWithin | None]:
    """Runnable and qualifying cells, whether stale prices were used, what was excluded why, and (with a
    deadline or budget) which cells' high ends meet them all (``high_ok``; None without a limit).

    ``figures``: each cell's figures, or only the rows the limits judge (``FigureRows``).
    ``masks``: matching, capacity and memory checks, and stale prices, each per cell; None for a check
    every cell passes (matching, memory) or a flag no cell has (stale): nothing to combine or count.
    ``lead_hours``: per cell, the hours from booking to the start, which the deadline counts (None: none).
    ``high_figures``: None when ``figures`` holds every cell's high end; else the limits judge the
    expected figures, and it gives the figures, high end billed, of the cells at some positions: the
    qualifying ones ``high_ok`` is read at.
    """
    matching, capacity_ok, memory_ok, stale = masks
    possible = capacity_ok
    for check in (matching, memory_ok):
        if check is not None:
            possible = possible & check
    known: BoolArray | None = None
    within_limits = possible
    judged: list[BoolArray | None] = []
    limits = limits_of(request, lead_hours)
    with unknown_hours():  # judged at every billed cell, kept only where requested
        for limit, row, high_row, before in limits:
            ok = None if limit is None else _within(figures, row, limit, before)
            judged.append(ok)
            if limit is None or ok is None:
                continue
            within_limits = within_limits & ok
            if high_figures is None:
                high = ok if row == high_row else _within(figures, high_row, limit, before)
                known = high if known is None else known & high
    deadline_ok, budget_ok = judged
    requested_within = within_limits & requested
    high_ok = None
    if deadline_ok is not None or budget_ok is not None:
        high_ok = HighWithin(limits, known, high_figures)
    qualifying, used_stale = requested_within, False
    if stale is not None:
        qualifying = requested_within & ~stale
        used_stale = not qualifying.any() and bool(requested_within.any())
        if used_stale:
            qualifying = requested_within

    def requested_count(mask: BoolArray) -> int:
        """Candidates in ``mask`` at a card count the caller asked for."""
        return int(np.count_nonzero(mask & requested))

    def matching_count(mask: BoolArray) -> int:
        """Candidates in ``mask`` that match the filters, at a card count the caller asked for."""
        return requested_count(mask if matching is None else matching & mask)

    excluded = Excluded(
        filters=0 if matching is None else requested_count(~matching),
        capacity=matching_count(~capacity_ok),
        memory=0 if memory_ok is None else matching_count(~memory_ok),
        deadline=0 if deadline_ok is None else requested_count(possible & ~deadline_ok),
        budget=0 if budget_ok is None else requested_count(possible & ~budget_ok),
        # Stale prices are a reason only when fresh candidates qualified and the stale ones were dropped;
        # with nothing qualifying, or the stale fallback in use, staleness left nothing out.
        stale=matching_count(stale) if stale is not None and qualifying.any() and not used_stale else 0,
    )
    runnable = possible if stale is None or used_stale else possible & ~stale
    return runnable, qualifying, used_stale, excluded, high_ok
