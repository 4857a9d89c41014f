"""Rows grouped by the counts they have cells at, and the fastest speed-ups read per group.

``evaluate.patterns`` groups a layout's rows by their counts; ``evaluate.fastest`` works each row's
largest speed-up and the next one out per pattern and column where that costs less than gathering every
cell's. Over the layouts and speed-up rules seeded requests leave on seeded catalogs (every job kind:
counts sold, deadlines' fewest cards, replicas, runs, with unknown speed-ups where a row has fewer cards
than a run), each row's pattern is exactly its counts, and both ways give the same figures and the same
cells at each row's largest speed-up, ties included.
"""

from __future__ import annotations

import numpy as np
import pytest

from service.quote import FastPaths, QuoteOptions
from service.quote.evaluate import fastest, layout
from service.quote.evaluate.patterns import row_patterns
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import answers, catalog, requests

_OPTIONS = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))


def _counts_by_row(kept: layout.Layout, rows: int) -> list[list[int]]:
    by_row: list[list[int]] = [[] for _ in range(rows)]
    for cell in kept.cells.tolist():
        by_row[cell % rows].append(cell // rows)
    return by_row


def _layouts_seen(seed: int, offers: int, clusters: int) -> tuple[int, list[layout.Layout]]:
    snapshot = catalog(seed, offers, clusters=clusters, packaged_vendors=3)
    seen: dict[int, layout.Layout] = {}
    for request in requests(seed, 120, snapshot):
        answers(snapshot, [request], _OPTIONS)
        for _, kept in layout.kept_layouts(snapshot.tables):
            seen.setdefault(id(kept), kept)
    return snapshot.tables.size, list(seen.values())


@pytest.mark.parametrize(("seed", "offers", "clusters"), [(31, 300, 20), (32, 700, 40)])
def test_each_rows_pattern_is_exactly_its_counts(seed: int, offers: int, clusters: int) -> None:
    rows, layouts = _layouts_seen(seed, offers, clusters)
    assert len(layouts) >= 5
    for kept in layouts:
        patterns = row_patterns(kept, rows)
        own = [
            patterns.counts[patterns.starts[at] : patterns.starts[at + 1]].tolist()
            for at in range(patterns.size)
        ]
        assert len({tuple(counts) for counts in own}) == patterns.size  # one pattern per set of counts
        for row, counts in enumerate(_counts_by_row(kept, rows)):
            assert own[patterns.of_row[row]] == counts


@pytest.mark.parametrize(("seed", "offers", "clusters"), [(33, 300, 20), (34, 700, 40)])
def test_fastest_speedups_by_pattern_equal_those_of_every_cell(seed: int, offers: int, clusters: int) -> None:
    snapshot = catalog(seed, offers, clusters=clusters, packaged_vendors=3)
    tables, compared, unknown, ties = snapshot.tables, 0, 0, 0
    for request in requests(seed, 120, snapshot):
        answers(snapshot, [request], _OPTIONS)
        for _, kept in layout.kept_layouts(tables):
            patterns = row_patterns(kept, tables.size)
            for _, scaling in layout._COLUMNS.of(kept.memos).items():
                by_pattern = fastest._by_pattern(patterns, scaling)
                by_row = kept.rows_order(tables)
                by_cell = fastest._by_cell(kept, scaling, tables)
                every = np.arange(tables.size)
                assert np.array_equal(by_pattern.top(every), by_cell.top(every), equal_nan=True)
                assert np.array_equal(by_pattern.runner_up(every), by_cell.runner_up(every), equal_nan=True)
                cells, found = by_cell.cells_by_row(every, by_row)
                pattern_cells, pattern_found = by_pattern.cells_by_row(every, by_row)
                assert np.array_equal(pattern_found, found)
                assert np.array_equal(pattern_cells, cells)
                # Some rows in any order, as a request reads them: the same cells, ascending.
                some = np.random.default_rng(compared).permutation(tables.size)[: tables.size // 3]
                assert np.array_equal(by_pattern.of(some, by_row), by_cell.of(some, by_row))
                assert np.array_equal(
                    by_cell.of(some, by_row),
                    np.sort(np.concatenate([cells[at] for at in _row_slices(found, some)])),
                )
                ties += int((found > 1).sum())
                compared += 1
                unknown += int(np.isnan(by_cell.top(every)).any())
    assert compared >= 100 and unknown >= 1 and ties >= 1


def _row_slices(found: np.ndarray, rows: np.ndarray) -> list[slice]:
    """Where each of ``rows``' cells lie among every row's, row after row (``found``: how many each has)."""
    starts = np.concatenate(([0], np.cumsum(found)))
    return [slice(int(starts[row]), int(starts[row + 1])) for row in rows]
