"""Judging the billed cells of an evaluation: which are runnable and qualify, and why the others do not.

The stages and their counts are described in ``_evaluate``; every mask here is per billed cell
(``_layout``), so judging costs one pass over the cells a response can read, not over the grid.
"""

from __future__ import annotations

import numpy as np

from schemas.quote import Excluded, QuoteRequest
from service.quote.base.arrays import BoolArray, FloatArray, IntArray
from service.quote.base.money import cents_array
from service.quote.evaluate.figures import Figure, unknown_hours

__all__ = ["judge", "per_cell"]


def judge(
    request: QuoteRequest,
    figures: FloatArray,
    requested: BoolArray,
    masks: tuple[BoolArray | None, BoolArray, BoolArray | None, BoolArray | None],
    lead_hours: FloatArray | None = None,
) -> tuple[BoolArray, BoolArray, bool, Excluded]:
    """Runnable and qualifying cells, whether stale prices were used, and what was excluded why.

    ``masks``: matching, capacity and memory checks, and stale prices, each per cell; None for a check
    every cell passes (matching, memory) or a flag no cell has (stale): nothing to combine or count.
    ``lead_hours``: per cell, the hours from booking to the start, which the deadline counts (None: none).
    """
    matching, capacity_ok, memory_ok, stale = masks
    possible = capacity_ok
    for check in (matching, memory_ok):
        if check is not None:
            possible = possible & check
    deadline_ok = budget_ok = None
    within_limits = possible
    with unknown_hours():  # judged at every billed cell, kept only where requested
        if request.deadline_hours is not None:
            finish = (
                figures[Figure.HOURS_EXPECTED]
                if lead_hours is None
                else figures[Figure.HOURS_EXPECTED] + lead_hours
            )
            deadline_ok = cents_array(finish) / 100 <= request.deadline_hours
            within_limits = within_limits & deadline_ok
        if request.budget_cny is not None:
            budget_ok = cents_array(figures[Figure.COST_EXPECTED]) / 100 <= request.budget_cny
            within_limits = within_limits & budget_ok
    requested_within = within_limits & requested
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
    return runnable, qualifying, used_stale, excluded


def per_cell(mask: BoolArray, cell_offer: IntArray, usual: bool) -> BoolArray | None:
    """``mask`` (per offer) at each cell of ``cell_offer``; None when every offer has the ``usual``
    value (gathering a flag per cell costs more than judging the cells: ``judge`` takes None)."""
    if mask.all() if usual else not mask.any():
        return None
    return mask.take(cell_offer)
