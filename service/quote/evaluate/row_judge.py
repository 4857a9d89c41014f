"""Judging a pruned evaluation by row: what ``judge`` says of every cell, from counts kept per row.

A request without a deadline or a budget (the only kind ``evaluate.pruning`` prunes by its ranking's
bounds) judges a cell on four checks: its offer matches the filters and is fresh (per row), and the cell
is supplied and holds the model (per cell, from the layout and the memory need alone). So what the whole
table's judgement reports — ``excluded``, whether stale prices are the fallback, how many cells qualify,
which rows have a qualifying cell — is a sum over rows of per-row counts that depend on the layout and the
memory need only (``RowCounts``, kept per layout and memory need), weighed by the request's row masks: one
pass over the rows, not over the million cells of a large table. A new memory need's counts take no pass
over the cells either: each row's requested cells (and those supplied) are kept per layout as sorted
keys, and the cells that do not hold the model are, per row, those below its fewest cards: read from
a table of each row's cells below each of the first counts, searched among the keys past them (a new
memory need costs 1.8 ms at 96,000 offers, against 6.4 ms searching every row). Combined plans are quoted only where
they beat the products they combine (a request's own figures), so their few rows are judged cell by cell.
The cells a pruned evaluation bills are judged cell by cell too (``RowJudgement.at``), with the table's
own fallback to stale prices.

Each figure equals ``judge``'s (``tests/quote/test_row_judge.py`` compares them over seeded requests).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from schemas.quote import Excluded
from service.quote.base.arrays import BoolArray, FloatArray, IntArray, frozen, set_per_row
from service.quote.base.memo import MemoSlot
from service.quote.evaluate.fewest import fewest_positions
from service.quote.evaluate.layout import Layout
from service.quote.model.tables import OfferTables

__all__ = ["RowCounts", "RowJudgement", "grid_cells_per_row", "grid_row_counts", "judged_by_row"]


@dataclass(frozen=True, slots=True)
class RowCounts:
    """Per offer row (the rows before the combined plans'), counts of a layout's requested cells under
    one memory need: all of them, those not supplied, those that do not hold the model, and those that
    are supplied and hold it (``fitting``); and what judges any cell's memory check."""

    counts: FloatArray  # (4, offer rows), whole numbers as floats (a dot product weighs them)
    totals: tuple[int, int, int, int]  # each count over every offer row
    fitting: BoolArray  # (offer rows,) some requested cell is supplied and holds the model
    holds: BoolArray  # (rows,) the row's most cards hold the model (else none of its cells does)
    fewest_cards: FloatArray  # (rows,) the memory need's
    per_cell_memory: bool  # some row needs more cards than the smallest count: cells are checked too
    # (rows,) the one-card cell is supplied, holds the model and rents one card or one machine as one
    # unit (what the single-card comparison can be: ``pruning.single_card_cost``); offers' rows only
    one_card_fits: BoolArray
    plan_cells: IntArray  # positions of the combined plans' rows' cells, ascending
    plan_at: IntArray  # where ``Layout.plans.at`` falls within ``plan_cells``

    def holds_model(self, cell_cards: FloatArray, cell_offer: IntArray) -> BoolArray:
        """Per cell, whether it holds the model (``evaluation._judged``'s memory check)."""
        holds: BoolArray = self.holds.take(cell_offer)
        if self.per_cell_memory:
            holds &= cell_cards >= self.fewest_cards.take(cell_offer)
        return holds


_REQUESTED, _UNSUPPLIED, _SHORT_OF_MEMORY, _FITTING = range(4)


@dataclass(frozen=True, slots=True)
class _Keys:
    """Some cells of each offer row as sorted keys ``row × counts + count`` (a row's cells below a
    count are one search away), where each row's start, and how many each row has; and, per row, how
    many of its cells are at each of the first ``_FIRST_COUNTS`` counts or below (``firsts``), which
    answers the usual search (a model held by a few cards) with one read per row."""

    keys: IntArray | npt.NDArray[np.int32]
    starts: IntArray  # (offer rows + 1,)
    per_row: FloatArray  # (offer rows,)
    firsts: npt.NDArray[np.uint8]  # (first counts, offer rows): [b - 1, row] its cells below count b

    @classmethod
    def of(cls, keys: IntArray, rows: int, counts: int, firsts: npt.NDArray[np.uint8]) -> _Keys:
        """``firsts``: the same cells' table (``_firsts``)."""
        # Half the bytes where every key fits 32 bits (96,000 offers of 136 counts: 13 million).
        kept = keys.astype(np.int32) if rows * counts < 2**31 else keys
        starts = np.searchsorted(kept, (np.arange(rows + 1, dtype=np.int64) * counts).astype(kept.dtype))
        return cls(
            keys=frozen(kept),
            starts=frozen(starts),
            per_row=frozen(np.diff(starts).astype(np.float64)),
            firsts=frozen(firsts),
        )

    def below(self, rows: IntArray, row_keys: IntArray, below: IntArray) -> FloatArray:
        """Per offer row, how many of its cells are at counts below ``below`` (at least 1): searched at
        ``rows`` (``row_keys`` and ``below`` theirs), 0 elsewhere."""
        found = np.zeros(self.per_row.size)
        first = below <= self.firsts.shape[0]
        every_first = bool(first.all())
        near: slice | IntArray = slice(None) if every_first else np.flatnonzero(first)
        near_rows = rows[near]
        found[near_rows] = self.firsts.ravel().take((below[near] - 1) * self.per_row.size + near_rows)
        if not every_first:
            far = np.flatnonzero(~first)
            far_rows = rows.take(far)
            far_keys = (row_keys.take(far) + below.take(far)).astype(self.keys.dtype)
            found[far_rows] = np.searchsorted(self.keys, far_keys) - self.starts.take(far_rows)
        return found


# The counts ``_Keys.firsts`` holds each row's cells below: a row's fewest cards are rarely past them.
_FIRST_COUNTS = 16


def _firsts(layout: Layout, tables: OfferTables, cells: BoolArray) -> npt.NDArray[np.uint8]:
    """``(first counts, offer rows)``: at ``[b - 1, row]``, how many of the row's cells set in ``cells``
    (one flag per cell of ``layout``) are at a count below ``b``, for ``b`` up to ``_FIRST_COUNTS``: read
    off the dense counts' whole rows and the few cells past them at those counts (cells ascend), not
    off every cell."""
    size, first = tables.size, min(_FIRST_COUNTS, len(layout.counts))
    grid = np.zeros((first, size), dtype=np.bool_)
    dense = min(layout.dense, first)
    grid[:dense] = cells[: dense * size].reshape(dense, size)
    start = layout.dense * size
    end = int(np.searchsorted(layout.cells, first * size))
    if end > start:
        grid.reshape(-1)[layout.cells[start:end]] = cells[start:end]
    firsts: npt.NDArray[np.uint8] = np.cumsum(grid[:, : tables.offer_count], axis=0, dtype=np.uint8)
    return firsts


@dataclass(frozen=True, slots=True)
class _RequestedCells:
    """What ``RowCounts`` takes from a layout alone: the offer rows' requested cells, and those of them
    supplied (``_Keys``), and the combined plans' rows' cells."""

    requested: _Keys
    supplied: _Keys
    plan_cells: IntArray
    plan_at: IntArray


def _requested_cells(layout: Layout, tables: OfferTables) -> _RequestedCells:
    rows, counts = tables.offer_count, len(layout.counts)
    order, _ = layout.rows_order(tables)  # cells by row, each row's ascending (so by count)
    order = order[layout.cell_offer.take(order) < rows]
    keys = layout.cell_offer.take(order) * counts + layout.cells.take(order) // tables.size
    requested = layout.requested.take(order)
    plan_cells, plan_at = _plan_rows_cells(layout, tables)
    supplied = layout.requested & layout.supplies
    return _RequestedCells(
        requested=_Keys.of(keys[requested], rows, counts, _firsts(layout, tables, layout.requested)),
        supplied=_Keys.of(keys[supplied.take(order)], rows, counts, _firsts(layout, tables, supplied)),
        plan_cells=frozen(plan_cells),
        plan_at=frozen(plan_at),
    )


def _row_counts(
    layout: Layout, tables: OfferTables, fewest_cards: FloatArray, fewest_key: Hashable = None
) -> RowCounts:
    """A row's requested cells, counted per reason: those of each row below the fewest cards that hold
    the model (its counts ascend) do not hold it, and a row whose most cards do not has none that does
    (``fewest_key``: what identifies the fewest cards, ``fewest_positions``)."""
    rows = tables.offer_count
    holding = _Holding.of(layout, tables, fewest_cards)
    cells = _REQUESTED_CELLS.of(layout.memos).get(0, lambda: _requested_cells(layout, tables))
    holds = holding.rows[:rows]
    requested_below, supplied_below = np.zeros(rows), np.zeros(rows)
    if holding.per_cell:
        below = fewest_positions(tables, layout.cards, (fewest_key, fewest_cards))[:rows]
        searched = np.flatnonzero(holds & (below > 0))  # elsewhere none is below, or none holds it
        row_keys, below = searched * len(layout.counts), below.take(searched)
        requested_below = cells.requested.below(searched, row_keys, below)
        supplied_below = cells.supplied.below(searched, row_keys, below)
    per_row = (cells.requested.per_row, cells.supplied.per_row, requested_below, supplied_below)
    column = slice(layout.one_card_column * tables.size, (layout.one_card_column + 1) * tables.size)
    one_card = (layout.supplies[column], layout.units[column])
    return _counted(layout, tables, holding, (per_row, one_card), (cells.plan_cells, cells.plan_at))


def grid_cells_per_row(grid: tuple[BoolArray, BoolArray], rows: int) -> tuple[FloatArray, FloatArray]:
    """Per offer row (the first ``rows``), the cells of a ``(counts, rows)`` grid requested, and those
    supplied too (``grid``: requested, supplied): what ``grid_row_counts`` counts whatever the memory
    need, worked out once per grid."""
    requested = grid[0][:, :rows]
    return (
        set_per_row(requested),
        set_per_row(requested & grid[1][:, :rows]),
    )


def grid_row_counts(
    layout: Layout,
    tables: OfferTables,
    fewest_cards: FloatArray,
    grid: tuple[BoolArray, BoolArray, FloatArray],
    per_row: tuple[FloatArray, FloatArray],
) -> RowCounts:
    """``RowCounts`` with the offer rows' cells counted on the whole ``(counts, rows)`` grid, not on
    ``layout``'s cells (``grid``: requested, supplied, and the units of each row's one-card cell;
    ``per_row``: its ``grid_cells_per_row``): for a layout that holds some rows' cells alone
    (``build_layout``'s ``rows``), the combined plans' rows among them."""
    rows = tables.offer_count
    holding = _Holding.of(layout, tables, fewest_cards)
    requested_below, supplied_below = np.zeros(rows), np.zeros(rows)
    if holding.per_cell:
        # The counts below the fewest cards (what ``_row_counts`` searches for; a row that cannot hold
        # the model at all is counted whole, whatever is below).
        requested = grid[0][:, :rows]
        supplied = requested & grid[1][:, :rows]
        below = layout.cards[:, None] < fewest_cards[:rows]
        requested_below = set_per_row(requested & below)
        supplied_below = set_per_row(supplied & below)
    counts = (per_row[0], per_row[1], requested_below, supplied_below)
    one_card = (grid[1][layout.one_card_column], grid[2])
    return _counted(layout, tables, holding, (counts, one_card), _plan_rows_cells(layout, tables))


def _plan_rows_cells(layout: Layout, tables: OfferTables) -> tuple[IntArray, IntArray]:
    """The positions of the combined plans' rows' cells, and where ``layout.plans.at`` falls among them."""
    plan_cells = layout.cells_of(np.arange(tables.offer_count, tables.size), tables)
    plan_at = (
        np.searchsorted(plan_cells, layout.plans.at)
        if layout.plans is not None
        else np.empty(0, dtype=np.int64)
    )
    return plan_cells, plan_at


@dataclass(frozen=True, slots=True)
class _Holding:
    """A memory need's fewest cards on a layout: which rows' most cards hold the model, and whether some
    row needs more cards than the smallest count (its cells are then checked one by one)."""

    fewest_cards: FloatArray
    rows: BoolArray
    per_cell: bool

    @classmethod
    def of(cls, layout: Layout, tables: OfferTables, fewest_cards: FloatArray) -> _Holding:
        return cls(
            fewest_cards=fewest_cards,
            rows=fewest_cards <= tables.max_units * tables.unit_cards,
            per_cell=bool(fewest_cards.max(initial=1.0) > layout.cards[0]),
        )


def _counted(
    layout: Layout,
    tables: OfferTables,
    holding: _Holding,
    cells: tuple[tuple[FloatArray, FloatArray, FloatArray, FloatArray], tuple[BoolArray, FloatArray]],
    plans: tuple[IntArray, IntArray],
) -> RowCounts:
    """``RowCounts`` from each offer row's requested cells, those supplied, and of each those below the
    fewest cards, and from whether each row's one-card cell is supplied and the units it rents
    (``cells``); the combined plans' rows' cells and where the plans' cells fall among them (``plans``)."""
    rows = tables.offer_count
    fewest_cards, row_holds, per_cell_memory = holding.fewest_cards, holding.rows, holding.per_cell
    holds = row_holds[:rows]
    (requested, supplied, requested_below, supplied_below), (one_card_supplied, units) = cells
    counts = np.empty((4, rows))
    counts[_REQUESTED] = requested
    counts[_UNSUPPLIED] = requested - supplied
    counts[_SHORT_OF_MEMORY] = np.where(holds, requested_below, requested)
    counts[_FITTING] = np.where(holds, supplied - supplied_below, 0.0)
    one_card_fits = one_card_supplied & row_holds
    if per_cell_memory:
        one_card_fits &= layout.cards[layout.one_card_column] >= fewest_cards
    one_card_fits &= units * tables.unit_cards <= np.maximum(tables.machine_cards, 1)
    one_card_fits[rows:] = False
    total = counts.sum(axis=1)
    return RowCounts(
        counts=frozen(counts),
        totals=(int(total[0]), int(total[1]), int(total[2]), int(total[3])),
        fitting=frozen(counts[_FITTING] > 0),
        holds=frozen(row_holds),
        fewest_cards=fewest_cards,
        per_cell_memory=per_cell_memory,
        one_card_fits=frozen(one_card_fits),
        plan_cells=frozen(plans[0]),
        plan_at=frozen(plans[1]),
    )


# Per layout, its offer rows' requested cells as keys (two arrays of 4 bytes a cell: 8 MB for the
# default layout at 96,000 offers), made with the first memory need's counts.
_REQUESTED_CELLS: MemoSlot[int, _RequestedCells] = MemoSlot("requested cells by row", size=1)
# Per layout, the row counts of the memory needs seen lately (4 floats a row: 3 MB at 100,000 rows).
_ROW_COUNTS: MemoSlot[Hashable, RowCounts] = MemoSlot("row counts", size=4, max_bytes=32 * 2**20)


@dataclass(frozen=True, slots=True)
class RowJudgement:
    """The whole table's judgement (what ``judge`` reports of every cell), and the row masks that judge
    any of its cells (``at``)."""

    excluded: Excluded
    used_stale: bool
    qualifying_count: int  # cells that qualify
    quoted: BoolArray  # (rows,) whether some cell of the row qualifies
    one_card_runnable: BoolArray  # (rows,) whether the row's one-card cell is runnable (``RowCounts``)
    counts: RowCounts
    matching: BoolArray
    fresh: BoolArray | None  # (rows,) a fresh price (None: every price is used: none stale, or fallback)

    def at(self, billed: Layout, requested: BoolArray) -> tuple[BoolArray, BoolArray]:
        """Runnable and qualifying, per cell of ``billed`` (a subset of the judged layout, every cell
        billed; ``requested``: its cells quoted, combined plans compared with their parts)."""
        offers = billed.cell_offer
        runnable = billed.supplies & self.matching.take(offers)
        runnable &= self.counts.holds_model(billed.cell_cards, offers)
        if self.fresh is not None:
            runnable &= self.fresh.take(offers)
        return runnable, runnable & requested


def _weighed(counts: FloatArray, rows: BoolArray) -> int:
    """The sum of ``counts`` over ``rows``."""
    return int(np.dot(counts, rows.astype(np.float64)))


def judged_by_row(
    layout: Layout,
    tables: OfferTables,
    masks: tuple[BoolArray, BoolArray, FloatArray],
    fewest_key: Hashable,
    plan_keep: BoolArray | None,
    counts: RowCounts | None = None,
) -> RowJudgement:
    """``judge`` of every cell of ``layout`` without a deadline or budget (module docstring).

    ``masks``: per row, matching the filters, a stale price, and the fewest cards that hold the model
    (kept by ``fewest_key``, what identifies them); ``plan_keep``: per ``layout.plans.at`` cell, whether the plan is quoted
    there (None without plans); ``counts``: the rows' counts when not ``layout``'s own (made from the
    whole grid: ``grid_row_counts``).
    """
    matching, stale, fewest_cards = masks
    if counts is None:
        counts = _ROW_COUNTS.of(layout.memos).get(
            fewest_key, lambda: _row_counts(layout, tables, fewest_cards, fewest_key)
        )
    rows = tables.offer_count
    row_matching, row_stale = matching[:rows], stale[:rows]
    # The combined plans' rows, cell by cell.
    at = counts.plan_cells
    plan_offer = layout.cell_offer.take(at)
    plan_requested = layout.requested.take(at)
    if plan_keep is not None:
        plan_requested[counts.plan_at] &= plan_keep
    plan_matching = matching.take(plan_offer)
    plan_supplies = layout.supplies.take(at)
    plan_holds = counts.holds_model(layout.cell_cards.take(at), plan_offer)
    plan_within = plan_supplies & plan_matching & plan_holds & plan_requested
    plan_stale = stale.take(plan_offer)

    any_stale = bool(stale.any())
    every_match = bool(row_matching.all())
    fitting = counts.fitting if every_match else row_matching & counts.fitting
    within_any = bool(fitting.any() or plan_within.any())
    fresh_any = not any_stale or bool((fitting & ~row_stale).any() or (plan_within & ~plan_stale).any())
    used_stale = any_stale and not fresh_any and within_any
    fresh = ~stale if any_stale and not used_stale else None

    # Offer rows: each count over the rows its reason weighs (matching or not); plan rows cell by cell.
    requested_all, unsupplied_all, short_all, _ = counts.totals
    matched = (
        (requested_all, unsupplied_all, short_all)
        if every_match
        else tuple(_weighed(counts.counts[row], row_matching) for row in range(3))
    )
    plan_matched = plan_requested & plan_matching
    stale_count = 0
    if any_stale and fresh_any:
        stale_count = _weighed(counts.counts[_REQUESTED], row_matching & row_stale)
        stale_count += int(np.count_nonzero(plan_matched & plan_stale))
    excluded = Excluded(
        filters=requested_all - matched[_REQUESTED] + int(np.count_nonzero(plan_requested & ~plan_matching)),
        capacity=matched[_UNSUPPLIED] + int(np.count_nonzero(plan_matched & ~plan_supplies)),
        memory=matched[_SHORT_OF_MEMORY] + int(np.count_nonzero(plan_matched & ~plan_holds)),
        stale=stale_count,
    )

    plan_qualifying = plan_within if fresh is None else plan_within & ~plan_stale
    quoted = np.zeros(tables.size, dtype=np.bool_)
    quoted[:rows] = fitting if fresh is None else fitting & fresh[:rows]
    quoted[plan_offer[plan_qualifying]] = True
    qualifying_count = int(np.count_nonzero(plan_qualifying))
    if every_match and fresh is None:
        qualifying_count += counts.totals[_FITTING]
    else:
        qualifying_count += _weighed(counts.counts[_FITTING], quoted[:rows])

    one_card = (
        counts.one_card_fits if every_match and bool(matching.all()) else counts.one_card_fits & matching
    )
    if fresh is not None:
        one_card = one_card & fresh
    return RowJudgement(
        excluded=excluded,
        used_stale=used_stale,
        qualifying_count=qualifying_count,
        quoted=quoted,
        one_card_runnable=one_card,
        counts=counts,
        matching=matching,
        fresh=fresh,
    )
