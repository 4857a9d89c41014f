"""The first candidate of a ranking, found by narrowing to each key's least in turn, is the first of the
whole sort (``rank.first`` against ``rank.top`` with every candidate sorted).

Seeded candidates drawn from few values, so that the primary key ties many of them (a serving job's
candidates all share their hours), some with NaN figures, the same offer at several counts, for every
``rank_by`` and with and without a time value.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from schemas.quote import RankBy
from service.quote.rank import CandidateKeys, first, top

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
