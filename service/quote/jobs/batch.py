"""A batch job's candidates: which card counts each row is quoted at when a request names none.

Without ``card_counts`` every row is quoted at every count it sells (``model.billing.sold_counts``) up to the
operator's cap (``QuoteOptions.max_plan_cards``), and, with a deadline, at the fewest cards that meet it
by the expected hours (``jobs.deadline``). The evaluation still runs as one (counts × rows) block over the
union of those counts; ``requested`` marks the candidates each row sells, so a count an offer never
sells (16 cards of an 8-card machine) is neither quoted nor counted as excluded.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from service.quote.base.arrays import BoolArray, IntArray
from service.quote.model.tables import OfferTables

__all__ = ["plan_candidates"]


def plan_candidates(
    tables: OfferTables, base_counts: Sequence[int], max_cards: int, deadline_cards: IntArray | None
) -> tuple[tuple[int, ...], BoolArray]:
    """The counts to evaluate and which (count, row) candidates are quoted, for a request without counts."""
    sold_rows = [at for at, cards in enumerate(tables.plan_counts) if cards <= max_cards]
    extra = set() if deadline_cards is None else set(deadline_cards[deadline_cards > 0].tolist())
    counts = tuple(sorted({*base_counts, *(tables.plan_counts[at] for at in sold_rows), *extra}))
    position = {cards: at for at, cards in enumerate(counts)}
    requested = np.zeros((len(counts), tables.size), dtype=np.bool_)
    requested[[position[tables.plan_counts[at]] for at in sold_rows]] = tables.sells[sold_rows]
    if deadline_cards is not None:
        rows = np.flatnonzero(deadline_cards)
        requested[np.searchsorted(counts, deadline_cards[rows]), rows] = True
    return counts, requested
