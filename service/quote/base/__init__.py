"""The engine's ground floor: array type names, rounding at the edge, the one memo mechanism and the
fast-path switches. Nothing here knows an offer, a request or a quote; every other floor may use it."""

from service.quote.base.arrays import BoolArray, FloatArray, IntArray
from service.quote.base.memo import BoundedMemo, Memos, MemoSlot, memoized
from service.quote.base.money import cents, cents_array, format_cny, number_text, round_cny, round_hours
from service.quote.base.paths import FastPaths

__all__ = [
    "BoolArray",
    "BoundedMemo",
    "FastPaths",
    "FloatArray",
    "IntArray",
    "MemoSlot",
    "Memos",
    "cents",
    "cents_array",
    "format_cny",
    "memoized",
    "number_text",
    "round_cny",
    "round_hours",
]
