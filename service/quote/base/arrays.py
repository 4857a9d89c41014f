"""The array types the engine's modules annotate with: one name per element type."""

from __future__ import annotations

import math
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["ArrayT", "BoolArray", "FloatArray", "IntArray", "frozen", "unique_sorted", "whole_positions"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
ArrayT = TypeVar("ArrayT", bound="np.ndarray[Any, Any]")


def frozen(array: ArrayT) -> ArrayT:
    """``array`` made read-only (what a snapshot or a cache shares must not be written), and returned."""
    array.flags.writeable = False
    return array


def unique_sorted(positions: IntArray) -> IntArray:
    """``positions`` ascending, once each: ``np.unique`` by a stable sort, which merges ascending runs
    (timsort) and costs less than numpy's hash table on the few thousand positions a request holds."""
    ordered = np.sort(positions, kind="stable")
    if ordered.size:
        ordered = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
    return ordered


# The largest whole number ``whole_positions`` keeps a table up to (a count of cards is at most 1,024).
_WHOLE_TABLE_MAX = 1 << 16


def whole_positions(ascending: FloatArray, values: FloatArray) -> IntArray:
    """``np.searchsorted(ascending, values)`` (side "left") where ``values`` are whole numbers or NaN, as a
    row's cards are: read from a table of every whole number up to past the largest of ``ascending``
    (a binary search per value costs several times more at 100,000 rows); searched for anything else."""
    top = float(ascending[-1]) if ascending.size else math.nan
    if not top < _WHOLE_TABLE_MAX:  # NaN too (no ascending values): nothing to read a table of
        return np.searchsorted(ascending, values, side="left")
    past = math.floor(top) + 1.0
    capped = np.fmin(values, past)  # a value past the largest, or NaN (sorted last), finds every one
    if not capped.min(initial=past) >= 0.0:
        return np.searchsorted(ascending, values, side="left")
    whole = capped.astype(np.int64)
    if not np.array_equal(whole, capped):
        return np.searchsorted(ascending, values, side="left")
    table = np.searchsorted(ascending, np.arange(int(past) + 1, dtype=np.float64), side="left")
    positions: IntArray = table.take(whole)
    return positions
