"""A placement worked out once per kind of row, not once per cell: replicas and runs over machines.

Placing replicas or runs (``jobs.serving.placed_replicas``, ``jobs.independent.placed_runs``) takes a
few dozen array operations per cell, on the cell's card count and its row's figures. Its answer for a
cell depends on nothing else, and rows alike in every figure a placement reads (the tables' columns in
``PLACEMENT_COLUMNS`` and the job's own per-row arrays, ``LayoutInputs.placement_rows``) are many: 96,000
offers hold 351 kinds. So a large layout's placement is worked out at each (count, kind) pair
and each cell reads its pair's answer: a gather per result instead of the operations per cell (an
independent sweep's layout of 1.2 million cells placed in 64 ms before); a layout of some rows alone,
with more pairs than a share of its cells, at the pairs its cells hold (a few thousand of 40,000 cells).
Rows are alike when their figures are equal bit for bit, so every cell gets the very figures it would
get on its own.

A job's arrays are new with each memory need, and folding them into the kinds over every row took 4 ms
at 96,000 offers. They follow from a row's GPU memory (``LayoutInputs.placement_follows``), so the
kinds that column makes are worked out once per snapshot, each job array is checked to be alike within
each of them, and only one row of each is folded (``_followed``).

A placement that reads a per-row array these kinds do not key fails loudly (``_KindRows``): it would
otherwise read one row's figure for another's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import numpy as np

from service.quote.base.arrays import ArrayT, BoolArray, FloatArray, IntArray, frozen, rows_alike
from service.quote.base.memo import MemoSlot
from service.quote.jobs import LayoutInputs, RowsAt
from service.quote.jobs.base import MEMORY_FOLLOWS, every_row
from service.quote.model.tables import OfferTables

__all__ = ["PLACEMENT_COLUMNS", "placed_by_kind", "placed_everywhere", "prepare_kinds"]

# The offer tables' columns a placement reads (besides the job's own ``placement_rows``).
PLACEMENT_COLUMNS = (
    "machine_cards",
    "spans_machines",
    "min_units",
    "unit_cards",
    "max_units",
    "available_cards",
    "most_units",
)
# A per-row figure a kind is keyed by: a float's bits, or a flag.
Column = IntArray | BoolArray
# Below this many cells a layout places each cell itself: keying its rows costs more than it saves.
_FROM_CELLS = 1 << 16
# Placed by kind only when the (count, kind) pairs are at most this share of the cells.
_PAIR_SHARE = 0.25
# From this many cells, a layout with more pairs than that share places the pairs its cells hold alone,
# when those are few: an independent sweep's rows billed first (some 40,000 cells of 1,600 pairs, where
# 33 counts of 351 kinds make 11,600) were placed cell by cell in 1.6-1.8 ms.
_PRESENT_FROM_CELLS = 1 << 14


@dataclass(frozen=True, slots=True)
class _Kinds:
    """Rows alike: each row's kind, and a row of each kind."""

    code: IntArray  # (rows,)
    first: IntArray  # (kinds,) a row of each kind


def _kinds(kinds: _Kinds, columns: list[Column]) -> _Kinds:
    """``kinds`` split by every one of ``columns`` (integers or flags per row: ``arrays.rows_alike``)."""
    code, first = rows_alike((kinds.code, *columns))
    return _Kinds(code=frozen(code), first=frozen(first))


def _bits(values: FloatArray | BoolArray) -> Column:
    """``values`` as integers equal exactly when the values are equal bit for bit (booleans as they are)."""
    if values.dtype == np.bool_:
        return cast(BoolArray, values)
    bits: IntArray = values.view(np.int64)
    return bits


def _table_kinds(tables: OfferTables) -> _Kinds:
    one_kind = _Kinds(code=np.zeros(tables.size, dtype=np.int64), first=np.zeros(1, dtype=np.int64))
    return _kinds(one_kind, [_bits(getattr(tables, name)) for name in PLACEMENT_COLUMNS])


# Per snapshot, its rows' kinds by the tables' placement columns.
_TABLE_KINDS: MemoSlot[int, _Kinds] = MemoSlot("placement kinds", size=1)


