"""The per-row searches a new memory need or a new layout costs, each against the plain search it replaces.

- ``row_judge._Keys.below``: a row's cells below a count, read from the kept table of the first counts,
  searched past them;
- ``base.arrays.whole_positions``: the counts below each row's fewest cards (or at its replicas' cards),
  read from a table of whole numbers of cards, searched for anything else (fractions, below zero);
- ``base.arrays.set_per_row``: each row's flags set over its counts, summed in 32 bits;
- ``layout._by_row``: where each row's cells start, counted rather than searched;
- ``Layout.plan_cells``: the combined plans' cells with their products, marked rather than sorted.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from service.quote import FastPaths, QuoteOptions
from service.quote.base.arrays import Side, set_per_row, whole_positions
from service.quote.evaluate import layout, row_judge
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import answers, catalog, requests
from tests.quote.test_placed_pruning import _independent


def _drawn_keys(rng: np.random.Generator, rows: int, counts: int) -> np.ndarray:
    """Sorted keys ``row × counts + count``, each row holding a random subset of the counts (some none)."""
    held = rng.random((rows, counts)) < rng.choice((0.05, 0.4, 0.9), size=(rows, 1))
    row, count = np.nonzero(held)
    keys: np.ndarray = row * counts + count
    return keys


def _firsts_of_keys(keys: np.ndarray, rows: int, counts: int) -> np.ndarray:
    """``_Keys.firsts`` worked out from the keys alone, key by key."""
    first = min(row_judge._FIRST_COUNTS, counts)
    row, count = np.divmod(keys, counts)
    early = count < first
    tally = np.bincount(count[early] * rows + row[early], minlength=first * rows).reshape(first, rows)
    return np.cumsum(tally, axis=0).astype(np.uint8)


@pytest.mark.parametrize("counts", [3, 16, 17, 40, 136])
def test_cells_below_a_count_are_those_a_search_finds(counts: int) -> None:
    """Every row's cells below its count, for counts within the kept table, past it, and mixed."""
    rng = np.random.default_rng(counts)
    rows = 400
    keys = _drawn_keys(rng, rows, counts)
    kept = row_judge._Keys.of(keys, rows, counts, _firsts_of_keys(keys, rows, counts))
    for highest in (min(counts, 16), counts):
        searched = np.flatnonzero(rng.random(rows) < 0.7)
        below = rng.integers(1, highest + 1, size=searched.size)
        found = kept.below(searched, searched * counts, below)
        expected = np.zeros(rows)
        for row, count in zip(searched.tolist(), below.tolist(), strict=True):
            expected[row] = np.count_nonzero((keys >= row * counts) & (keys < row * counts + count))
        assert np.array_equal(found, expected)


@pytest.mark.parametrize(
    "ascending",
    [
        [1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0, 24.0, 32.0],
        [2.0, 2.5, 7.25],  # not whole numbers: the table still answers whole values
        [1.0],
        [],
        [1.0, 1e9],  # too large for a table: searched
    ],
)
@pytest.mark.parametrize("side", ["left", "right"])
def test_positions_of_whole_numbers_are_a_searchs(ascending: list[float], side: Side) -> None:
    """Whole numbers (past the largest too, infinite, NaN) from the table; fractions and negative numbers
    searched: every answer ``np.searchsorted``'s, from either side."""
    cards = np.array(ascending)
    whole = np.array([1.0, 2.0, 5.0, 7.0, 8.0, 9.0, 32.0, 33.0, 500.0, np.inf, 0.0])
    for values in (
        whole,
        np.append(whole, np.nan),
        np.append(whole, 2.5),
        np.append(whole, -1.0),
        np.append(whole, -np.inf),
        np.ones(50),
        np.full(3, np.nan),
        np.empty(0),
    ):
        found = whole_positions(cards, values, side=side)
        assert np.array_equal(found, np.searchsorted(cards, values, side=side))
        assert found.dtype == np.intp


