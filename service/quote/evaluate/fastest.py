"""Each row's fastest cells under a speed-up rule: the cells a pruned evaluation bills for the fastest
candidate (``evaluation._fastest_cells``).

A row's hours are its one-card hours over a cell's speed-up, plus its copy: the cells at its largest
expected speed-up are its fastest, whatever the request. Per layout and rule each row's largest speed-up
and the largest below it are kept (``FastestSpeedups``); the cells at the largest are found for the few
rows a request bills (``FastestSpeedups.cells_of``).

A row's speed-ups are its column's at the counts it has cells at, so rows of one pattern of counts and
one column (``patterns``) share them: both figures are worked out per pattern and column, from the
rule's (counts × columns) table, and read per row. Where the patterns' counts over every column would
outnumber a share of the cells, every cell's speed-up is gathered instead. Either way each figure is the
maximum of the same speed-ups.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from service.quote.base.arrays import FloatArray, IntArray, frozen
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
    some cell's is unknown) and the largest below it (0: none)."""

    top: FloatArray
    runner_up: FloatArray

    def cells_of(
        self, rows: IntArray, layout: Layout, scaling: ScalingColumns, tables: OfferTables
    ) -> IntArray:
        """Positions (ascending) of the cells of ``rows`` at their largest speed-up."""
        at, lengths = layout.cells_by_row(rows, tables)
        speedups = layout.expected_speedups(scaling, at)
        cells: IntArray = at[speedups == np.repeat(self.top.take(rows), lengths)]
        cells.sort()
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


def _top_two(values: FloatArray, firsts: IntArray, lengths: IntArray) -> tuple[FloatArray, FloatArray]:
    """Per run of ``values`` (each starts at ``firsts``, ``lengths`` long, none empty, laid end to end
    along the first axis): the largest and the largest below it (0: none)."""
    top = np.maximum.reduceat(values, firsts, axis=0)
    is_top = values == np.repeat(top, lengths, axis=0)
    runner_up = np.maximum.reduceat(np.where(is_top, 0.0, values), firsts, axis=0)
    return top, runner_up


def _by_pattern(patterns: RowPatterns, scaling: ScalingColumns) -> FastestSpeedups:
    lengths = np.diff(patterns.starts)
    held = lengths > 0
    columns = scaling.expected.shape[1]
    top = np.full((patterns.size, columns), -np.inf)
    runner_up = np.zeros((patterns.size, columns))
    if held.any():
        table = scaling.expected.take(patterns.counts, axis=0)  # (pattern counts, columns)
        top[held], runner_up[held] = _top_two(table, patterns.starts[:-1][held], lengths[held])
    at = patterns.of_row * columns + scaling.code
    return FastestSpeedups(
        top=frozen(top.reshape(-1).take(at)), runner_up=frozen(runner_up.reshape(-1).take(at))
    )


def _by_cell(layout: Layout, scaling: ScalingColumns, tables: OfferTables) -> FastestSpeedups:
    at, lengths = layout.cells_by_row(np.arange(tables.size), tables)
    held = lengths > 0
    top = np.full(tables.size, -np.inf)
    runner_up = np.zeros(tables.size)
    if held.any():
        every = layout.expected_speedups(scaling).take(at)
        firsts = (np.cumsum(lengths) - lengths)[held]
        top[held], runner_up[held] = _top_two(every, firsts, lengths[held])
    return FastestSpeedups(top=frozen(top), runner_up=frozen(runner_up))


# Per layout, the fastest speed-ups under the rules seen lately (two floats a row).
_FASTEST: MemoSlot[SpeedupRule, FastestSpeedups] = MemoSlot("fastest speed-ups", size=4, max_bytes=32 * 2**20)
