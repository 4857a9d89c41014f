"""Which card counts each row is quoted at when a request names none, and the combined plans' prices.

Without ``card_counts`` every row is quoted at every count it sells (``_billing.sold_counts``) up to the
operator's cap (``QuoteOptions.max_plan_cards``), and, with a deadline, at the fewest cards that meet it
by the expected hours (a whole number of bundles or nodes, at least the memory minimum). The evaluation
still runs as one (counts × rows) block over the union of those counts; ``requested`` marks the
candidates each row sells, so a count an offer never sells (16 cards of an 8-card machine) is neither
quoted nor counted as excluded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from schemas.quote import Range
from service.quote._money import cents_array
from service.quote._plans import plan_costs
from service.quote._tables import OfferTables

__all__ = ["fewest_meeting_deadline", "plan_candidates", "price_plans"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


class _Column(Protocol):
    def speedup(self, cards: int) -> Range: ...


class SpeedupColumns(Protocol):
    """Each row's speed-up column (``code``) and the columns' curves (``_scaling.ScalingColumns``)."""

    @property
    def columns(self) -> Sequence[_Column]: ...

    @property
    def code(self) -> IntArray: ...


def _fewest(scaling: SpeedupColumns, column: int, needed: float, first: int, last: int, step: int) -> int:
    """The smallest ``first + k × step`` ≤ ``last`` whose expected speed-up reaches ``needed``, else 0.

    Speed-up never falls as cards are added, so a binary search over the multiples finds it.
    """
    if first > last:
        return 0
    speedup = scaling.columns[column].speedup
    low, high = 0, (last - first) // step
    if speedup(first + high * step).expected < needed:
        return 0
    while low < high:
        middle = (low + high) // 2
        if speedup(first + middle * step).expected >= needed:
            high = middle
        else:
            low = middle + 1
    return first + low * step


def fewest_meeting_deadline(
    tables: OfferTables,
    scaling: SpeedupColumns,
    one_card_hours: FloatArray,
    deadline_hours: float,
    matching: BoolArray,
    fewest_cards: FloatArray,
    max_cards: int,
) -> IntArray:
    """``(rows,)``: each matching row's fewest cards that meet the deadline by expected hours, or 0."""
    found = np.zeros(tables.size, dtype=np.int64)
    memo: dict[tuple[int, float, int, int, int], int] = {}
    for row in np.flatnonzero(matching).tolist():
        step = int(tables.count_step[row])
        first = max(int(tables.count_floor[row]), int(fewest_cards[row]), 1)
        first = math.ceil(first / step) * step
        last = min(int(tables.max_units[row] * tables.unit_cards[row]), max_cards)
        key = (int(scaling.code[row]), float(one_card_hours[row]) / deadline_hours, first, last, step)
        if key not in memo:
            memo[key] = _fewest(scaling, *key)
        found[row] = memo[key]
    return found


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
        requested[[position[int(cards)] for cards in deadline_cards[rows].tolist()], rows] = True
    return counts, requested


def price_plans(
    tables: OfferTables,
    figures: FloatArray,
    counts: FloatArray,
    bounds: Sequence[tuple[int, int]],
    expected_cost: int,
) -> BoolArray:
    """Price the plan rows' ``(hours, cost)`` figure bounds in place; ``(counts, rows)``: False where a
    plan is no cheaper (to the fen, expected) than one of the products it combines on its own."""
    plans = slice(tables.offer_count, tables.size)
    hours_rows, cost_rows = zip(*bounds, strict=True)
    hours = figures[list(hours_rows), :, plans].reshape(-1, tables.size - tables.offer_count)
    costs = plan_costs(tables.plan_arrays, np.tile(counts, len(bounds)), hours)
    figures[list(cost_rows), :, plans] = costs.reshape(len(bounds), counts.size, -1)
    cost = figures[expected_cost]
    alone = cost[:, tables.plan_arrays.part_rows].min(axis=2)
    keep = np.ones(cost.shape, dtype=np.bool_)
    keep[:, plans] = cents_array(cost[:, plans]) < cents_array(alone)
    return keep
