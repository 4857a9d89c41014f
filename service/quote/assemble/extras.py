"""The candidates a response returns beside its ranking: the single card the summary compares with, and
the plan without the recommendation's risk.

- The single card: the cheapest one card that runs the job within the limits (judged as their confidence
  says) and is billed for one card, or one machine rented as a unit.
- The safe plan: when the recommendation has a risk (its high end past the deadline or the budget, spot
  capacity the vendor can take back), the top of the same ``rank_by`` ranking among the candidates
  without any; ``QuoteResponse.safe`` names it and the summary's first sentence says what it costs more.
  The candidates' high ends are read in ranking order (the top ``limit`` first), a few at a time, until
  one meets every limit.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from schemas.quote import QuoteRequest, RankBy
from service.quote.base.arrays import BoolArray, IntArray
from service.quote.evaluate.evaluation import Evaluation, Figure
from service.quote.evaluate.judge import HighWithin, limit_rows, single_card_eligible
from service.quote.model.tables import OfferTables
from service.quote.rank import CandidateKeys, Picks, first_among, top

__all__ = ["add_single_card", "safe_position"]


def _single_card_position(evaluation: Evaluation, tables: OfferTables, request: QuoteRequest) -> int | None:
    """Offer index of the cheapest single card that runs the job within the deadline and budget and is
    billed for one card, or at most one machine the offer rents as one unit (a cluster whose minimum
    bills many cards is no single card); None when no such option exists."""
    column, rows = evaluation.one_card_at()
    figures = evaluation.figures  # each figure read at the column's cells alone (the rows read)
    hours_row, cost_row = limit_rows(request)
    eligible = single_card_eligible(
        request,
        evaluation.runnable[column],
        (figures[Figure.UNITS][column], tables.unit_cards[rows], tables.machine_cards[rows]),
        (figures[hours_row][column], figures[cost_row][column]),
    )
    at = np.flatnonzero(eligible)
    if at.size == 0:
        return None
    cost = evaluation.cost_expected[column][at]
    at = at[cost == cost.min()]
    if at.size == 1:
        return int(rows[at[0]])
    # Tied on cost (one count column, so the same cards): the fewest hours, then the offer id, compared
    # in Python over the few tied, as the cost ranking orders them.
    hours = evaluation.hours_expected[column][at].tolist()
    offers = rows[at]
    ids = tables.id_order[offers].tolist()
    return int(min(zip(hours, ids, offers.tolist(), strict=True))[2])


def add_single_card(
    chosen: list[tuple[int, int, int]], evaluation: Evaluation, tables: OfferTables, request: QuoteRequest
) -> int | None:
    """Where the single-card comparison stands in ``chosen`` (appended at rank 0 when not ranked)."""
    offer = _single_card_position(evaluation, tables, request)
    if offer is None:
        return None
    candidate = (offer, evaluation.one_card_column)
    for at, (row, column, _) in enumerate(chosen):
        if (row, column) == candidate:
            return at
    chosen.append((*candidate, 0))
    return len(chosen) - 1


def safe_position(
    keys: CandidateKeys,
    picks: Picks,
    evaluation: Evaluation,
    tables: OfferTables,
    request: QuoteRequest,
    top_k: bool,
) -> int | None:
    """When the recommendation has a risk (its high end past a limit, spot capacity): the position in
    ``keys`` of the top of the same ranking among the candidates without any, or None (no risk, or no
    candidate without one). ``keys`` are the qualifying cells' in cell order."""
    _, offer = keys.cell(picks.recommended)
    high_ok, spot = evaluation.high_ok, tables.interruptible

    # Each candidate's billed cell: kept with keys read off the evaluation's cells, else searched once.
    index = keys.cell_index if keys.cell_index is not None else evaluation.cells_at(keys.positions)

    def cells(at: IntArray) -> IntArray:
        return index.take(at)

    def on_demand(at: IntArray | None) -> BoolArray:
        """Whether the candidates ``at`` (None: every one) are on capacity no one takes back."""
        flags: BoolArray = ~spot.take(evaluation.cell_offer.take(index if at is None else index.take(at)))
        return flags

    if high_ok is None:
        if not spot[offer]:
            return None
        return first_among(keys, on_demand(None), request.rank_by, top_k=top_k)

    # The top ``limit`` (ranks from 1) lead the ranking: read first, the recommendation among them.
    ranked = np.fromiter((at for at, rank in picks.ranks.items() if rank > 0), dtype=np.int64)
    found = _first_within(keys, ranked, on_demand, cells, high_ok, request.rank_by, top_k)
    return None if found == picks.recommended else found


# Past the top ``limit``, the candidates whose high ends are read next, in ranking order, and how much
# more each later read takes: a plan without the risk is usually near the top, so most high ends are
# never billed.
_NEXT_READ = 16
_READ_GROWTH = 4


def _first_within(
    keys: CandidateKeys,
    ranked: IntArray,
    on_demand: Callable[[IntArray], BoolArray],
    cells: Callable[[IntArray], IntArray],
    high_ok: HighWithin,
    rank_by: RankBy,
    top_k: bool,
) -> int | None:
    """Position in ``keys`` of the first candidate in ``rank_by`` order that is ``on_demand`` and whose
    high end meets every limit (read at its billed cell, ``cells``), or None. ``ranked``: the first
    candidates in that order (a prefix of it), read first; then the next few in ranking order at a time,
    the rest all at once when few are left (``top_k`` False, the reference: every candidate at once)."""
    unread = np.ones(keys.size, dtype=np.bool_)
    if top_k:
        ahead = ranked[on_demand(ranked)]
        within = high_ok.at(cells(ahead))
        if within.any():
            return int(ahead[np.argmax(within)])
        unread[ranked] = False
    pending = np.flatnonzero(unread)
    pending = pending[on_demand(pending)]
    read = _NEXT_READ
    while top_k and pending.size > 2 * read:
        ahead = pending[top(keys.among(pending), rank_by, read)]
        within = high_ok.at(cells(ahead))
        if within.any():
            return int(ahead[np.argmax(within)])
        unread[ahead] = False
        pending = pending[unread.take(pending)]
        read *= _READ_GROWTH
    among = np.zeros(keys.size, dtype=np.bool_)
    among[pending] = high_ok.at(cells(pending))
    return first_among(keys, among, rank_by, top_k=top_k)
