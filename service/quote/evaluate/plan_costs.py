"""Combined plans priced in bulk: the cheapest combination of many (plan, cards, hours) cells at once.

``_plans`` lists each plan's combinations and the four counts of its best package worth trying; here
every candidate of every cell is worked out as flat arrays and the cheapest kept, with the same float
arithmetic as ``_plans.cheapest_combination`` (which prices one candidate for its line items), so a
returned quote's line items add up to the cost it was ranked by.

What a cell needs beside its hours is the same for every request that prices it (``PlanCells``, built
by ``cell_terms`` once per evaluation layout); ``plan_costs`` then prices each request's hours.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from service.quote.base.arrays import FloatArray, IntArray
from service.quote.model.billing import BILLING_TOLERANCE, billed_hours, whole_granules
from service.quote.model.plans import PAIR_KEY_SPAN, PairTerm, PlanArrays

__all__ = ["PlanCells", "cell_terms", "plan_costs"]


# A job's hours are capped at 2**31 in the pair keys (``PAIR_KEY_SPAN``), far past any combination's.
_KEY_HOURS_CAP = float(2**31)


@dataclass(frozen=True, slots=True)
class _RowTerms:
    """What the candidate arithmetic derives from a row's cards and terms alone, whatever the hours."""

    units: FloatArray  # packages rented: cards over the plan's unit, rounded up
    card_rate: FloatArray  # cards × card-hour price
    nothing_left: FloatArray  # hours left at or below this bill nothing (a millionth of a granule)

    @classmethod
    def of(cls, terms: FloatArray, cards: FloatArray) -> _RowTerms:
        return cls(
            units=np.ceil(cards / terms[PairTerm.UNIT_CARDS]),
            card_rate=cards * terms[PairTerm.RATE],
            nothing_left=BILLING_TOLERANCE * terms[PairTerm.GRANULARITY_HOURS],
        )


@dataclass(frozen=True, slots=True)
class _Expanded:
    """Every listed combination of each cell's plan, one row each, cells contiguous."""

    cell_of: IntArray | None  # (rows,) the cell of each row; None when each cell has one row
    cell_starts: IntArray  # (cells,) each cell's first row
    terms: FloatArray  # (PairTerm, rows)
    has_hourly: npt.NDArray[np.bool_] | None  # (rows,); None when every plan has a card-hour offer
    per_row: _RowTerms


@dataclass(frozen=True, slots=True)
class PlanCells:
    """Per priced cell (one plan at one card count), flat: what ``plan_costs`` needs beside the hours.

    The same for every request that prices these cells, so an evaluation's layout builds it once
    (``cell_terms``). When the plans list few combinations (``_EXPANDED_PER_CELL`` on average), every
    combination of every cell is laid out once (``expanded``) and priced without pruning by hours.
    """

    index: IntArray  # 0, 1, 2, ...: each cell's position
    cards: FloatArray
    first: IntArray  # the plan's first pair
    units: FloatArray  # units rented: cards over the plan's unit, rounded up
    key_base: FloatArray  # the plan's base in ``pair_key``
    cover_base: IntArray  # the plan's first ``cover_cost`` entry
    expanded: _Expanded | None
    first_pairs: _FirstPairs  # each cell's first combination, what a short job prices alone


_EXPANDED_PER_CELL = 4


@dataclass(frozen=True, slots=True)
class _FirstPairs:
    """Each cell's plan's first combination (every package count 0: it covers no hour, so it comes first
    among the plan's combinations by the hours they cover), laid out once per cell: a job of at most
    ``next_hours`` (the hours the plan's next combination covers, +inf without one) prices that
    combination alone, and the rest is the cheapest covering one. The usual case (the jobs of a few hours
    most requests are), priced without searching every cell's combinations (``plan_costs``)."""

    next_hours: FloatArray  # (cells,) the hours the plan's next one covers, +inf without one
    terms: FloatArray  # (PairTerm, cells)
    has_hourly: npt.NDArray[np.bool_] | None  # (cells,); None when every plan has a card-hour offer
    per_row: _RowTerms

    @classmethod
    def of(
        cls, arrays: PlanArrays, cell_plan: IntArray, cell_cards: FloatArray, first: IntArray
    ) -> _FirstPairs:
        terms = arrays.terms.take(first, axis=1)
        second = first + 1
        has_next = second < np.append(arrays.starts, arrays.pair_plan.size)[cell_plan + 1]
        next_hours = np.full(first.size, np.inf)
        next_hours[has_next] = arrays.terms[PairTerm.COVERED_HOURS].take(second[has_next])
        return cls(
            next_hours=next_hours,
            terms=terms,
            has_hourly=None if arrays.every_hourly else arrays.has_hourly[first],
            per_row=_RowTerms.of(terms, cell_cards),
        )


def _expanded(
    arrays: PlanArrays, cell_plan: IntArray, cell_cards: FloatArray, first: IntArray, pruning: bool
) -> _Expanded | None:
    pairs = np.diff(np.append(arrays.starts, arrays.pair_plan.size))[cell_plan]
    total = int(pairs.sum())
    if pruning and total > _EXPANDED_PER_CELL * cell_plan.size:
        return None
    cell_of = np.repeat(np.arange(cell_plan.size), pairs)
    cell_starts = np.cumsum(pairs) - pairs
    pair = np.arange(total) + np.repeat(first - cell_starts, pairs)
    terms = arrays.terms.take(pair, axis=1)
    return _Expanded(
        cell_of=None if total == cell_plan.size else cell_of,
        cell_starts=cell_starts,
        terms=terms,
        has_hourly=None if arrays.every_hourly else arrays.has_hourly[pair],
        per_row=_RowTerms.of(terms, cell_cards[cell_of]),
    )


