"""The plan without the recommendation's risk, found by reading high ends in ranking order (the top
``limit`` first, then a few at a time), is the top of the ranking among every candidate without the risk
(``assemble.extras._first_within``).

Seeded candidates with tied costs and hours, the same offer at several counts, and the candidates
without the risk placed anywhere in the ranking (first, past the first reads, last, nowhere), for every
``rank_by``: the lazy search must name the candidate ``first_among`` names over the whole mask, and read
no candidate's high end twice.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from schemas.quote import RankBy
from service.quote.assemble import extras
from service.quote.base.arrays import BoolArray, IntArray
from service.quote.evaluate.judge import HighWithin
from service.quote.rank import CandidateKeys, first_among, top

_RANKINGS: tuple[RankBy, ...] = ("cost", "time", "value")


def _keys(rng: random.Random, size: int, offers: int) -> CandidateKeys:
    """``size`` candidates over an (8 counts × ``offers``) grid, costs and hours drawn from few values."""
    positions = np.array(sorted(rng.sample(range(8 * offers), size)), dtype=np.int64)
    return CandidateKeys(
        positions=positions,
        cost=np.array([rng.choice((10.0, 12.5, 40.0)) * rng.randint(1, 30) for _ in range(size)]),
        hours=np.array([float(rng.randint(1, 6)) for _ in range(size)]),
        time_value_cny_per_hour=rng.choice((None, 0.0, 25.0)),
        offers=offers,
        id_order=np.array(rng.sample(range(offers), offers), dtype=np.int64),
        cards=np.array([1.0, 2, 4, 8, 16, 32, 64, 128]),
    )


class _Counted(HighWithin):
    """A known mask that records which cells were read."""

    __slots__ = ("reads",)

    def __init__(self, known: BoolArray) -> None:
        super().__init__((), known)
        object.__setattr__(self, "reads", [])  # HighWithin is frozen

    reads: list[int]

    def at(self, cells: IntArray) -> BoolArray:
        self.reads.extend(cells.tolist())
        return super().at(cells)


def _safe_mask(rng: random.Random, keys: CandidateKeys, rank_by: RankBy, where: str) -> BoolArray:
    """Candidates without the risk: a random few, or only those ranked past ``where`` of the order."""
    order = top(keys, rank_by, keys.size, top_k=False)
    safe = np.zeros(keys.size, dtype=np.bool_)
    if where == "random":
        safe[rng.sample(range(keys.size), min(keys.size, rng.randint(1, 5)))] = True
    elif where != "none":
        start = {"first": 0, "past_reads": 17, "deep": keys.size // 2, "last": keys.size - 1}[where]
        chosen = order[start:]
        safe[chosen[rng.sample(range(chosen.size), min(chosen.size, rng.randint(1, 3)))]] = True
    return safe


@pytest.mark.parametrize("rank_by", _RANKINGS)
@pytest.mark.parametrize("where", ["first", "past_reads", "deep", "last", "random", "none"])
def test_the_lazy_search_names_the_top_of_the_ranking_without_the_risk(rank_by: RankBy, where: str) -> None:
    rng = random.Random(f"{rank_by}-{where}")
    for _ in range(40):
        size = rng.choice((1, 5, 40, 300, 2_000))
        keys = _keys(rng, size, offers=max(size, 300))
        safe = _safe_mask(rng, keys, rank_by, where)
        # Candidates on spot capacity are never the safe plan, whatever their high ends.
        on_demand = np.array([rng.random() > 0.2 for _ in range(size)])
        # The top ``limit`` the ranking returns, read first.
        ranked = top(keys, rank_by, rng.choice((1, 3, 10, 20)), top_k=False)
        for top_k in (True, False):
            high_ok = _Counted(safe)
            found = extras._first_within(keys, ranked, on_demand.take, _same, high_ok, rank_by, top_k)
            assert found == first_among(keys, safe & on_demand, rank_by, top_k=False)
            assert len(high_ok.reads) == len(set(high_ok.reads))
            assert set(high_ok.reads) <= set(np.flatnonzero(on_demand).tolist())


def _same(at: IntArray) -> IntArray:
    return at


def test_a_plan_without_the_risk_near_the_top_is_found_reading_few_high_ends() -> None:
    rng = random.Random(5)
    keys = _keys(rng, 2_000, offers=2_000)
    order = top(keys, "cost", keys.size, top_k=False)
    every = np.ones(keys.size, dtype=np.bool_)
    for place, reads in ((3, 10), (12, 10 + 16), (100, 10 + 16 + 64 + 256)):
        safe = np.zeros(keys.size, dtype=np.bool_)
        safe[order[place]] = True
        high_ok = _Counted(safe)
        found = extras._first_within(keys, order[:10], every.take, _same, high_ok, "cost", True)
        assert found == order[place]
        assert len(high_ok.reads) == reads
