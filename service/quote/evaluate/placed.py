"""Jobs placed in pieces (independent runs), bound-pruned before their layout is built.

A placed job's layout is its own (its runs' cards, how many runs, the rows matching the request), so
it is built for the request that asks: at 96,000 offers a sweep's default candidates are a million
cells. Bound pruning (``evaluate.pruning``) bills only the rows that can reach the response, but on a
layout built whole first, building it and what the pruning reads of every cell (each row's cells, the
judgement's counts) cost more than billing it. So a placed job is pruned on its grid of ``(counts,
rows)`` candidates instead:

- the rows' bounds need no cell: a placement bills at least the cards it places, for at least the
  wall-clock hours of its count's speed-up, as one rental does, and supplies at most the cards of the
  offer's most units in all (``pruning.placed_row_speedups``);
- the judgement's counts per row (requested, supplied, holding the model) are read off the grid, the
  placement worked out once per kind of row (``placing.placed_everywhere``, ``row_judge.grid_row_counts``);
- the layout is built for the rows billed alone (``build_layout``'s ``rows``: their cells, and the
  combined plans' rows with the products they combine; the one-card cell every row is judged at is read
  off the grid too), each cell holding what the whole layout holds there, and built again, wider, when
  the thresholds keep rows it does not hold. The rows tied at the least hours bound (the fastest
  candidate is usually among them, and each is then kept for its hours) are held and billed up front by
  their cells within it.

The grid itself (the candidates, where each count is placed, the speed-ups the bounds take, the cells per
row) does not depend on the job's hours: it is kept on the tables per candidates and speed-up rule
(``_PLACEMENTS``, ``RunPlacement``'s default candidates beside it), so the jobs of one sweep asked again
for other hours build only their bounds and layout.

Every answer is the whole evaluation's (``tests/quote/test_bound_pruning.py`` compares them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from service.quote.base.arrays import BoolArray, FloatArray, IntArray, frozen
from service.quote.base.memo import MemoSlot
from service.quote.base.paths import FastPaths
from service.quote.evaluate.layout import KeptCells, Layout, build_layout
from service.quote.evaluate.losses import reads_every_high_end
from service.quote.evaluate.placing import placed_everywhere
from service.quote.evaluate.pruning import (
    RowBounds,
    RowSpeedups,
    placed_row_speedups,
    safe_rows,
    seed_rows,
    widened,
)
from service.quote.evaluate.row_judge import RowCounts, grid_cells_per_row, grid_row_counts
from service.quote.jobs import Candidates, LayoutInputs, SpeedupRule
from service.quote.model.scaling import ScalingColumns
from service.quote.model.tables import OfferTables
from service.quote.resolve import ResolvedRequest

__all__ = ["PlacedRows", "placed_rows", "prunes_placed"]


def prunes_placed(tables: OfferTables, resolved: ResolvedRequest, fast: FastPaths) -> bool:
    """Whether the request is a placed job bound-pruned on its grid: independent runs on a large table,
    with no limit and no confidence (whose judgement reads every cell's figures)."""
    return (
        fast.bound_pruning
        and tables.size >= fast.prune_from_rows
        and resolved.kind.kind == "independent"
        and not reads_every_high_end(resolved.request)
    )


@dataclass(frozen=True, slots=True)
class _Grid:
    """A placed job's ``(counts, rows)`` grid of candidates: what each cell is, without its cells."""

    tables: OfferTables
    inputs: LayoutInputs
    fast: FastPaths
    scaling: ScalingColumns  # the rule's speed-ups at the counts, per column
    requested: BoolArray  # (counts, rows)
    placed: BoolArray  # (counts, rows): the placement places the count's cards on the row
    one_card_units: FloatArray  # (rows,) the units each row's one-card cell rents
    hours: tuple[FloatArray, FloatArray | None]  # (rows,) expected one-card hours, and the copy's
    cells_per_row: tuple[FloatArray, FloatArray]  # (rows,) requested, and supplied (``grid_cells_per_row``)

    def layout(self, held: BoolArray, timed: tuple[BoolArray, float]) -> Layout:
        """The layout of every cell of the rows ``held`` and, of the rows ``timed`` sets, the cells
        within its hours: those ``_cells_within_hours`` bills (NaN hours kept), worked out the same way,
        among the cells a response can read of each (its requested ones and its one-card one)."""
        held_rows, at = np.flatnonzero(held), np.flatnonzero(timed[0])
        # Only these rows' cells: a grid of every row is millions of cells, these a few hundred rows'.
        rows = np.union1d(held_rows, at)
        cells = np.zeros((len(self.inputs.counts), rows.size), dtype=np.bool_)
        cells[:, np.searchsorted(rows, held_rows)] = True
        if at.size:
            one_card_hours, extra_hours = self.hours
            speedups = self.scaling.expected.take(self.scaling.code.take(at), axis=1)
            hours = np.divide(one_card_hours.take(at), speedups)
            if extra_hours is not None:
                hours += extra_hours.take(at)
            read = self.requested[:, at]
            read[self.inputs.counts.index(1)] = True
            with np.errstate(invalid="ignore"):
                cells[:, np.searchsorted(rows, at)] = read & ~(hours > timed[1])
        return build_layout(self.tables, self.inputs, self.fast, KeptCells(rows, cells))


@dataclass(frozen=True, slots=True)
class PlacedRows:
    """A placed job's candidates judged on their grid, its rows' bounds, and a layout holding some rows."""

    grid: _Grid
    whole_cells: int  # the cells the whole layout bills at least: its requested ones and the one-card column
    bounds: RowBounds
    seeds: tuple[IntArray, IntArray]  # the rows billed first: whole, and by their fastest cells
    layout: Layout
    held: BoolArray  # (rows,) the rows ``layout`` holds every cell of
    # (rows,) the rows ``layout`` holds the cells of within ``timed_hours`` (what ``_cells_within_hours``
    # bills of a row kept for its hours alone); rows held whole aside
    timed: BoolArray
    timed_hours: float

    @property
    def one_card_units(self) -> FloatArray:
        return self.grid.one_card_units

    def row_counts(self, fewest_cards: FloatArray) -> RowCounts:
        """The judgement's counts per row, over the whole grid (the combined plans' from ``layout``)."""
        grid = self.grid
        cells = (grid.requested, grid.placed, grid.one_card_units)
        return grid_row_counts(self.layout, grid.tables, fewest_cards, cells, grid.cells_per_row)

    def timed_cells(self) -> IntArray:
        """Positions (ascending) among ``layout``'s cells of the rows it holds by their hours: billed with
        the first rows, so that the rows the thresholds keep for their hours alone are billed already
        when they are these (a tie at the least bound, the fastest candidate among them)."""
        return self.layout.cells_of(np.flatnonzero(self.timed), self.grid.tables)

    def holding(self, rows: IntArray, by_hours: tuple[IntArray, float]) -> PlacedRows | None:
        """These rows with a layout that holds every cell of ``rows`` too, and of the rows ``by_hours``
        keeps for their hours alone, those within its hours; None when this one holds them already."""
        fastest, within_hours = by_hours
        missing = fastest[~self.held.take(fastest)]
        if within_hours <= self.timed_hours:
            missing = missing[~self.timed.take(missing)]
        if bool(self.held.take(rows).all()) and missing.size == 0:
            return None
        held = self.held.copy()
        held[rows] = True
        timed = np.zeros(held.size, dtype=np.bool_)
        timed[fastest[~held.take(fastest)]] = True  # those this layout holds by hours too
        layout = self.grid.layout(held, (timed, within_hours))
        return replace(self, layout=layout, held=held, timed=timed, timed_hours=within_hours)


# Rows tied with the least hours bound held by their fastest cells up front, at most this many (a sweep
# on offers of one GPU with no stock limit ties thousands of rows at its largest count).
_TIED_HELD = 20_000


@dataclass(frozen=True, slots=True)
class _Placements:
    """What a placed job's grid is, whatever the job's hours: its candidates' speed-ups per column, where
    each count is placed, the one-card cell's units, and the speed-ups its rows' bounds take."""

    scaling: ScalingColumns
    placed: BoolArray  # (counts, rows)
    one_card_units: FloatArray  # (rows,)
    speedups: RowSpeedups
    whole_cells: int  # the cells the whole layout bills at least (``PlacedRows.whole_cells``)
    cells_per_row: tuple[FloatArray, FloatArray]  # ``row_judge.grid_cells_per_row``


# Per (candidates, speed-up rule): every job of a sweep asks for the same grid, whatever its hours. About
# 8-10 MB each at 96,000 rows (its flags per cell, the bounds' speed-ups with their memos), so only the
# last two sweeps are kept: a sweep asked again for other hours is what this is for, and every grid kept
# is resident memory.
_PLACEMENTS: MemoSlot[tuple[Candidates, SpeedupRule], _Placements] = MemoSlot(
    "placed grids", size=2, max_bytes=20 * 2**20
)


def _placements(
    tables: OfferTables, inputs: LayoutInputs, job: tuple[Candidates, SpeedupRule]
) -> _Placements:
    candidates, rule = job

    def make() -> _Placements:
        cards, one_card = np.array(inputs.counts, dtype=np.float64), inputs.counts.index(1)
        scaling = rule.columns(tables, inputs.counts)
        placed, one_card_units = placed_everywhere(tables, inputs, cards, one_card)
        speedups = placed_row_speedups(cards, tables, scaling)
        requested = np.broadcast_to(inputs.requested, (cards.size, tables.size))
        whole_cells = int(np.count_nonzero(requested)) - int(np.count_nonzero(requested[one_card]))
        per_row = grid_cells_per_row((requested, placed), tables.offer_count)
        return _Placements(
            scaling,
            frozen(placed),
            frozen(one_card_units),
            speedups,
            whole_cells + tables.size,
            (frozen(per_row[0]), frozen(per_row[1])),
        )

    return _PLACEMENTS.of(tables.memos).get((candidates, rule), make)


def placed_rows(
    tables: OfferTables,
    job: tuple[Candidates, SpeedupRule],
    fast: FastPaths,
    hours: tuple[FloatArray, FloatArray | None],
    bounds_of: Callable[[RowSpeedups], RowBounds],
    resolved: ResolvedRequest,
) -> PlacedRows:
    """The grid of ``job``'s candidates under its speed-up rule judged, the rows' bounds (``bounds_of``
    the speed-ups the bounds take), the rows billed first (``pruning.seed_rows``), and a layout holding
    them whole, with the rows tied with the least hours bound by their cells within it: the fastest
    candidate is often one of them, at that bound (a wall-clock bound is its count's hours), and every
    one of them is then kept for its hours. ``hours``: each row's expected one-card hours, and the
    copy's (None: no copy)."""
    inputs = job[0].inputs(tables)
    made = _placements(tables, inputs, job)
    requested = np.broadcast_to(inputs.requested, (len(inputs.counts), tables.size))
    grid = _Grid(
        tables,
        inputs,
        fast,
        made.scaling,
        requested,
        made.placed,
        made.one_card_units,
        hours,
        made.cells_per_row,
    )
    bounds = bounds_of(made.speedups)
    seeds = seed_rows(bounds, resolved.request, safe_rows(tables))
    held = np.zeros(tables.size, dtype=np.bool_)
    held[tables.offer_count :] = True  # the combined plans' rows: their plans are the whole layout's
    held[np.concatenate(seeds)] = True
    least = float(np.nanmin(bounds.hours, initial=np.inf))
    within_hours = widened(least) if np.isfinite(least) else -np.inf
    with np.errstate(invalid="ignore"):
        tied = (bounds.hours <= within_hours) & ~held
    if np.count_nonzero(tied) > _TIED_HELD:
        tied[:] = False
    layout = grid.layout(held, (tied, within_hours))
    return PlacedRows(grid, made.whole_cells, bounds, seeds, layout, held, tied, within_hours)