def _kinds_of_table(tables: OfferTables) -> _Kinds:
    return _TABLE_KINDS.of(tables.memos).get(0, lambda: _table_kinds(tables))


def _row_kinds(
    tables: OfferTables, job_rows: tuple[np.ndarray, ...], follows: tuple[str, ...] = ()
) -> _Kinds:
    """The rows' kinds by the tables' placement columns and the job's per-row arrays: kept by the arrays'
    identity when each is read-only (a serving job's replica layout is one per memory need's fewest
    cards: ``jobs.serving.serving_layout``), with the arrays, so their ids are not reused meanwhile.
    New arrays that follow from the tables' columns ``follows`` (``LayoutInputs.placement_follows``)
    are folded over one row of each kind those columns make, not over every row (``_followed``)."""
    table = _kinds_of_table(tables)
    kept = None
    key = tuple(id(values) for values in job_rows)
    if not any(values.flags.writeable for values in job_rows):
        kept = _JOB_KINDS.of(tables.memos)
        found = kept.lookup(key)
        if found is not None and all(a is b for a, b in zip(found[0], job_rows, strict=True)):
            return found[1]
    kinds = _followed(tables, table, job_rows, follows)
    if kinds is None:
        kinds = _kinds(table, [_bits(values) for values in job_rows])
    if kept is not None:
        kept.keep(key, (job_rows, kinds))
    return kinds


def _followed_kinds(tables: OfferTables, table: _Kinds, follows: tuple[str, ...]) -> _Kinds:
    """``table``'s kinds split by the tables' columns ``follows``, once per snapshot."""
    return _FOLLOWED_KINDS.of(tables.memos).get(
        follows, lambda: _kinds(table, [_bits(getattr(tables, name)) for name in follows])
    )


def prepare_kinds(tables: OfferTables) -> None:
    """Make the rows' kinds every placed job on ``tables`` reads (``_row_kinds``: by the placement columns,
    and by what serving replicas and independent runs follow from), kept on the tables, so the first such
    request does not (about 50 ms at 96,000 offers)."""
    _followed_kinds(tables, _kinds_of_table(tables), MEMORY_FOLLOWS)


def _followed(
    tables: OfferTables, table: _Kinds, job_rows: tuple[np.ndarray, ...], follows: tuple[str, ...]
) -> _Kinds | None:
    """The kinds ``_kinds`` makes of ``table`` and ``job_rows``, from the finer kinds the tables' columns
    ``follows`` make (once per snapshot): each job array read at one row of each finer kind and checked
    to hold that row's value at every row of it, then the finer kinds alike in the table's kind and
    every job array merged (a few hundred of them sorted, not 100,000 rows folded: 4.4 ms a new memory
    need at 96,000 offers, about 1 ms so). The same rows alike, so every cell placed the same; None when
    some array does not follow from those columns (a row differs from its finer kind's)."""
    if not follows:
        return None
    finer = _followed_kinds(tables, table, follows)
    # Each finer kind's merged kind, coded densely column by column: (kind so far, value) pairs.
    merged: IntArray = table.code.take(finer.first)
    for values in job_rows:
        bits = _bits(values)
        first_bits = bits.take(finer.first)
        if not np.array_equal(first_bits.take(finer.code), bits):
            return None
        distinct, value_code = np.unique(first_bits, return_inverse=True)
        pairs = merged * distinct.size + value_code.reshape(-1)
        merged = np.unique(pairs, return_inverse=True)[1].reshape(-1)
    _, first, code = np.unique(merged, return_index=True, return_inverse=True)
    return _Kinds(code=frozen(code.reshape(-1).take(finer.code)), first=frozen(finer.first.take(first)))


# The kinds of the read-only per-row arrays of the jobs seen lately, by the arrays' identity.
_JOB_KINDS: MemoSlot[tuple[int, ...], tuple[tuple[np.ndarray, ...], _Kinds]] = MemoSlot(
    "job row kinds", size=8
)
# Per snapshot, its rows' kinds by the placement columns and the columns jobs' arrays follow from.
_FOLLOWED_KINDS: MemoSlot[tuple[str, ...], _Kinds] = MemoSlot("followed placement kinds", size=2)


