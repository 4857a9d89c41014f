"""A serving job's candidates without ``card_counts``, set row by row, are the ones the rule reads over the
whole grid.

Each hosting row is quoted at exactly its ``replicas × cards per replica`` (one count per row, the
replicas one number or one per row for a throughput target); ``serving_candidates`` sets those cells row
by row instead of testing every (count, row) cell. The reference here tests every cell.
"""

from __future__ import annotations

import numpy as np
import pytest

from schemas.quote import MAX_CARDS
from service.quote.base.arrays import BoolArray, FloatArray
from service.quote.jobs.serving import _power_of_two_at_least, _whole, serving_candidates, serving_layout
from service.quote.model.tables import OfferTables
from tests.quote.seeded import catalog


def _reference(
    tables: OfferTables, fewest: FloatArray, replicas: int | FloatArray, matching: BoolArray
) -> tuple[tuple[int, ...], BoolArray]:
    layout = serving_layout(tables, fewest)
    least = replicas * layout.replica_cards
    servable = matching & layout.hosts & np.isfinite(least) & (least <= MAX_CARDS)
    counts = tuple(sorted({1, *(int(cards) for cards in least[servable].tolist())}))
    cards = np.array(counts, dtype=np.float64)[:, None]
    requested = (cards % layout.replica_cards == 0) & (cards == least) & layout.hosts
    return counts, requested


@pytest.mark.parametrize("seed", [3, 11, 21])
def test_candidates_are_the_whole_grid_ones(seed: int) -> None:
    tables = catalog(seed, 300, clusters=20).tables
    rng = np.random.default_rng(seed)
    for trial in range(40):
        fewest = rng.choice([1.0, 1.0, 2.0, 3.0, 5.0, 9.0, 17.0, np.inf], size=tables.size)
        matching = rng.random(tables.size) < 0.7
        replicas: int | FloatArray
        if trial % 4 == 3:
            # Replicas that are not whole numbers (no throughput target gives them): 1.5 replicas of 2
            # cards are 3 cards, a count, yet no whole replica count.
            replicas = rng.choice([1.0, 1.5, 2.0, 2.5, 3.0, 4.5, np.nan], size=tables.size)
        elif trial % 2:
            # A throughput target: replicas per row, some past any count, some unservable (NaN, inf).
            replicas = rng.choice([0.0, 1.0, 2.0, 3.0, 7.0, 40.0, 600.0, np.nan, np.inf], size=tables.size)
        else:
            replicas = int(rng.integers(1, 9))
        with np.errstate(invalid="ignore"):  # 0 replicas of a model no card holds: NaN cards, no count
            inputs = serving_candidates(tables, fewest, replicas, None, matching)
            counts, requested = _reference(tables, fewest, replicas, matching)
        assert inputs.counts == counts
        assert inputs.requested.shape == requested.shape
        assert np.array_equal(inputs.requested, requested)
        assert requested.any()  # the comparison reads quoted cells, not an empty grid


def test_a_layout_is_kept_for_a_read_only_minimum_alone() -> None:
    """The layout kept for a read-only memory minimum is the one worked out anew, is read-only, and is
    never handed to another array with the same figures or to a writeable one (which may change)."""
    tables = catalog(7, 120, clusters=10).tables
    fewest = np.random.default_rng(7).choice([1.0, 2.0, 3.0, 9.0], size=tables.size)
    fewest.flags.writeable = False
    kept = serving_layout(tables, fewest)
    assert serving_layout(tables, fewest) is kept
    writeable = fewest.copy()
    fresh = serving_layout(tables, writeable)
    assert fresh is not kept and serving_layout(tables, writeable) is not fresh
    for name in ("replica_cards", "hosts", "within_machine"):
        assert np.array_equal(getattr(kept, name), getattr(fresh, name))
        assert not getattr(kept, name).flags.writeable
    writeable[:] = 1.0
    assert np.array_equal(serving_layout(tables, writeable).replica_cards, np.ones(tables.size))
    other = fewest.copy()
    other.flags.writeable = False
    assert serving_layout(tables, other) is not kept


def test_a_layout_says_whether_its_replicas_take_whole_cards() -> None:
    """``whole_cards`` lets the candidates skip the division by a replica's cards: it holds for the
    tables' whole machines, and a fraction anywhere clears it (an infinite minimum is no fraction)."""
    tables = catalog(5, 120, clusters=10).tables
    fewest = np.random.default_rng(5).choice([1.0, 3.0, 9.0, 17.0, np.inf], size=tables.size)
    layout = serving_layout(tables, fewest)
    finite = np.isfinite(layout.replica_cards)
    assert layout.whole_cards and not finite.all()
    assert np.array_equal(layout.replica_cards[finite], np.floor(layout.replica_cards[finite]))
    assert _whole(np.array([1.0, 2.0, np.inf, np.nan, 0.0, 1024.0]))
    assert not _whole(np.array([1.0, 2.5, 4.0]))
    assert not _whole(np.array([np.nextafter(2.0, 3.0)]))


def test_a_replicas_power_of_two_is_the_formulas_whether_read_off_the_table_or_worked_out() -> None:
    """Each row's cards per replica within a machine, ``2 ** ceil(log2(max(minimum, 1)))``, read off a
    table when every minimum is a whole count up to ``MAX_CARDS``: the same floats as the formula, for
    every whole count and for minimums the table cannot answer (infinite, NaN, fractions, past it)."""
    rng = np.random.default_rng(5)

    def formula(cards: FloatArray) -> FloatArray:
        powers: FloatArray = 2.0 ** np.ceil(np.log2(np.maximum(cards, 1.0)))
        return powers

    every = np.arange(MAX_CARDS + 1, dtype=np.float64)
    arrays = [every, every[::-1].copy(), rng.choice(every, 5_000), np.array([-0.0, 0.0, 1.0])]
    for odd in (np.inf, np.nan, 2.5, 1.0 + 2**-40, MAX_CARDS + 1.0, 4096.0, -3.0):
        arrays.append(np.append(rng.choice(every, 300), odd))
    arrays.append(np.empty(0))
    for cards in arrays:
        with np.errstate(invalid="ignore"):
            assert np.array_equal(_power_of_two_at_least(cards), formula(cards), equal_nan=True)
    assert _power_of_two_at_least(np.array([0.0, 3.0, 1024.0])).tolist() == [1.0, 4.0, 1024.0]
