"""The array types the engine's modules annotate with: one name per element type."""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["ArrayT", "BoolArray", "FloatArray", "IntArray", "frozen"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
ArrayT = TypeVar("ArrayT", bound="np.ndarray[Any, Any]")


def frozen(array: ArrayT) -> ArrayT:
    """``array`` made read-only (what a snapshot or a cache shares must not be written), and returned."""
    array.flags.writeable = False
    return array