class _KindRows:
    """The ``RowsAt`` of the (count, kind) pairs: each pair reads its kind's first row, and only from an
    array the kinds are keyed by."""

    def __init__(self, rows: IntArray, keyed: tuple[np.ndarray, ...]) -> None:
        self._rows = rows
        self._keyed = {id(values) for values in keyed}

    def __call__(self, values: ArrayT) -> ArrayT:
        if id(values) not in self._keyed:
            raise ValueError("a placement read a per-row array its rows' kinds are not keyed by")
        return values.take(self._rows)  # type: ignore[return-value]


def placed_by_kind(
    tables: OfferTables, inputs: LayoutInputs, cards: FloatArray, cell_count: IntArray, at: RowsAt
) -> tuple[FloatArray, BoolArray, FloatArray] | None:
    """``inputs.placement`` at the cells of counts ``cell_count`` (positions in ``cards``; ``at`` reads
    per-row values at those cells), each cell's answer read from its (count, kind) pair's: every pair
    placed where they are few beside the cells, else the pairs the cells hold alone; None when the
    layout is better placed cell by cell."""
    if inputs.placement is None or cell_count.size < min(_FROM_CELLS, _PRESENT_FROM_CELLS):
        return None
    kinds = _row_kinds(tables, inputs.placement_rows, inputs.placement_follows)
    keyed = (*(getattr(tables, name) for name in PLACEMENT_COLUMNS), *inputs.placement_rows)
    pair = at(kinds.code) + cell_count * kinds.first.size
    if cell_count.size >= _FROM_CELLS and kinds.first.size * cards.size <= _PAIR_SHARE * cell_count.size:
        pair_rows = _KindRows(np.tile(kinds.first, cards.size), keyed)
        units, placed, machines = inputs.placement(np.repeat(cards, kinds.first.size), pair_rows)
        return units.take(pair), placed.take(pair), machines.take(pair)
    if cell_count.size < _PRESENT_FROM_CELLS:
        return None
    # The pairs the cells hold, each placed once, and each cell's pair among them.
    present = np.zeros(kinds.first.size * cards.size, dtype=np.bool_)
    present[pair] = True
    used = np.flatnonzero(present)
    if used.size > _PAIR_SHARE * cell_count.size:
        return None
    count_at, kind_at = np.divmod(used, kinds.first.size)
    units, placed, machines = inputs.placement(
        cards.take(count_at), _KindRows(kinds.first.take(kind_at), keyed)
    )
    slot = np.zeros(present.size, dtype=np.int64)
    slot[used] = np.arange(used.size)
    at_pair = slot.take(pair)
    return units.take(at_pair), placed.take(at_pair), machines.take(at_pair)


def placed_everywhere(
    tables: OfferTables, inputs: LayoutInputs, cards: FloatArray, one_card: int
) -> tuple[BoolArray, FloatArray]:
    """``(counts, rows)``: whether ``inputs.placement`` places each count's ``cards`` on each row (what a
    layout's ``supplies`` holds at each cell it bills), and ``(rows,)`` the units it bills at the count
    at ``one_card``; worked out per (count, kind) pair where those are at most ``_PAIR_SHARE`` of the
    grid, else at every cell of the grid at once."""
    assert inputs.placement is not None
    kinds = _row_kinds(tables, inputs.placement_rows, inputs.placement_follows)
    if kinds.first.size > _PAIR_SHARE * tables.size:
        units, placed, _ = inputs.placement(cards[:, None], every_row)
        shape = (cards.size, tables.size)
        return np.broadcast_to(placed, shape), np.broadcast_to(units, shape)[one_card]
    keyed = (*(getattr(tables, name) for name in PLACEMENT_COLUMNS), *inputs.placement_rows)
    pair_rows = _KindRows(np.tile(kinds.first, cards.size), keyed)
    units, placed, _ = inputs.placement(np.repeat(cards, kinds.first.size), pair_rows)
    shape = (cards.size, kinds.first.size)
    by_kind: BoolArray = placed.reshape(shape).take(kinds.code, axis=1)
    return by_kind, units.reshape(shape)[one_card].take(kinds.code)
