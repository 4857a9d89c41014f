"""The array types the engine's modules annotate with: one name per element type."""

from __future__ import annotations

import math
from typing import Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = [
    "ArrayT",
    "BoolArray",
    "FloatArray",
    "IntArray",
    "frozen",
    "kth_least",
    "rows_alike",
    "set_per_row",
    "unique_sorted",
    "whole_positions",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
ArrayT = TypeVar("ArrayT", bound="np.ndarray[Any, Any]")


def frozen(array: ArrayT) -> ArrayT:
    """``array`` made read-only (what a snapshot or a cache shares must not be written), and returned."""
    array.flags.writeable = False
    return array


def unique_sorted(positions: IntArray, *, runs: bool = True) -> IntArray:
    """``positions`` ascending, once each: ``np.unique`` by a stable sort, which merges ascending runs
    (timsort) and costs less than numpy's hash table on the few thousand positions a request holds;
    ``runs`` False: positions in no order (rows gathered along sorted keys), sorted by numpy's default
    sort, a third of timsort's time on them."""
    ordered = np.sort(positions, kind="stable" if runs else None)
    if ordered.size:
        ordered = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
    return ordered


# Past this many values, ``kth_least`` partitions only those up to a bound read off a sample of this many
# of them, for a ``k`` of at most a quarter of the sample (the few a ranking reads at a time). numpy's
# partition takes about 10 ns a value: the 12,800 candidates of the default quote at 2,000 offers took
# 145 us whole, 25 us sampled; below 4,096 values the sample's sort costs more than it saves.
_KTH_SAMPLED_FROM = 4_096
_KTH_SAMPLE = 1_024


def kth_least(values: FloatArray, k: int) -> float:
    """The ``k``-th least of ``values`` (NaN last), as ``np.partition`` finds it. Of many values, only
    those up to the ``k``-th least of an evenly spaced sample are partitioned: at least ``k`` values (those
    sampled) are within that bound, so the ``k``-th least of all is too, with every value below it (a
    partition of 500,000 values costs 5 ms; the sample, its sort and one comparison pass a tenth)."""
    if values.size > _KTH_SAMPLED_FROM and 4 * k <= _KTH_SAMPLE:
        bound = np.sort(values[:: values.size // _KTH_SAMPLE])[k - 1]
        if not np.isnan(bound):
            values = values[values <= bound]
    return float(np.partition(values, k - 1)[k - 1])


def set_per_row(flags: BoolArray) -> FloatArray:
    """Per row of a ``(counts, rows)`` grid of flags, how many of its counts are set, as floats (the same whole
    numbers ``np.count_nonzero(flags, axis=0)`` gives: it sums in 64 bits, 0.6 ms over 15 counts of
    96,000 rows; 32 bits, 0.25 ms, hold any grid's counts)."""
    counted: FloatArray = flags.sum(axis=0, dtype=np.int32).astype(np.float64)
    return counted


Side = Literal["left", "right"]

# The largest whole number ``whole_positions`` keeps a table up to (a count of cards is at most 1,024).
_WHOLE_TABLE_MAX = 1 << 16


def whole_positions(ascending: FloatArray, values: FloatArray, side: Side = "left") -> IntArray:
    """``np.searchsorted(ascending, values, side=side)`` where ``values`` are whole numbers or NaN, as a
    row's cards are: read from a table of every whole number up to past the largest of ``ascending``
    (a binary search per value costs several times more at 100,000 rows); searched for anything else."""
    top = float(ascending[-1]) if ascending.size else math.nan
    if not top < _WHOLE_TABLE_MAX:  # NaN too (no ascending values): nothing to read a table of
        return np.searchsorted(ascending, values, side=side)
    past = math.floor(top) + 1.0
    capped = np.fmin(values, past)  # a value past the largest, or NaN (sorted last), finds every one
    if not capped.min(initial=past) >= 0.0:
        return np.searchsorted(ascending, values, side=side)
    whole = capped.astype(np.int64)
    if not np.array_equal(whole, capped):
        return np.searchsorted(ascending, values, side=side)
    table = np.searchsorted(ascending, np.arange(int(past) + 1, dtype=np.float64), side=side)
    positions: IntArray = table.take(whole)
    return positions


def rows_alike(columns: tuple[IntArray | BoolArray, ...]) -> tuple[IntArray, IntArray]:
    """Rows alike in every one of ``columns`` (whole numbers or flags, one per row): each row's group,
    numbered densely, and a row of each group. Folded a column at a time (a ``unique`` over the stacked
    columns sorts them as rows: 250 ms at 96,000 rows): each (group, value) pair a group of its own,
    coded through a table of every pair when that is small, else by a sort of the pairs; a column's
    values coded by their offset when they span few numbers, else by a sort of its distinct values."""
    size = columns[0].size if columns else 0
    group = np.zeros(size, dtype=np.int64)
    groups = 1 if size else 0
    for column in columns:
        if not size or column.min() == column.max():
            continue  # one value splits no group
        value, span = _value_codes(column, size)
        pair = group * span + value
        if groups * span > _ALIKE_TABLE_PER_ROW * size:
            _, inverse = np.unique(pair, return_inverse=True)
            group = inverse.reshape(-1).astype(np.int64)
            groups = int(group.max()) + 1
            continue
        present = np.zeros(groups * span, dtype=np.bool_)
        present[pair] = True
        dense = np.cumsum(present) - 1
        group, groups = dense.take(pair), int(dense[-1]) + 1
    some_row = np.empty(groups, dtype=np.int64)
    some_row[group] = np.arange(size)  # any row of a group stands for it: they are alike
    return group, some_row


def _value_codes(column: IntArray | BoolArray, size: int) -> tuple[IntArray, int]:
    """``column``'s values coded from 0, and how many codes there are."""
    if column.dtype == np.bool_:
        return column.astype(np.int64), 2
    low = int(column.min())
    span = int(column.max()) - low + 1
    if span <= _ALIKE_TABLE_PER_ROW * size:
        return column - low, span
    distinct, inverse = np.unique(column, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64), int(distinct.size)


# ``rows_alike`` codes through a table of up to this many entries per row.
_ALIKE_TABLE_PER_ROW = 4