def cell_terms(
    arrays: PlanArrays, cell_plan: IntArray, cell_cards: FloatArray, *, pruning: bool = True
) -> PlanCells:
    """``PlanCells`` for the cells of plans ``cell_plan`` (``PlanArrays.slots``: a row's plan at the
    cell's count) at ``cell_cards`` cards (``pruning`` False:
    every combination of every cell worked out, the reference the pruned pricing is tested against)."""
    first: IntArray = arrays.starts[cell_plan]
    return PlanCells(
        index=np.arange(cell_cards.size),
        cards=cell_cards,
        first=first,
        units=np.ceil(cell_cards / arrays.plan_unit_cards[cell_plan]),
        key_base=cell_plan * np.float64(PAIR_KEY_SPAN),
        cover_base=first + cell_plan,
        expanded=_expanded(arrays, cell_plan, cell_cards, first, pruning),
        first_pairs=_FirstPairs.of(arrays, cell_plan, cell_cards, first),
    )


def plan_costs(arrays: PlanArrays, cells: PlanCells, cell_hours: FloatArray) -> FloatArray:
    """``(cells,)``: the cheapest combination's cost of each cell's plan at its cards for its hours (NaN
    hours stay NaN); the same arithmetic as ``cheapest_combination``.

    A combination whose packages already cover the hours costs its packages alone at every ``k_b``
    (nothing is left to bill): the candidate arithmetic gives exactly that, so with few combinations
    every one is worked out (``PlanCells.expanded``). With many, per plan only the combinations covering
    fewer hours are worked out candidate by candidate; the rest is the cheapest of them
    (``cover_cost``) times the units.
    """
    if cell_hours.size == 0:
        return np.empty(0)
    expanded = cells.expanded
    if expanded is not None:
        # NaN hours give NaN candidates, and ``minimum`` keeps NaN.
        hours = cell_hours if expanded.cell_of is None else cell_hours.take(expanded.cell_of)
        every = _candidate_costs(expanded.terms, expanded.has_hourly, expanded.per_row, hours)
        if expanded.cell_of is None:
            return every
        cheapest: FloatArray = np.minimum.reduceat(every, expanded.cell_starts)
        return cheapest
    # Covered hours are whole, so "covers fewer hours than h" is "covers fewer than ceil(h)". Unknown
    # (NaN) hours take the cap, and come out NaN.
    whole_hours = np.fmin(np.ceil(cell_hours), _KEY_HOURS_CAP)
    firsts = cells.first_pairs
    if bool(((whole_hours > 0) & (whole_hours <= firsts.next_hours)).all()):
        return _first_alone(arrays, cells, cell_hours)
    short = np.searchsorted(arrays.pair_key, cells.key_base + whole_hours, side="left") - cells.first
    result: FloatArray = cells.units * arrays.cover_cost[cells.cover_base + short]
    ends = np.cumsum(short)
    total = int(ends[-1])
    if total:
        cell_of = np.repeat(cells.index, short)
        pair = np.arange(total) + np.repeat(cells.first - (ends - short), short)
        terms = arrays.terms.take(pair, axis=1)
        partial = _candidate_costs(
            terms,
            None if arrays.every_hourly else arrays.has_hourly[pair],
            _RowTerms.of(terms, cells.cards[cell_of]),
            cell_hours[cell_of],
        )
        worked = short > 0
        partial = np.minimum.reduceat(partial, (ends - short)[worked])
        result[worked] = np.minimum(partial, result[worked])
    result[np.isnan(cell_hours)] = np.nan
    return result


def _first_alone(arrays: PlanArrays, cells: PlanCells, cell_hours: FloatArray) -> FloatArray:
    """``plan_costs`` where the first combination alone covers fewer hours than each cell's job: what
    its search finds (one candidate per cell, the cheapest of its ``k_b``, against the cheapest
    combination covering every hour), priced off the cells' first combinations laid out once."""
    firsts = cells.first_pairs
    result: FloatArray = cells.units * arrays.cover_cost[cells.cover_base + 1]
    np.minimum(
        _candidate_costs(firsts.terms, firsts.has_hourly, firsts.per_row, cell_hours), result, out=result
    )
    result[np.isnan(cell_hours)] = np.nan
    return result


def _candidate_costs(
    terms: FloatArray, has_hourly: npt.NDArray[np.bool_] | None, per_row: _RowTerms, hours: FloatArray
) -> FloatArray:
    """The cheapest ``k_b`` of each listed combination (``terms``: its ``PairTerm`` rows) at its cards
    (``per_row``) over ``hours``, flat. ``has_hourly`` None: every plan has a card-hour offer."""
    covered_hours, covered_cost, length, best_cost, _, granularity, minimum, _ = terms
    rest = hours - covered_hours
    # The four counts of the best package tried (module docstring): 0, k1, k1 + 1 and kc.
    counts = np.empty((4, rest.size))
    counts[0] = 0.0
    covering = whole_granules(rest, length, out=counts[3])
    np.maximum(covering, 0.0, out=covering)
    most = np.floor((rest - minimum) / length, out=counts[1])
    np.maximum(most, 0.0, out=most)
    np.minimum(most, covering, out=most)
    np.minimum(np.add(most, 1, out=counts[2]), covering, out=counts[2])
    if has_hourly is not None:
        counts = np.where(has_hourly, counts, covering)  # packages only: cover every hour
    left = rest - counts * length
    billed = billed_hours(np.maximum(left, 0.0), granularity, minimum)
    billed[left <= per_row.nothing_left] = 0.0
    cost = per_row.units * (covered_cost + counts * best_cost)
    cost += per_row.card_rate * billed
    cheapest: FloatArray = cost.min(axis=0)
    return cheapest
