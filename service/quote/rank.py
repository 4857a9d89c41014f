"""Ranking qualifying candidates, and picking the cheapest, fastest and recommended ones.

Orders are lexicographic and total, so equal quotes always come out in the same order:

- ``cost``: expected cost, then expected hours, then offer id, then cards;
- ``time``: expected hours, then expected cost, then offer id, then cards;
- ``value``: cost + time value × expected hours, then expected cost, then offer id, then cards.

``recommended`` is the top of the ranking the caller asked for. The cheapest and the fastest, when below
the top ``limit``, are returned with rank 0: their place among every candidate is not counted.

Only the top ``k`` are sorted: the primary key is partitioned first (all ties with the k-th value kept),
so ranking costs little more than one pass over the candidates. Only the first keys are gathered for
every candidate; the tie-breakers (offer id, cards) are looked up for the few a ranking compares on them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from schemas.quote import RankBy
from service.quote.base.arrays import BoolArray, FloatArray, IntArray, kth_least

__all__ = ["CandidateKeys", "Picks", "first", "first_among", "pick", "top"]

_KEYS = 4  # every ranking's keys, most significant first (``CandidateKeys.keys_at``)


@dataclass(frozen=True, slots=True)
class CandidateKeys:
    """Sort keys of the candidates at ``positions`` of a (counts × offers) grid, aligned with them."""

    positions: IntArray
    cost: FloatArray
    hours: FloatArray
    time_value_cny_per_hour: float | None
    offers: int  # the grid's row length
    id_order: IntArray  # by offer
    cards: FloatArray  # by count column
    # Where each candidate is among the billed cells its keys were read from (``of_cells``); None for
    # keys made otherwise
    cell_index: IntArray | None = None

    @classmethod
    def of_cells(
        cls,
        chosen: BoolArray,
        cells: IntArray,
        cost: FloatArray,
        hours: FloatArray,
        *,
        offers: int,
        id_order: IntArray,
        cards: FloatArray,
        time_value_cny_per_hour: float | None,
    ) -> CandidateKeys:
        """The keys of the ``chosen`` of some cells (at flat (counts × ``offers``) positions ``cells``,
        with expected ``cost`` and ``hours``, all aligned)."""
        at = np.flatnonzero(chosen)
        return cls(
            positions=cells[at],
            cost=cost[at],
            hours=hours[at],
            time_value_cny_per_hour=time_value_cny_per_hour,
            offers=offers,
            id_order=id_order,
            cards=cards,
            cell_index=at,
        )

    def among(self, at: IntArray) -> CandidateKeys:
        """The keys of candidates ``at`` alone, aligned with ``at``."""
        return replace(
            self,
            positions=self.positions[at],
            cost=self.cost[at],
            hours=self.hours[at],
            cell_index=None if self.cell_index is None else self.cell_index[at],
        )

    @property
    def size(self) -> int:
        return int(self.positions.size)

    def cell(self, at: int) -> tuple[int, int]:
        """(count column, offer) of candidate ``at``."""
        column, offer = divmod(int(self.positions[at]), self.offers)
        return column, offer

    def value(self) -> FloatArray:
        """Cost plus the caller's time value of the expected hours (the cost without one): made only
        when a value ranking asks for it."""
        if self.time_value_cny_per_hour is None:
            return self.cost
        result: FloatArray = self.cost + self.time_value_cny_per_hour * self.hours
        return result

    def primary(self, rank_by: RankBy) -> FloatArray:
        """The most significant key, for every candidate."""
        return self.hours if rank_by == "time" else self.value() if rank_by == "value" else self.cost

    def key_at(self, rank_by: RankBy, key: int, at: IntArray) -> npt.NDArray[np.generic]:
        """Key ``key`` (0: the most significant, up to ``_KEYS``) of candidates ``at``: the ranking's
        own, then cost (hours when ranked by cost), then the offer's id order, then the cards."""
        if key == 3:
            cards: FloatArray = self.cards[self.positions[at] // self.offers]
            return cards
        if key == 2:
            id_order: IntArray = self.id_order[self.positions[at] % self.offers]
            return id_order
        if key == 1:
            return self.hours[at] if rank_by == "cost" else self.cost[at]
        if rank_by == "time":
            return self.hours[at]
        if rank_by == "value" and self.time_value_cny_per_hour is not None:
            value: FloatArray = self.cost[at] + self.time_value_cny_per_hour * self.hours[at]
            return value
        return self.cost[at]

    def keys_at(self, rank_by: RankBy, at: IntArray) -> tuple[npt.NDArray[np.generic], ...]:
        """Every key of candidates ``at``, most significant first."""
        return tuple(self.key_at(rank_by, key, at) for key in range(_KEYS))


def _sorted(keys: CandidateKeys, rank_by: RankBy, pool: IntArray) -> IntArray:
    """``pool`` in key order (lexsort sorts by its last key first)."""
    ordered: IntArray = pool[np.lexsort(keys.keys_at(rank_by, pool)[::-1])]
    return ordered


def top(keys: CandidateKeys, rank_by: RankBy, k: int, *, top_k: bool = True) -> IntArray:
    """Positions of the ``k`` first candidates in key order (``top_k`` False: all of them sorted first)."""
    primary = keys.primary(rank_by)
    if top_k and primary.size > k:
        kth_value = kth_least(primary, k)
        pool = np.flatnonzero(primary <= kth_value)
    else:
        pool = np.arange(primary.size)
    return _sorted(keys, rank_by, pool)[:k]


def first(keys: CandidateKeys, rank_by: RankBy, *, top_k: bool = True) -> int:
    """Position of the first candidate in key order (``top(keys, rank_by, 1)`` without a partition)."""
    if not top_k:
        return int(top(keys, rank_by, 1, top_k=False)[0])
    primary = keys.primary(rank_by)
    pool = np.flatnonzero(primary == primary.min())
    if pool.size == 1:
        return int(pool[0])
    return _least_tuple(keys, rank_by, pool)


def _least_tuple(keys: CandidateKeys, rank_by: RankBy, pool: IntArray) -> int:
    """The position among ``pool`` (ascending) whose keys come first (the first of equal ones): what the
    first of a ``lexsort`` of ``keys.keys_at`` is, by narrowing to each key's least in turn rather than
    sorting every tuple, and reading each key at the candidates still tied alone (a serving job's
    candidates all share their hours, so ranking them by time ties them all on the first key)."""
    at = pool
    for key in range(_KEYS):
        if at.size == 1:
            break
        values = keys.key_at(rank_by, key, at)
        if np.isnan(values).all():
            continue  # NaN sorts last and ties with NaN: the next key decides
        at = at[values == np.nanmin(values)]
    return int(at[0])


def first_among(keys: CandidateKeys, among: BoolArray, rank_by: RankBy, *, top_k: bool = True) -> int | None:
    """Position of the first candidate in key order among those ``among`` marks (aligned with ``keys``),
    or None when it marks none: the top of the same ranking, restricted."""
    if not top_k:
        at = np.flatnonzero(among)
        return None if at.size == 0 else int(at[first(keys.among(at), rank_by, top_k=False)])
    # The least primary key among those marked, read where the others hold +inf, rather than the marked
    # candidates' keys gathered first: the ranking's order is total, so its first is the same.
    primary = keys.primary(rank_by)
    least = np.where(among, primary, np.inf).min(initial=np.inf)
    pool = np.flatnonzero((primary == least) & among)
    if pool.size == 0:
        return None
    if pool.size == 1:
        return int(pool[0])
    return _least_tuple(keys, rank_by, pool)


@dataclass(frozen=True, slots=True)
class Picks:
    ranks: dict[
        int, int
    ]  # position → rank: the top ``limit`` in order, then any highlighted one below them (0)
    cheapest: int
    fastest: int
    recommended: int


def pick(keys: CandidateKeys, rank_by: RankBy, limit: int, *, top_k: bool = True) -> Picks:
    """The top ``limit`` by ``rank_by`` plus the highlighted candidates (positions into ``keys``)."""
    ranked = tuple(int(position) for position in top(keys, rank_by, limit, top_k=top_k))

    def first_by(order: RankBy) -> int:
        return ranked[0] if order == rank_by else first(keys, order, top_k=top_k)

    # The recommendation is the top of the ranking the caller asked for, whatever the other highlights.
    cheapest, fastest, recommended = first_by("cost"), first_by("time"), ranked[0]
    ranks = {position: rank for rank, position in enumerate(ranked, start=1)}
    for extra in (cheapest, fastest, recommended):
        # Below the top ``limit``: returned for what it is (rank 0), its place among every candidate
        # not counted (that would take every candidate's figures; ``evaluate.pruning`` bills few).
        ranks.setdefault(extra, 0)
    return Picks(ranks=ranks, cheapest=cheapest, fastest=fastest, recommended=recommended)
