"""The first candidate of a ranking, found by narrowing to each key's least in turn, is the first of the
whole sort (``rank.first`` against ``rank.top`` with every candidate sorted).

Seeded candidates drawn from few values, so that the primary key ties many of them (a serving job's
candidates all share their hours), some with NaN figures, the same offer at several counts, for every
``rank_by`` and with and without a time value.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from schemas.quote import RankBy
from service.quote.base.arrays import BoolArray, IntArray
from service.quote.rank import CandidateKeys, first, first_among, top

_RANKINGS: tuple[RankBy, ...] = ("cost", "time", "value")


def _keys(rng: random.Random, size: int, offers: int, nan_in: str | None) -> CandidateKeys:
    """Candidates over an (8 counts × ``offers``) grid; ``nan_in``: "cost" or "hours" holds some NaN."""
    positions = np.array(sorted(rng.sample(range(8 * offers), size)), dtype=np.int64)
    costs = (5.0, 5.0, 7.5, 9.0) + ((float("nan"),) if nan_in == "cost" else ())
    hours = (3.0, 3.0, 3.0, 4.0) + ((float("nan"),) if nan_in == "hours" else ())
    return CandidateKeys(
        positions=positions,
        cost=np.array([rng.choice(costs) for _ in range(size)]),
        hours=np.array([rng.choice(hours) for _ in range(size)]),
        time_value_cny_per_hour=rng.choice((None, 0.0, 25.0)),
        offers=offers,
        id_order=np.array(rng.sample(range(offers), offers), dtype=np.int64),
        cards=np.array([1.0, 2, 4, 8, 16, 32, 64, 128]),
    )


@pytest.mark.parametrize("seed", range(6))
def test_first_is_the_first_of_the_whole_sort(seed: int) -> None:
    rng = random.Random(seed)
    checked = 0
    for trial in range(300):
        offers = rng.randint(1, 40)
        nan_in = (None, "cost", "hours")[trial % 3]
        keys = _keys(rng, rng.randint(1, 8 * offers), offers, nan_in)
        # NaN only past the primary key: the primary's least is taken as a number.
        rankings = {None: _RANKINGS, "cost": ("time",), "hours": ("cost",)}[nan_in]
        for rank_by in rankings:
            assert first(keys, rank_by) == int(top(keys, rank_by, 1, top_k=False)[0])
            checked += 1
    assert checked == 500


@pytest.mark.parametrize("seed", range(4))
def test_first_among_the_marked_is_the_first_of_their_sort(seed: int) -> None:
    """``first_among`` reads the least key among the marked candidates off every candidate's keys (the
    others held at +inf); it must name what sorting the marked ones alone names, for masks that mark
    none, one, some (ties among them and with unmarked ones) or all, the first of the primary key left
    out, and candidates whose primary key is +inf."""
    rng = random.Random(seed)
    generator = np.random.default_rng(seed)
    checked = 0
    for trial in range(200):
        offers = rng.randint(1, 40)
        nan_in = (None, "cost", "hours")[trial % 3]
        keys = _keys(rng, rng.randint(1, 8 * offers), offers, nan_in)
        if trial % 5 == 0:
            keys = dataclasses.replace(keys, cost=np.where(keys.cost > 7, np.inf, keys.cost))
        rankings = {None: _RANKINGS, "cost": ("time",), "hours": ("cost",)}[nan_in]
        for rank_by in rankings:
            for mask in _masks(generator, keys, rank_by):
                expected = first_among(keys, mask, rank_by, top_k=False)
                assert first_among(keys, mask, rank_by) == expected
                checked += 1
    assert checked > 2_000


def _masks(generator: np.random.Generator, keys: CandidateKeys, rank_by: RankBy) -> list[BoolArray]:
    size = keys.size
    single = np.zeros(size, dtype=np.bool_)
    single[generator.integers(size)] = True
    past_first = np.ones(size, dtype=np.bool_)
    past_first[first(keys, rank_by)] = False
    return [
        np.zeros(size, dtype=np.bool_),
        single,
        generator.random(size) < 0.5,
        generator.random(size) < 0.1,
        past_first,
        np.ones(size, dtype=np.bool_),
    ]


def _ranking_keys(keys: CandidateKeys, rank_by: RankBy, at: IntArray) -> tuple[np.ndarray, ...]:
    """The keys a ranking sorts by, most significant first, written out apart from ``CandidateKeys``: its
    own (hours, value, or cost), then cost (hours when ranked by cost), the offer's id order, the cards."""
    columns, offers = np.divmod(keys.positions[at], keys.offers)
    tie_breakers = (keys.id_order[offers], keys.cards[columns])
    cost, hours = keys.cost[at], keys.hours[at]
    if rank_by == "time":
        return (hours, cost, *tie_breakers)
    if rank_by == "value" and keys.time_value_cny_per_hour is not None:
        return (cost + keys.time_value_cny_per_hour * hours, cost, *tie_breakers)
    return (cost, hours if rank_by == "cost" else cost, *tie_breakers)


@pytest.mark.parametrize("seed", range(3))
def test_each_key_read_alone_is_the_sorts_own(seed: int) -> None:
    """``key_at`` reads one key at some candidates, and ``keys_at`` gathers them all for the sort: the
    keys each ranking sorts by (``_ranking_keys``)."""
    rng = random.Random(seed)
    for trial in range(100):
        offers = rng.randint(1, 40)
        keys = _keys(rng, rng.randint(1, 8 * offers), offers, (None, "cost", "hours")[trial % 3])
        at = np.array(sorted(rng.sample(range(keys.size), rng.randint(1, keys.size))), dtype=np.int64)
        for rank_by in _RANKINGS:
            every = _ranking_keys(keys, rank_by, at)
            assert len(keys.keys_at(rank_by, at)) == len(every)
            for key, (values, gathered) in enumerate(zip(every, keys.keys_at(rank_by, at), strict=True)):
                assert np.array_equal(gathered, values, equal_nan=values.dtype.kind == "f")
                alone = keys.key_at(rank_by, key, at)
                assert alone.dtype == values.dtype
                assert np.array_equal(alone, values, equal_nan=values.dtype.kind == "f")
