"""Each row's fastest cells under a speed-up rule: the cells a pruned evaluation bills for the fastest
candidate (``evaluation._fastest_cells``).

A row's hours are its one-card hours over a cell's speed-up, plus its copy: the cells at its largest
expected speed-up are its fastest, whatever the request. Per layout and rule each row's largest speed-up,
the largest below it and its cells at the largest are kept (``FastestSpeedups``), so a request reads
the few rows it bills.

A row's speed-ups are its column's at the counts it has cells at, so rows of one pattern of counts and
one column (``patterns``) share them: both figures, and which of the pattern's counts are at the
largest, are worked out per pattern and column from the rule's (counts × columns) table, and read for
the rows a request reads (a row's cells, in ascending count, are its pattern's counts). A new rule then
costs one pass over the rows (each row's pattern and column), not over the cells, and keeps no array of
every row's cells. Where the patterns' counts over every column would outnumber a share of the cells,
every cell's speed-up is gathered instead. Either way each figure is the maximum of the same speed-ups,
and the cells are those equal to it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from service.quote.base.arrays import BoolArray, FloatArray, IntArray, frozen
from service.quote.base.memo import MemoSlot
from service.quote.evaluate.layout import Layout
from service.quote.evaluate.patterns import RowPatterns, row_patterns
from service.quote.jobs import SpeedupRule
from service.quote.model.scaling import ScalingColumns
from service.quote.model.tables import OfferTables

__all__ = ["FastestSpeedups", "fastest_speedups"]

# Past this share of a layout's cells, the (pattern counts × columns) table costs more than the cells.
_PATTERN_SHARE = 0.25


@dataclass(frozen=True, slots=True)
class FastestSpeedups:
    """Per row of a layout, under one speed-up rule: its largest expected speed-up (-inf: no cell; NaN:
    some cell's is unknown), the largest below it (0: none), and its cells at the largest (none where the
    largest is unknown). Kept per group of rows alike (a pattern and a column, ``_by_pattern``; or each
    row, ``_by_cell``) and read for the few rows a request asks about, so a new rule makes no array of
    every row's cells.

    A row's cells at its largest are ``places[place_starts[g]:place_starts[g + 1]]`` of its group ``g``:
    places among the row's own cells (``within_rows``: read through the layout's cells by row, each
    row's ascending, as its pattern lists its counts), or the cells' positions themselves."""

    group: IntArray  # (rows,) each row's group
    top_by_group: FloatArray
    runner_up_by_group: FloatArray
    places: IntArray  # each group's cells at its largest, group after group, ascending within each
    place_starts: IntArray  # (groups + 1,)
    within_rows: bool

    def top(self, rows: IntArray) -> FloatArray:
        """The largest speed-up of each of ``rows``."""
        top: FloatArray = self.top_by_group.take(self.group.take(rows))
        return top

    def runner_up(self, rows: IntArray) -> FloatArray:
        """The largest speed-up below the largest of each of ``rows`` (0: none)."""
        runner_up: FloatArray = self.runner_up_by_group.take(self.group.take(rows))
        return runner_up

    def cells_by_row(self, rows: IntArray, by_row: tuple[IntArray, IntArray]) -> tuple[IntArray, IntArray]:
        """The cells of ``rows`` at their largest speed-up, row after row (each row's ascending), and how
        many each row has (``by_row``: the layout's cells by row, ``Layout.rows_order``)."""
        group = self.group.take(rows)
        firsts = self.place_starts.take(group)
        found = self.place_starts.take(group + 1) - firsts
        run, place = _runs(found)
        cells: IntArray = self.places.take(firsts.take(run) + place)
        if self.within_rows:
            order, starts = by_row
            cells = order.take(starts.take(rows).take(run) + cells)
        return cells, found

    def of(self, rows: IntArray, by_row: tuple[IntArray, IntArray]) -> IntArray:
        """The cells of ``rows`` at their largest speed-up, ascending (``by_row``: ``cells_by_row``'s)."""
        cells: IntArray = np.sort(self.cells_by_row(rows, by_row)[0])
        return cells


def fastest_speedups(
    layout: Layout, rule: SpeedupRule, scaling: ScalingColumns, tables: OfferTables
) -> FastestSpeedups:
    """``FastestSpeedups`` of ``layout`` under ``rule`` (whose columns are ``scaling``), made once."""

    def make() -> FastestSpeedups:
        patterns = row_patterns(layout, tables.size)
        if patterns.counts.size * scaling.expected.shape[1] <= _PATTERN_SHARE * layout.cells.size:
            return _by_pattern(patterns, scaling)
        return _by_cell(layout, scaling, tables)

    return _FASTEST.of(layout.memos).get(rule, make)


def _top_two(
    values: FloatArray, firsts: IntArray, lengths: IntArray
) -> tuple[FloatArray, FloatArray, BoolArray]:
    """Per run of ``values`` (each starts at ``firsts``, ``lengths`` long, none empty, laid end to end
    along the first axis): the largest, the largest below it (0: none), and which values are the
    largest."""
    top = np.maximum.reduceat(values, firsts, axis=0)
    is_top = values == np.repeat(top, lengths, axis=0)
    runner_up = np.maximum.reduceat(np.where(is_top, 0.0, values), firsts, axis=0)
    return top, runner_up, is_top


def _runs(lengths: IntArray) -> tuple[IntArray, IntArray]:
    """For runs of ``lengths`` laid end to end: each element's run, and its place within the run."""
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if ends.size else 0
    run = np.repeat(np.arange(lengths.size), lengths)
    return run, np.arange(total) - (ends - lengths).take(run)


def _by_pattern(patterns: RowPatterns, scaling: ScalingColumns) -> FastestSpeedups:
    """Both speed-ups per pattern and column, the groups; a group's cells at the largest are the places
    of its largest among its pattern's counts, which are the places among each of its rows' cells (a
    row's cells, in ascending count, are its pattern's counts)."""
    lengths = np.diff(patterns.starts)
    held = lengths > 0
    columns = scaling.expected.shape[1]
    top = np.full((patterns.size, columns), -np.inf)
    runner_up = np.zeros((patterns.size, columns))
    is_top = np.zeros((patterns.counts.size, columns), dtype=np.bool_)
    if held.any():
        table = scaling.expected.take(patterns.counts, axis=0)  # (pattern counts, columns)
        top[held], runner_up[held], is_top = _top_two(table, patterns.starts[:-1][held], lengths[held])
    # Per (pattern, column): the places within the pattern of its largest, pair by pair.
    column_at, count_at = np.nonzero(is_top.T)
    count_pattern, within = _runs(lengths)
    top_pair = count_pattern.take(count_at) * columns + column_at
    order = np.argsort(top_pair, kind="stable")
    return FastestSpeedups(
        group=frozen(patterns.of_row * columns + scaling.code),  # each row's (pattern, column)
        top_by_group=frozen(top.reshape(-1)),
        runner_up_by_group=frozen(runner_up.reshape(-1)),
        places=frozen(within.take(count_at).take(order)),
        place_starts=frozen(np.searchsorted(top_pair.take(order), np.arange(patterns.size * columns + 1))),
        within_rows=True,
    )


def _by_cell(layout: Layout, scaling: ScalingColumns, tables: OfferTables) -> FastestSpeedups:
    at, lengths = layout.cells_by_row(np.arange(tables.size), tables)
    held = lengths > 0
    top = np.full(tables.size, -np.inf)
    runner_up = np.zeros(tables.size)
    found = np.zeros(tables.size, dtype=np.int64)
    cells = at[:0]
    if held.any():
        every = layout.expected_speedups(scaling).take(at)
        firsts = (np.cumsum(lengths) - lengths)[held]
        top[held], runner_up[held], is_top = _top_two(every, firsts, lengths[held])
        found[held] = np.add.reduceat(is_top.astype(np.int64), firsts)
        cells = at[is_top]
    return FastestSpeedups(
        group=frozen(np.arange(tables.size)),  # each row its own group
        top_by_group=frozen(top),
        runner_up_by_group=frozen(runner_up),
        places=frozen(cells),
        place_starts=frozen(np.concatenate(([0], np.cumsum(found)))),
        within_rows=False,
    )


# Per layout, the fastest speed-ups under the rules seen lately (a group a row, and each group's figures).
_FASTEST: MemoSlot[SpeedupRule, FastestSpeedups] = MemoSlot("fastest speed-ups", size=4, max_bytes=32 * 2**20)
