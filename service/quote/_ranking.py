"""Ranking qualifying candidates, and picking the cheapest, fastest and recommended ones.

Orders are lexicographic and total, so equal quotes always come out in the same order:

- ``cost``: expected cost, then expected hours, then offer id, then cards;
- ``time``: expected hours, then expected cost, then offer id, then cards;
- ``value``: cost + time value × expected hours, then expected cost, then offer id, then cards.

``recommended`` is the best value when the caller gave a time value, else the cheapest.

Only the top ``k`` are sorted: the primary key is partitioned first (all ties with the k-th value kept),
so ranking costs little more than one pass over the candidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from schemas.quote import RankBy

__all__ = ["CandidateKeys", "Picks", "best", "pick", "rank_of", "top"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class CandidateKeys:
    """Sort keys of the qualifying candidates, aligned with each other."""

    cost: FloatArray
    hours: FloatArray
    id_order: IntArray
    cards: FloatArray
    time_value_cny_per_hour: float | None

    def value(self) -> FloatArray:
        if self.time_value_cny_per_hour is None:
            return self.cost
        result: FloatArray = self.cost + self.time_value_cny_per_hour * self.hours
        return result

    def order_keys(self, rank_by: RankBy) -> tuple[npt.NDArray[np.generic], ...]:
        """Keys, most significant first."""
        if rank_by == "time":
            return (self.hours, self.cost, self.id_order, self.cards)
        if rank_by == "value":
            return (self.value(), self.cost, self.id_order, self.cards)
        return (self.cost, self.hours, self.id_order, self.cards)


def top(keys: Sequence[npt.NDArray[np.generic]], k: int) -> IntArray:
    """Positions of the ``k`` first candidates in key order."""
    primary = keys[0]
    if primary.size > k:
        kth_value = np.partition(primary, k - 1)[k - 1]
        pool = np.flatnonzero(primary <= kth_value)
    else:
        pool = np.arange(primary.size)
    # lexsort sorts by its last key first.
    order = np.lexsort(tuple(key[pool] for key in reversed(keys)))
    chosen: IntArray = pool[order][:k]
    return chosen


def best(keys: Sequence[npt.NDArray[np.generic]]) -> int:
    """Position of the first candidate in key order (``top(keys, 1)`` without a partition)."""
    primary = keys[0]
    pool = np.flatnonzero(primary == primary.min())
    if pool.size == 1:
        return int(pool[0])
    return int(pool[np.lexsort(tuple(key[pool] for key in reversed(keys)))[0]])


def rank_of(keys: Sequence[npt.NDArray[np.generic]], position: int) -> int:
    """1-based rank of one candidate in key order, without sorting them all: those before it on the
    first key, then those tied with it there that come before it on the next keys (few: compared as
    tuples, in Python, cheaper than an array pass per key)."""
    primary = keys[0]
    before = int(np.count_nonzero(primary < primary[position]))
    tied = np.flatnonzero(primary == primary[position])
    if tied.size > 1:
        rest = [key[tied].tolist() for key in keys[1:]]
        own = tuple(key.item(position) for key in keys[1:])
        before += sum(1 for values in zip(*rest, strict=True) if values < own)
    return before + 1


@dataclass(frozen=True, slots=True)
class Picks:
    ranks: dict[int, int]  # position → rank: the top ``limit``, then any highlighted one below them
    cheapest: int
    fastest: int
    recommended: int


def pick(keys: CandidateKeys, rank_by: RankBy, limit: int) -> Picks:
    """The top ``limit`` by ``rank_by`` plus the highlighted candidates (positions into ``keys``)."""
    order_keys = keys.order_keys(rank_by)
    ranked = tuple(int(position) for position in top(order_keys, limit))

    def first_by(order: RankBy) -> int:
        return ranked[0] if order == rank_by else best(keys.order_keys(order))

    # The recommendation is the top of the ranking the caller asked for, whatever the other highlights.
    cheapest, fastest, recommended = first_by("cost"), first_by("time"), ranked[0]
    ranks = {position: rank for rank, position in enumerate(ranked, start=1)}
    for extra in (cheapest, fastest, recommended):
        if extra not in ranks:
            ranks[extra] = rank_of(order_keys, extra)
    return Picks(ranks=ranks, cheapest=cheapest, fastest=fastest, recommended=recommended)
