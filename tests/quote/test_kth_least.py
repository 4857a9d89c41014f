"""The k-th least of many values, read off a sample's bound (``service.quote.base.arrays.kth_least``)."""

from __future__ import annotations

import numpy as np
import pytest

from service.quote.base.arrays import kth_least, rows_alike


@pytest.mark.parametrize("size", [50, 16_385, 120_000, 600_000])
def test_the_kth_least_key_is_the_full_partitions(size: int) -> None:
    """``kth_least`` partitions a large array's values only up to a bound read off a sample: the k-th
    least is still the one a partition of every value finds, with ties, NaN (last), the least values at
    one end or exactly where the sample looks, and fewer numbers than ``k``; for the few a ranking takes
    and the many a search for the plan free of risk reads."""
    rng = np.random.default_rng(size)
    for trial in range(60):
        keys = np.round(rng.random(size) * rng.choice([10.0, 1e3, 1e6]), int(rng.integers(0, 3)))
        if trial % 4 == 1:
            keys[rng.integers(0, size, size=size // 2)] = np.nan
        if trial % 4 == 2:
            keys = np.sort(keys)[::-1].copy()  # the least keys where a sample never looks first
        if trial % 10 == 3:
            keys[:] = np.nan
            keys[rng.integers(0, size, size=3)] = 1.0
        if trial % 10 == 7:  # the least keys exactly where the sample looks, the others far past them
            keys[:] = 1e9
            sampled = keys[:: max(1, size // 1_024)]
            sampled[:] = rng.random(sampled.size)
        k = (
            int(rng.integers(1, min(size, 100) + 1))
            if trial % 3
            else int(rng.integers(1, min(size, 5_000) + 1))
        )
        expected = np.partition(keys, k - 1)[k - 1]
        found = kth_least(keys, k)
        assert (np.isnan(expected) and np.isnan(found)) or found == expected, (trial, k)


def test_rows_alike_are_those_equal_in_every_column() -> None:
    """``arrays.rows_alike``: rows in one group exactly when every column holds the same number, groups
    numbered densely, a row of each; small columns, a column of huge and negative numbers, none."""
    rng = np.random.default_rng(11)
    size = 5_000
    # Few values, huge and negative ones, one value, flags, and two columns of many distinct values
    # each (their pairs too many for a table).
    columns = (
        rng.integers(1, 9, size),
        rng.choice(np.array([-(2**62), 0, 7, 2**62]), size),
        np.full(size, 3),
        rng.random(size) < 0.5,
        rng.integers(0, 600, size),
        rng.integers(-(2**40), 2**40, size) // 2**31,
    )
    group, some_row = rows_alike(columns)
    keys = list(zip(*(column.tolist() for column in columns), strict=True))
    assert sorted(set(group.tolist())) == list(range(some_row.size))
    by_key = {key: group[at] for at, key in enumerate(keys)}
    assert len(by_key) == some_row.size  # one group per distinct row, and alike rows in one group
    assert all(group[at] == by_key[key] for at, key in enumerate(keys))
    assert all(group[row] == at for at, row in enumerate(some_row.tolist()))
    assert [array.size for array in rows_alike(tuple(column[:0] for column in columns))] == [0, 0]
