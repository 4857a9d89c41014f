"""The array types the engine's modules annotate with: one name per element type."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["ArrayT", "BoolArray", "FloatArray", "IntArray", "frozen", "unique_sorted"]

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
