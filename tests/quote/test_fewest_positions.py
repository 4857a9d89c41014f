"""The fewest cards that hold a model, placed among a layout's counts per GPU memory size.

``evaluate.fewest.fewest_positions`` reads each row's position from its memory size's when the fewest
cards are ``fewest_cards``' (their key names each size's figure), and searches row by row otherwise. Over
seeded catalogs, every memory need from none to past every card and the counts of real layouts, both give
every row's ``whole_positions`` exactly; a key that is not ``fewest_cards``' is searched row by row.
"""

from __future__ import annotations

import numpy as np
import pytest

from service.quote.base.arrays import whole_positions
from service.quote.evaluate.fewest import FewestKey, fewest_cards, fewest_positions
from tests.quote.seeded import catalog

_NEEDS_GB = (None, 0.5, 7.9, 16.0, 24.0, 31.5, 80.0, 81.0, 150.0, 640.0, 1_400.0, 12_000.0)


@pytest.mark.parametrize(("seed", "offers", "clusters"), [(41, 300, 20), (42, 900, 60)])
def test_positions_per_memory_size_are_each_rows_own(seed: int, offers: int, clusters: int) -> None:
    tables = catalog(seed, offers, clusters=clusters).tables
    rng = np.random.default_rng(seed)
    ladders = [
        np.array([1.0, 2.0, 4.0, 8.0]),
        np.arange(1.0, 137.0),
        np.unique(rng.integers(1, 2_048, 40)).astype(np.float64),
        np.array([3.0, 5.0, 24.0, 1_000.0]),
    ]
    compared = past_every = 0
    for need in _NEEDS_GB:
        key, cards = fewest_cards(tables, need)
        assert isinstance(key, FewestKey) and cards.shape == (tables.size,)
        for ascending in ladders:
            want = whole_positions(ascending, cards)
            assert np.array_equal(fewest_positions(tables, ascending, (key, cards)), want)
            assert np.array_equal(fewest_positions(tables, ascending, (tuple(key.per_size), cards)), want)
            past_every += int((want == ascending.size).any())
            compared += 1
    assert compared == len(_NEEDS_GB) * 4 and past_every > 0


def test_a_key_not_made_by_fewest_cards_is_searched_row_by_row() -> None:
    """An array paired with any other key (a caller's own per-row figures) is never read per size, not
    even under a plain tuple of a need's figures per size."""
    tables = catalog(43, 240).tables
    key, cards = fewest_cards(tables, 80.0)
    own = np.random.default_rng(7).integers(1, 9, tables.size).astype(np.float64)
    ascending = np.array([1.0, 2.0, 3.0, 4.0, 8.0])
    for other in ("own", tuple(key.per_size)):
        assert np.array_equal(
            fewest_positions(tables, ascending, (other, own)), whole_positions(ascending, own)
        )
    assert not np.array_equal(whole_positions(ascending, own), whole_positions(ascending, cards))
