"""A layout's rows grouped by the counts they have cells at: what a per-row pass over the cells can read
per group instead.

Every row has a cell at each of the layout's dense counts; past them, a row has cells at the counts its
machine, bundles, limits and stock sell. Rows alike share one set of counts (a ``pattern``): at 96,000
offers the default layout's 1.06 million cells fall into 22 patterns. A figure that depends only on a
row's counts and its speed-up column (its fastest speed-up under a rule, say) is then worked out per
pattern and column, and read per row, rather than gathered at every cell.

The grouping is exact: each row's counts past the dense ones, as bits, are one key, and rows with equal
keys form a pattern.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from service.quote.base.arrays import IntArray, frozen
from service.quote.base.memo import MemoSlot
from service.quote.evaluate.layout import Layout

__all__ = ["RowPatterns", "row_patterns"]


@dataclass(frozen=True, slots=True)
class RowPatterns:
    """Per row its pattern; per pattern its counts (positions among the layout's counts, ascending)."""

    of_row: IntArray  # (rows,) each row's pattern
    counts: IntArray  # the counts of every pattern, pattern after pattern
    starts: IntArray  # (patterns + 1,) where each pattern's counts start in ``counts``

    @property
    def size(self) -> int:
        return self.starts.size - 1


def row_patterns(layout: Layout, rows: int) -> RowPatterns:
    """The patterns of ``layout``'s ``rows`` rows (its tables' size), made once per layout."""
    return _PATTERNS.of(layout.memos).get(0, lambda: _patterns(layout, rows))


def _patterns(layout: Layout, rows: int) -> RowPatterns:
    dense, head = layout.dense, layout.dense * rows
    sparse_counts = len(layout.counts) - dense
    sparse = layout.cells[head:] - head
    if sparse_counts == 0 or sparse.size == 0:
        of_row, patterns = np.zeros(rows, dtype=np.int64), min(rows, 1)
        pattern_at, count_at = np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    else:
        # Keyed are the rows with some cell past the dense counts; the others (a layout of some rows'
        # cells has many) share the pattern of the dense counts alone, the first (its key is all zeros).
        has = np.zeros((sparse_counts, rows), dtype=np.bool_)
        has.reshape(-1)[sparse] = True
        present = has.any(axis=0)
        keyed = np.flatnonzero(present)
        empty = int(keyed.size < rows)
        if empty:
            has = has.take(keyed, axis=1)
        bits = np.ascontiguousarray(np.packbits(has, axis=0).T)  # (rows, bytes): one key per row
        keys = bits.view(np.dtype((np.void, bits.shape[1]))).reshape(keyed.size)
        _, firsts, inverse = np.unique(keys, return_index=True, return_inverse=True)
        of_row = np.zeros(rows, dtype=np.int64)
        of_row[keyed] = inverse.reshape(keyed.size) + empty
        pattern_at, count_at = np.nonzero(has[:, firsts].T)  # by pattern, then count
        pattern_at = pattern_at + empty
        count_at = count_at + dense
        patterns = firsts.size + empty
    lengths = dense + np.bincount(pattern_at, minlength=patterns)
    starts = np.concatenate(([0], np.cumsum(lengths)))
    counts = np.empty(int(starts[-1]), dtype=np.int64)
    counts[(starts[:-1, None] + np.arange(dense)).reshape(-1)] = np.tile(np.arange(dense), patterns)
    sparse_starts = np.concatenate(([0], np.cumsum(lengths - dense)))
    within = np.arange(pattern_at.size) - sparse_starts[pattern_at]
    counts[starts[pattern_at] + dense + within] = count_at
    return RowPatterns(
        of_row=frozen(of_row.astype(np.int64).reshape(rows)),
        counts=frozen(counts),
        starts=frozen(starts.astype(np.int64)),
    )


_PATTERNS: MemoSlot[int, RowPatterns] = MemoSlot("row patterns", size=1)
