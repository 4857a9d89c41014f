"""The fewest cards that hold a model on each row: one figure per GPU memory size the tables hold.

A row's fewest cards follow from its GPU's memory alone, so they are worked out per memory size
(``FewestKey``, ascending sizes) and read per row. Memory needs that give every size the same figures (a
30 GB and a 34 GB model on cards of 24, 48 and 80 GB) share one array of them, and what is kept per
memory need further on (the judgement's counts, the bounds' terms) is kept by these figures, not by the
need. What a request reads of them per row that follows from the figure alone (where it falls among a
layout's counts) is worked out per size too.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import NamedTuple

import numpy as np

from service.quote.base.arrays import FloatArray, IntArray, frozen, whole_positions
from service.quote.base.memo import MemoSlot
from service.quote.model.memory import min_cards
from service.quote.model.tables import OfferTables

__all__ = ["FewestKey", "fewest_cards", "fewest_positions"]


class FewestKey(NamedTuple):
    """The fewest cards that hold a model on each of the tables' GPU memory sizes, ascending."""

    per_size: tuple[float, ...]


def fewest_cards(tables: OfferTables, memory_needed_gb: float | None) -> tuple[FewestKey, FloatArray]:
    """``(rows,)``: the fewest cards that hold the model on each row (1 without a memory need), and their
    ``FewestKey``; the array is one for every need of that key."""
    sizes, size_of = _memory_sizes(tables)
    per_size = np.ones(sizes.size) if memory_needed_gb is None else min_cards(memory_needed_gb, sizes)
    key = FewestKey(tuple(per_size.tolist()))
    return key, _FEWEST_CARDS.of(tables.memos).get(key, lambda: frozen(per_size.take(size_of)))


def fewest_positions(
    tables: OfferTables, ascending: FloatArray, fewest: tuple[Hashable, FloatArray]
) -> IntArray:
    """Per row, where its fewest cards fall among ``ascending`` counts (``whole_positions``): read per
    memory size where ``fewest`` is ``fewest_cards``' (a key and its array), else row by row; the same
    positions either way (14 times faster at 96,000 rows)."""
    key, cards = fewest
    if not isinstance(key, FewestKey):
        return whole_positions(ascending, cards)
    _, size_of = _memory_sizes(tables)
    positions: IntArray = whole_positions(ascending, np.array(key.per_size)).take(size_of)
    return positions


def _memory_sizes(tables: OfferTables) -> tuple[FloatArray, IntArray]:
    """The tables' GPU memory sizes (ascending, once each), and each row's position among them."""
    return _MEMORY_SIZES.of(tables.memos).get(0, lambda: _sizes(tables))


def _sizes(tables: OfferTables) -> tuple[FloatArray, IntArray]:
    sizes, size_of = np.unique(tables.gpu_memory_gb, return_inverse=True)
    return frozen(sizes), frozen(size_of.reshape(-1).astype(np.int64))


# Per table, its GPU memory sizes (ascending, once each) and each row's.
_MEMORY_SIZES: MemoSlot[int, tuple[FloatArray, IntArray]] = MemoSlot("memory sizes", size=1)
# Each memory need's fewest cards per row, one read-only array for every request of that model size (what
# a serving job's layout is kept by: ``jobs.serving.serving_layout``): the last few needs, enough for a
# request and its quantized alternatives (an array is 0.8 MB at 100,000 rows).
_FEWEST_CARDS: MemoSlot[FewestKey, FloatArray] = MemoSlot("fewest cards", size=8)
