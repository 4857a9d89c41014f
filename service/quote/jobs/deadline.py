"""The fewest cards that meet a deadline, per row, for a request that names no card counts.

Each row is then also quoted at the fewest cards whose expected hours meet the deadline, and at the
fewest whose high end does (by the low speed-up, before interruptions: the plan the summary names when
the cheapest may miss the deadline is then among those quoted): a whole number
of its steps (bundles, nodes), from its floor (a node offer's minimum nodes, and at least the memory
minimum) up to its most cards within the operator's cap. The rule is a binary search over those counts by
expected speed-up (``_fewest``), which takes the speed-up never to fall as cards are added.

That holds for every column whose cross-node factor is at least 0.5 (``_scaling``). On such a column the
search's answer is the first count whose expected speed-up reaches the one needed, rounded up to the
row's step, so every row of the column is answered by one ``searchsorted`` over the column's speed-ups at
1, 2, 3, ... cards (worked out once per set of columns and bound, ``_speedups_by_count``). A column where the
speed-up does fall somewhere (a heavy job across Ethernet nodes) keeps the search, row by row, so its
answer is the same either way.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np

from service.quote.base.arrays import BoolArray, FloatArray, IntArray, frozen
from service.quote.base.memo import MemoSlot, kept_by_identity, memoized
from service.quote.model.scaling import ScalingColumn, ScalingColumns
from service.quote.model.tables import OfferTables

__all__ = [
    "DEADLINE_BOUNDS",
    "SpeedupBound",
    "fewest_meeting_deadline",
    "prepare_deadline_counts",
    "prepare_row_kinds",
]

SpeedupBound = Literal["expected", "low"]
"""Which speed-up a deadline is met on: the expected one, or the low one (the high end's hours)."""


def _fewest(
    columns: tuple[ScalingColumn, ...],
    column: int,
    needed: float,
    first: int,
    last: int,
    step: int,
    bound: SpeedupBound = "expected",
) -> int:
    """The smallest ``first + k × step`` ≤ ``last`` whose ``bound`` speed-up reaches ``needed``, else 0.

    A binary search over the multiples: exact where the speed-up never falls as cards are added.
    """
    if first > last:
        return 0

    def speedup(cards: int) -> float:
        value: float = getattr(columns[column].speedup(cards), bound)
        return value

    low, high = 0, (last - first) // step
    if speedup(first + high * step) < needed:
        return 0
    while low < high:
        middle = (low + high) // 2
        if speedup(first + middle * step) >= needed:
            high = middle
        else:
            low = middle + 1
    return first + low * step


@memoized(16)
def _speedups_by_count(
    columns: tuple[ScalingColumn, ...], most_cards: int, bound: SpeedupBound
) -> tuple[FloatArray, BoolArray]:
    """``(columns, most_cards)``: each column's ``bound`` speed-up at 1 … ``most_cards`` cards, and
    ``(columns,)`` whether it never falls along them; read-only."""
    expected: FloatArray = np.array(
        [_speedups(column, most_cards, bound) for column in columns], dtype=np.float64
    ).reshape(len(columns), most_cards)
    rising: BoolArray = np.asarray((np.diff(expected, axis=1) >= 0).all(axis=1))
    expected.flags.writeable = rising.flags.writeable = False
    return expected, rising


def _speedups(column: ScalingColumn, most_cards: int, bound: SpeedupBound) -> Sequence[float]:
    """``column``'s ``bound`` speed-up at 1 … ``most_cards`` cards: in one pass for a plain column, else
    (a column of independent runs, say, whose ``speedup`` is its own) count by count."""
    if type(column) is not ScalingColumn:
        return [getattr(column.speedup(cards), bound) for cards in range(1, most_cards + 1)]
    return column.speedups_through(most_cards, bound)


# The speed-ups a deadline is met on: the expected hours on the expected one, the high hours on the low.
DEADLINE_BOUNDS: tuple[SpeedupBound, SpeedupBound] = ("expected", "low")


def prepare_deadline_counts(tables: OfferTables, scaling: ScalingColumns, max_cards: int) -> None:
    """Make what every deadline under the rule of ``scaling`` reads whatever its hours: the count limits
    of the cap ``max_cards`` (kept on the tables) and each column's speed-ups at every count up to the
    most cards, at both ``DEADLINE_BOUNDS`` (kept in the process), so the first deadline does not (about
    5 ms at 96,000 offers, 3 ms over 300 clusters selling up to 8,192 cards)."""
    limits = _count_limits(tables, max_cards)
    for bound in DEADLINE_BOUNDS:
        _speedups_by_count(scaling.columns, limits[2], bound)


def fewest_meeting_deadline(
    tables: OfferTables,
    scaling: ScalingColumns,
    bounds: Sequence[tuple[FloatArray, SpeedupBound]],
    deadline_hours: float | FloatArray,
    matching: BoolArray,
    fewest_cards: FloatArray,
    max_cards: int,
    *,
    lookup: bool = True,
) -> IntArray:
    """``(bounds, rows)``: each matching row's fewest cards that meet the deadline, by each of ``bounds``'
    one-card hours and the speed-up they divide by (the expected hours on the expected speed-up, the high
    ones on the low), or 0 (``lookup`` False: every row by the search, the reference the lookup is tested
    against). What the bounds share (each row's counts to choose from) is worked out once."""
    limits = _count_limits(tables, max_cards)
    last, step, most_cards = limits
    first = _first_counts(tables, limits, fewest_cards)
    order, starts = _by_column(tables, scaling)
    found = np.empty((len(bounds), tables.size), dtype=np.int64)
    for at, (one_card_hours, bound) in enumerate(bounds):
        # The speed-up that meets the deadline; none does where no time is left (a lead time past it).
        with np.errstate(divide="ignore"):
            needed = np.where(deadline_hours > 0, one_card_hours / np.maximum(deadline_hours, 1e-300), np.inf)
        speedups, rising = _speedups_by_count(scaling.columns, most_cards, bound)
        if not lookup:
            rising = np.zeros_like(rising)
        # Per row, the index of the first count reaching ``needed`` (``most_cards`` when none does).
        reached = _reached_by_kind(tables, scaling, needed, (speedups, rising))
        if reached is None:
            reached = _reached(tables.size, (order, starts), needed, (speedups, rising))
        # The first multiple of the step from ``first`` at or past that count (count = index + 1).
        row_found = found[at]
        np.add(first, -(-(np.maximum(reached + 1, first) - first) // step) * step, out=row_found)
        row_found[(row_found > last) | ~matching] = 0
        if not rising.all():
            falling = matching & ~rising[scaling.code]
            _search_falling(scaling, (needed, first, last, step), falling, row_found, bound)
    return found


# Each row's most cards within a cap and its step, and the most cards of all (at least 1).
_CountLimits = tuple[IntArray, IntArray, int]


def _count_limits(tables: OfferTables, max_cards: int) -> _CountLimits:
    """The ``_CountLimits`` of the cap ``max_cards``, made once per tables and cap."""
    return _COUNT_LIMITS.of(tables.memos).get(max_cards, lambda: _limits_of(tables, max_cards))


def _limits_of(tables: OfferTables, max_cards: int) -> _CountLimits:
    """The ``_CountLimits`` of the cap ``max_cards``: the same for every deadline on the tables."""
    last = np.minimum(np.trunc(tables.max_units * tables.unit_cards), max_cards).astype(np.int64)
    step = tables.count_step.astype(np.int64)
    return frozen(last), frozen(step), max(int(last.max(initial=1)), 1)


def _first_counts(tables: OfferTables, limits: _CountLimits, fewest_cards: FloatArray) -> IntArray:
    """Each row's first count to choose from: its floor (at least the memory minimum ``fewest_cards``)
    rounded up to its step. Requests of one model size share their read-only ``fewest_cards``, so the
    counts of the last few such arrays are kept by identity (with the cap's ``limits``), each with the
    arrays it was made from."""
    last, step, _ = limits
    if fewest_cards.flags.writeable:
        return _first_of(tables, last, step, fewest_cards)
    return kept_by_identity(
        _FIRST_COUNTS.of(tables.memos),
        (fewest_cards, last),
        lambda: frozen(_first_of(tables, last, step, fewest_cards)),
    )


def _first_of(tables: OfferTables, last: IntArray, step: IntArray, fewest_cards: FloatArray) -> IntArray:
    """``_first_counts`` worked out."""
    # Past ``last`` every row answers 0, so the floor is capped there (a memory minimum may be huge).
    floor = np.minimum(np.maximum(tables.count_floor, np.trunc(fewest_cards)), last + 1)
    first: IntArray = -(-np.maximum(floor.astype(np.int64), 1) // step) * step
    return first


# Per snapshot: each cap's most cards and steps per row, and the first counts of the memory minimums
# asked for last, by the identity of the minimums and of the cap's most cards per row.
_COUNT_LIMITS: MemoSlot[int, _CountLimits] = MemoSlot("deadline count limits", size=2)
_FIRST_COUNTS: MemoSlot[Hashable, tuple[tuple[object, ...], IntArray]] = MemoSlot(
    "deadline first counts", size=4
)


def _reached(
    rows: int, by_column: tuple[IntArray, list[int]], needed: FloatArray, lookup: tuple[FloatArray, BoolArray]
) -> IntArray:
    """Per row, the index of the first count whose speed-up reaches ``needed`` on its column (a rising
    one; ``most_cards`` elsewhere): one ``searchsorted`` per column over its rows (``_by_column``)."""
    order, starts = by_column
    reached_in_order = _search_columns(needed[order], starts, lookup)
    reached = np.empty(rows, dtype=np.int64)
    reached[order] = reached_in_order
    return reached


def _search_columns(needed: FloatArray, starts: list[int], lookup: tuple[FloatArray, BoolArray]) -> IntArray:
    """Per value of ``needed`` (ordered by column, each column's from ``starts``), the index of the first
    count whose speed-up reaches it on a rising column (``lookup``: speed-ups by count, rising), the
    number of counts on any other."""
    speedups, rising = lookup
    reached = np.full(needed.size, speedups.shape[1], dtype=np.int64)
    for column in np.flatnonzero(rising).tolist():
        at = slice(starts[column], starts[column + 1])
        reached[at] = np.searchsorted(speedups[column], needed[at])
    return reached


def _reached_by_kind(
    tables: OfferTables, scaling: ScalingColumns, needed: FloatArray, lookup: tuple[FloatArray, BoolArray]
) -> IntArray | None:
    """``_reached`` searched once per kind of row, a speed-up column, a GPU model and a lead time (a few
    hundred at 96,000 offers), when ``needed`` is the same across each kind (it is the one-card hours,
    which follow the GPU, over the time the lead leaves): else None. The kinds are the tables' own (the
    job gives no row another column), worked out once per snapshot."""
    if scaling.code is not tables.scaling_code:
        return None
    of_row, first_row, starts = _row_kinds(tables)
    needed_by_kind = needed.take(first_row)
    if not _same(needed_by_kind.take(of_row), needed):
        return None
    reached: IntArray = _search_columns(needed_by_kind, starts, lookup).take(of_row)
    return reached


def _row_kinds(tables: OfferTables) -> tuple[IntArray, IntArray, list[int]]:
    return _KINDS.of(tables.memos).get(0, lambda: _kinds(tables))


def prepare_row_kinds(tables: OfferTables) -> None:
    """Make the rows' kinds every deadline on ``tables`` reads (``_reached_by_kind``), kept on the tables,
    so the first deadline request does not (5 to 19 ms at 96,000 offers)."""
    _row_kinds(tables)


def _same(values: FloatArray, others: FloatArray) -> bool:
    """Whether two arrays of one shape hold the same values, NaN equal to NaN: what ``np.array_equal``
    with ``equal_nan`` says, without the copies of the values that are not NaN it compares."""
    same = values == others
    if same.all():
        return True
    same |= np.isnan(values) & np.isnan(others)
    return bool(same.all())


def _kinds(tables: OfferTables) -> tuple[IntArray, IntArray, list[int]]:
    """Each row's kind (its speed-up column, GPU model and lead time), the first row of each kind, and
    where each column's kinds start (kinds are ordered by column)."""
    # Few lead times among many rows: each row's found among the distinct ones (``np.unique``'s inverse,
    # whose sort of every row took 15 ms at 96,000 rows).
    lead_times = np.unique(tables.lead_time_h)
    lead_code = np.searchsorted(lead_times, tables.lead_time_h)
    leads = int(lead_code.max(initial=0)) + 1
    gpus = int(tables.gpu_code.max(initial=0)) + 1
    keys = (tables.scaling_code.astype(np.int64) * gpus + tables.gpu_code) * leads + lead_code.ravel()
    unique, first_row, of_row = np.unique(keys, return_index=True, return_inverse=True)
    columns = int(tables.scaling_code.max(initial=-1)) + 1
    starts = np.searchsorted(unique // (gpus * leads), np.arange(columns + 1))
    return frozen(of_row.ravel()), frozen(first_row), starts.tolist()


# Per snapshot: its rows' kinds for the deadline lookup (``_reached_by_kind``).
_KINDS: MemoSlot[int, tuple[IntArray, IntArray, list[int]]] = MemoSlot("deadline row kinds", size=1)


def _by_column(tables: OfferTables, scaling: ScalingColumns) -> tuple[IntArray, list[int]]:
    """The rows ordered by their speed-up column, and where each column's rows start in that order: the
    tables' own order unless the job gives some rows other columns (a model split across cards)."""
    if scaling.code is tables.scaling_code:
        return tables.scaling_order, tables.scaling_starts.tolist()
    order: IntArray = np.argsort(scaling.code, kind="stable")
    starts = np.searchsorted(scaling.code[order], np.arange(len(scaling.columns) + 1))
    return order, starts.tolist()


def _search_falling(
    scaling: ScalingColumns,
    terms: tuple[FloatArray, IntArray, IntArray, IntArray],
    rows: BoolArray,
    found: IntArray,
    bound: SpeedupBound,
) -> None:
    """``found`` for ``rows`` (on a column whose speed-up falls somewhere) by the search, row by row;
    ``terms``: needed speed-up, first and last count and step."""
    needed, first, last, step = terms
    memo: dict[tuple[int, float, int, int, int], int] = {}
    for row in np.flatnonzero(rows).tolist():
        key = (int(scaling.code[row]), float(needed[row]), int(first[row]), int(last[row]), int(step[row]))
        if key not in memo:
            memo[key] = _fewest(scaling.columns, *key, bound)
        found[row] = memo[key]