def test_flags_set_per_row_are_what_count_nonzero_counts() -> None:
    rng = np.random.default_rng(8)
    for counts, rows, share in ((1, 5, 0.5), (15, 3_000, 0.3), (300, 40, 0.9), (4, 0, 0.5), (0, 6, 0.5)):
        flags = rng.random((counts, rows)) < share
        for grid in (flags, flags[:, : rows // 2], np.asfortranarray(flags)):
            found = set_per_row(grid)
            assert found.dtype == np.float64
            assert np.array_equal(found, np.count_nonzero(grid, axis=0).astype(np.float64))


def test_each_rows_cells_start_where_a_search_finds_them() -> None:
    rng = np.random.default_rng(5)
    for rows in (1, 7, 300):
        cell_offer = rng.integers(0, rows, size=rng.integers(0, 2_000))
        cell_offer[: cell_offer.size // 3] = 0  # a row with many cells, and rows with none
        order, starts = layout._by_row(cell_offer, rows + 3)
        assert np.array_equal(order, np.argsort(cell_offer, kind="stable"))
        assert np.array_equal(starts, np.searchsorted(cell_offer[order], np.arange(rows + 4)))
        assert starts.dtype == np.intp


def _plan_cells_sorted(built: layout.Layout, offer_count: int) -> np.ndarray:
    """What ``plan_cells`` held before: the plans' rows' cells and their products', sorted together."""
    assert built.plans is not None
    in_plan_rows = np.flatnonzero(built.cell_offer >= offer_count)
    return np.union1d(in_plan_rows, built.plans.parts_at.ravel()).astype(np.int64)


def test_the_plans_cells_are_those_sorted_together(monkeypatch: pytest.MonkeyPatch) -> None:
    """At every layout seeded requests price plans on (batch, limits, sweeps pruned on their grid, a
    catalog with packages), pruned on every table."""
    snapshot = catalog(71, 500, clusters=12, packaged_vendors=8)
    tables = snapshot.tables
    assert tables.plans
    compared: list[int] = []
    real = layout.Layout._plan_cells

    def compared_with_sorting(self: layout.Layout, tables_: Any) -> Any:
        found = real(self, tables_)
        assert np.array_equal(found, _plan_cells_sorted(self, tables_.offer_count))
        assert found.dtype == np.int64
        compared.append(found.size)
        return found

    monkeypatch.setattr(layout.Layout, "_plan_cells", compared_with_sorting)
    options = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))
    answers(snapshot, [*requests(72, 80, snapshot), *_independent(73, snapshot, 30)], options)
    assert len(compared) >= 10 and min(compared) > 0


def test_the_first_counts_table_is_the_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each layout's table of the first counts, read off its dense counts and the cells past them,
    holds what its requested (and supplied) cells' keys say: over seeded requests, with layouts billed
    sparse from their second count on (as at market scale), and whole."""
    snapshot = catalog(74, 600, clusters=16, packaged_vendors=6)
    checked: list[tuple[int, bool]] = []
    real = row_judge._requested_cells

    def compared(built: layout.Layout, tables_: Any) -> Any:
        found = real(built, tables_)
        counts = len(built.counts)
        for kept in (found.requested, found.supplied):
            keys = kept.keys.astype(np.int64)
            assert np.array_equal(kept.firsts, _firsts_of_keys(keys, tables_.offer_count, counts))
        past_dense = (
            int(np.searchsorted(built.cells, min(16, counts) * tables_.size)) > built.dense * tables_.size
        )
        checked.append((built.dense, past_dense))
        return found

    monkeypatch.setattr(row_judge, "_requested_cells", compared)
    options = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))
    for dense_cells in (0, 10**9):
        monkeypatch.setattr(layout, "_DENSE_CELLS", dense_cells)
        answers(snapshot, list(requests(75 + dense_cells % 7, 120, snapshot)), options)
    assert any(past for _, past in checked) and any(not past for _, past in checked)
