"""The part of an evaluation no job changes: the cells evaluated, what each rents, and where it is read.

A request's job (its hours, reference GPU, speed-up curve, memory minimum) changes the hours and costs;
the card counts evaluated, the candidates quoted (``requested``), the units rented at each count, the
hourly rates, whether the offer supplies those cards, and which cells a response can read depend only on
the snapshot and the counts asked for. A batch job's ``Layout`` is therefore built once per snapshot and
request shape and kept on the offer tables (``cached_layout``); with a deadline the shape includes each
row's fewest cards meeting it, which move with the job's hours, so those layouts are kept apart. A
serving job's units depend on its memory minimum, so its layout is built per request.

The cells a response can read (``needed``) are the requested ones, the one-card column (the summary's
single card: every row's, or only where a placement can supply one card, and none past the requested
ones for an answer that compares no single card: ``LayoutInputs.one_card_rows``), and, where a combined
plan is needed, the products it combines (``price_plans`` compares them). Counts up to ``dense`` (the
prefix that bills fewest cells, a cell past it weighing two of a whole row: ``_dense_rows``; every count
of a small table) are billed row by row; past it only the needed cells are billed (``sparse_*``); the
rest is never billed. The billed cells (``cells``) are kept as flat ``(counts, rows)`` positions in
ascending order, the dense counts' whole rows first, and every per-cell array of a layout and an
evaluation is laid out along them: a request's work is proportional to the cells billed, not to the
grid. The one-card column is among the dense counts wherever every row is read there; a serving job's
where few rows are (a model no single card holds, a quantized alternative) is billed cell by cell.
Combined plans are priced only at the needed cells, at their expected hours (their low and high costs
where the other cells' are billed: ``evaluate.bounds``).

Each layout also keeps the speed-ups gathered per cell for the speed-up curves seen lately
(``Layout.gathered``): a request then divides its one-card hours by them in one pass.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np

from service.quote.base.arrays import ArrayT, BoolArray, FloatArray, IntArray, frozen
from service.quote.base.memo import Memos, MemoSlot
from service.quote.base.paths import FastPaths
from service.quote.evaluate.combined import PricedPlans, plan_cells
from service.quote.evaluate.placing import placed_by_kind
from service.quote.jobs import Candidates, LayoutInputs, SpeedupRule
from service.quote.model.scaling import ScalingColumns
from service.quote.model.tables import OfferTables

__all__ = [
    "GatheredSpeedups",
    "KeptCells",
    "Layout",
    "LowSpeedups",
    "build_layout",
    "cached_layout",
    "kept_layouts",
]


# A cell billed on its own costs ``1 / _SPARSE_SHARE`` of one billed in a whole row (``_dense_rows``).
_SPARSE_SHARE = 0.5
_DENSE_CELLS = 1024  # a (counts, rows) table of at most this many cells is billed whole
# Past this share of a layout's cells, ``cells_of`` finds them by a mask over every cell, not a sort.
_CELLS_BY_MASK = 1 / 32
# Past this share of a layout's cells in its plans' part, ``subset_with_plans`` takes its subsets whole.
_PLANS_MOST = 0.5
# The fast paths a layout is built by (``build_layout`` reads no other): sparse billing, plan pruning.
_LayoutPaths = tuple[bool, bool]
# Candidates whose layout is kept per snapshot; those that depend on the job's own figures (a deadline's
# fewest cards, a replica's cards) are kept apart, so their many shapes never push the shared ones out.
# Each is bounded in bytes too: a layout of 100,000 offers holds 40 to 100 MB with what is kept on it, so a
# large catalog keeps a few layouts and a small one all sixteen. A job's layouts are seldom asked for
# again (of 110 job layouts 400 varied requests at 96,000 offers asked for, 105 were made anew): a large
# catalog keeps the newest few (a serving layout at 96,000 offers is 5 to 8 MB; 16 MB of them kept, not
# 48, left 200 varied requests there as fast and the process 35 MB smaller once trimmed).
_MB = 2**20
_LAYOUTS: MemoSlot[tuple[Candidates, _LayoutPaths], Layout] = MemoSlot(
    "layouts", size=16, max_bytes=192 * _MB
)
_JOB_LAYOUTS: MemoSlot[tuple[Candidates, _LayoutPaths], Layout] = MemoSlot(
    "job layouts", size=16, max_bytes=16 * _MB
)
# Speed-up rules whose gathered speed-ups are kept per layout.
_SPEEDUPS: MemoSlot[SpeedupRule, GatheredSpeedups] = MemoSlot(
    "gathered speed-ups", size=8, max_bytes=64 * _MB
)
# Each rule's speed-ups at the layout's counts, per column (a rule of split models makes its columns anew).
_COLUMNS: MemoSlot[SpeedupRule, ScalingColumns] = MemoSlot("speed-up columns", size=8)
# The low speed-ups gathered per cell, for the rules whose requests read every cell's high end.
_LOW_SPEEDUPS: MemoSlot[SpeedupRule, LowSpeedups] = MemoSlot("low speed-ups", size=2, max_bytes=32 * _MB)
# The billing rows of a layout whose every cell's figures are worked out (19 MB at 96,000 offers).
_BILLING_ROWS: MemoSlot[int, BillingRows] = MemoSlot("billing rows", size=1)


@dataclass(frozen=True, slots=True)
class GatheredSpeedups:
    """One curve's expected speed-up per cell; the high and low ones are gathered for the returned quotes
    alone (``bounds.bounds_at``), unless the layout bills the bounds up front (``every_bound``)."""

    scaling: ScalingColumns
    dense: FloatArray  # (dense counts, rows)
    sparse: FloatArray  # (sparse cells,)
    every_bound: FloatArray | None  # (3, counts, rows): high / expected / low, where ``bounds_up_front``


@dataclass(frozen=True, slots=True)
class BillingRows:
    """What billing a layout's every cell reads of the tables, laid out per cell (``Layout.billing_rows``)."""

    hourly_rate: FloatArray  # (cells,) CNY per hour: the units times the row's unit rate
    granularity_hours: FloatArray  # (cells past the dense counts,)
    min_billed_hours: FloatArray  # (cells past the dense counts,)


@dataclass(frozen=True, slots=True)
class LowSpeedups:
    """One curve's low speed-up per cell, as ``GatheredSpeedups`` lays the expected ones out: what every
    cell's high end divides by, when a limit reads it (``bounds.high_everywhere``)."""

    dense: FloatArray  # (dense counts, rows)
    sparse: FloatArray  # (sparse cells,)


@dataclass(frozen=True, slots=True)
class Layout:
    """The job-independent arrays of one evaluation, per billed cell unless said; read-only."""

    counts: tuple[int, ...]
    cards: FloatArray  # (counts,)
    one_card_column: int
    cells: IntArray  # (cells,) flat positions of the billed cells, ascending
    cell_offer: IntArray  # (cells,) their rows
    cell_cards: FloatArray  # (cells,) their card counts
    requested: BoolArray  # (cells,) quoted, before combined plans are compared with their parts
    # (cells,) units rented (their hourly rate, the units times the row's unit rate, is multiplied when
    # billed: ``figures.bill``)
    units: FloatArray
    supplies: BoolArray  # (cells,) the offer supplies exactly these cards, within its limits and stock
    dense: int  # counts billed row by row: their whole rows are the first ``dense × rows`` cells
    # Every count dense and few cells: the low and high bounds are billed with the expected one, where
    # the numpy calls of billing them for the returned quotes alone cost more than the cells they skip.
    bounds_up_front: bool
    plans: PricedPlans | None  # the combined plans' needed cells; None without plans
    machines: FloatArray | None  # (cells,) the machines a placement takes; None: one rental each
    memos: Memos = field(default_factory=Memos, init=False, compare=False, repr=False)

    def scaling(self, rule: SpeedupRule, tables: OfferTables) -> ScalingColumns:
        """The speed-ups ``rule`` gives at the layout's counts, per column (``tables``: the layout's)."""
        return _COLUMNS.of(self.memos).get(rule, lambda: rule.columns(tables, self.counts))

    def gathered(self, rule: SpeedupRule, tables: OfferTables) -> GatheredSpeedups:
        """The speed-ups ``rule`` gives (``tables``: the layout's) gathered per cell, for billing every
        cell: a pruned evaluation reads them at its few cells from ``scaling`` instead."""
        return _SPEEDUPS.of(self.memos).get(rule, lambda: self._gather(self.scaling(rule, tables)))

    def expected_speedups(self, scaling: ScalingColumns, positions: IntArray | None = None) -> FloatArray:
        """The expected speed-ups of ``scaling`` at the cells at ``positions`` (None: every cell), as
        ``gathered`` lays them out, looked up in its table without keeping them."""
        rows = scaling.code.size
        if positions is None:
            dense, sparse = self._per_cell(scaling.expected, scaling)
            return np.concatenate((dense.reshape(-1), sparse))
        offers = self.cell_offer.take(positions)
        found: FloatArray = scaling.expected.take(scaling.at(self.cells.take(positions) // rows, offers))
        return found

    def low_speedups(self, rule: SpeedupRule | None, speedups: GatheredSpeedups) -> LowSpeedups:
        """The low speed-ups of the curve whose expected ones are ``speedups`` (on this layout), per cell:
        made when a request's limit reads every cell's high end, and kept by ``rule`` (None: not kept,
        for a layout billed once)."""
        scaling = speedups.scaling
        if rule is None:
            return LowSpeedups(*self._per_cell(scaling.low, scaling))
        return _LOW_SPEEDUPS.of(self.memos).get(
            rule, lambda: LowSpeedups(*self._per_cell(scaling.low, scaling))
        )

    def _per_cell(self, table: FloatArray, scaling: ScalingColumns) -> tuple[FloatArray, FloatArray]:
        """A (counts, columns) speed-up ``table`` per cell: the dense counts' whole rows, then the other
        cells one by one (their count column and row's column: a rule's columns place each row)."""
        rows = scaling.code.size
        head = self.dense * rows
        bits = table.view(np.int64)
        if bits.size and bool((bits == bits.flat[0]).all()):
            # One speed-up at every count of every column (a serving job's 1): the same float at every
            # cell, a view of it rather than a gather (and no bytes kept per cell).
            one: FloatArray = table.reshape(-1)[:1]
            return np.broadcast_to(one, (self.dense, rows)), np.broadcast_to(one, (self.cells.size - head,))
        sparse_at = scaling.at(self.cells[head:] // rows, self.cell_offer[head:])
        # No dense count (a subset's cells, each billed on its own): nothing to read every row's column of.
        dense = np.take(table[: self.dense], scaling.code, axis=1) if self.dense else np.empty((0, rows))
        return frozen(dense), frozen(table.take(sparse_at))

    def _gather(self, scaling: ScalingColumns) -> GatheredSpeedups:
        dense, sparse = self._per_cell(scaling.expected, scaling)
        return GatheredSpeedups(
            scaling=scaling,
            dense=dense,
            sparse=sparse,
            every_bound=frozen(
                np.take(np.stack((scaling.high, scaling.expected, scaling.low)), scaling.code, axis=2)
            )
            if self.bounds_up_front
            else None,
        )

    def billing_rows(self, tables: OfferTables) -> BillingRows:
        """Each billed cell's hourly rate (its units at its row's unit rate), and its row's granule and
        minimum billed at the cells past the dense counts: what billing every cell reads whatever the
        job, made once (a deadline or budget most rows meet works out every cell's figures per request)."""
        return _BILLING_ROWS.of(self.memos).get(0, lambda: self._billing_rows(tables))

    def _billing_rows(self, tables: OfferTables) -> BillingRows:
        offers = self.cell_offer[self.dense * tables.size :]
        return BillingRows(
            hourly_rate=frozen(self.units * self.at_cells(tables.unit_rate_cny_per_hour)),
            granularity_hours=frozen(tables.granularity_hours.take(offers)),
            min_billed_hours=frozen(tables.min_billed_hours.take(offers)),
        )

    def at_cells(self, values: ArrayT) -> ArrayT:
        """Per-row ``values`` at each billed cell: the dense counts' whole rows broadcast, then the
        other cells' rows gathered (the same values ``values.take(cell_offer)`` gives, without reading
        an index per dense cell)."""
        return _rows_at_cells(values, self.dense, self.cell_offer[self.dense * values.shape[0] :])

    def rows_with(self, cells: BoolArray, rows: int) -> BoolArray:
        """Per row (of ``rows``), whether any of its cells is set in ``cells``: the dense counts a pass
        each (faster than reducing across them), the other cells from their few set positions."""
        head = self.dense * rows
        found = np.zeros(rows, dtype=np.bool_)
        for count in range(self.dense):
            found |= cells[count * rows : (count + 1) * rows]
        found[self.cell_offer.take(head + np.flatnonzero(cells[head:]))] = True
        return found

    def rows_order(self, tables: OfferTables) -> tuple[IntArray, IntArray]:
        """The positions of ``cells`` ordered by their row (each row's ascending), and where each row's
        start in that order (``tables``: the layout's); made once."""
        return _ROW_CELLS.of(self.memos).get(0, lambda: _by_row(self.cell_offer, tables.size))

    def cell_count(self, rows: IntArray, tables: OfferTables) -> int:
        """How many of ``cells`` are cells of offers ``rows`` (each once)."""
        _, starts = self.rows_order(tables)
        return int((starts[rows + 1] - starts[rows]).sum())

    def cells_of(self, rows: IntArray, tables: OfferTables) -> IntArray:
        """Positions (ascending) among ``cells`` of every cell of offers ``rows``."""
        order, starts = self.rows_order(tables)
        lengths = starts[rows + 1] - starts[rows]
        total = int(lengths.sum())
        if total > _CELLS_BY_MASK * self.cells.size:
            # Many cells: one pass over every cell's row costs less than sorting theirs.
            wanted = np.zeros(tables.size, dtype=np.bool_)
            wanted[rows] = True
            return np.flatnonzero(self.at_cells(wanted))
        ends = np.cumsum(lengths)
        at = np.arange(total) + np.repeat(starts[rows] - (ends - lengths), lengths)
        positions: IntArray = np.sort(order[at])
        return positions

    def one_card_cells(self, rows: IntArray, tables: OfferTables) -> IntArray:
        """Positions (ascending, as ``rows`` is) among ``cells`` of the one-card cells of offers ``rows``,
        on a layout that bills the one-card column whole (a dense count: its cells are the grid's own
        positions, every row's)."""
        if self.dense <= self.one_card_column:
            raise ValueError("the one-card column is not billed whole on this layout")
        positions: IntArray = rows + self.one_card_column * tables.size
        return positions

    def cells_by_row(self, rows: IntArray, tables: OfferTables) -> tuple[IntArray, IntArray]:
        """Positions among ``cells`` of every cell of offers ``rows``, row by row (each row's ascending),
        and how many each row has."""
        order, starts = self.rows_order(tables)
        lengths = starts[rows + 1] - starts[rows]
        ends = np.cumsum(lengths)
        at = np.arange(int(ends[-1]) if ends.size else 0) + np.repeat(
            starts[rows] - (ends - lengths), lengths
        )
        grouped: IntArray = order[at]
        return grouped, lengths

    def plan_cells(self, tables: OfferTables) -> IntArray:
        """Positions (ascending) of every combined plan's cells and of the cells of the products each
        combines at its counts: what pricing the plans reads."""
        if self.plans is None:
            return np.empty(0, dtype=np.int64)
        return _PLAN_CELLS.of(self.memos).get(0, lambda: self._plan_cells(tables))

    def _plan_cells(self, tables: OfferTables) -> IntArray:
        assert self.plans is not None
        plan_rows = np.arange(tables.offer_count, tables.size)
        parts = self.plans.parts_at.ravel()
        if parts.size and parts.min() < 0:
            raise ValueError("a combined plan's part is not among the layout's cells")
        # Marked and read back in order: ascending and once each, without sorting them.
        marked = np.zeros(self.cells.size, dtype=np.bool_)
        marked[self.cells_of(plan_rows, tables)] = True
        marked[parts] = True
        return frozen(np.flatnonzero(marked))

    def subset(self, at: IntArray, *, with_plans: bool = True) -> Layout:
        """The layout of this one's cells at positions ``at`` (ascending), every one billed cell by cell;
        the combined plans' cells and the products they combine must be among them (``with_plans``
        False: none of them, and the subset has no plans)."""
        # ``take`` rather than indexing: a third of the time on these arrays of a million cells.
        cells, cell_offer = self.cells.take(at), self.cell_offer.take(at)
        plans = self.plans if with_plans else None
        if plans is not None:
            plans = replace(
                plans,
                at=np.searchsorted(cells, self.cells.take(plans.at)),
                parts_at=np.searchsorted(cells, self.cells.take(plans.parts_at)),
            )
        return Layout(
            counts=self.counts,
            cards=self.cards,
            one_card_column=self.one_card_column,
            cells=cells,
            cell_offer=cell_offer,
            cell_cards=self.cell_cards.take(at),
            requested=self.requested.take(at),
            units=self.units.take(at),
            supplies=self.supplies.take(at),
            dense=0,
            bounds_up_front=False,
            plans=plans,
            machines=None if self.machines is None else self.machines.take(at),
        )

    def subset_with_plans(
        self, own: IntArray, rule: SpeedupRule, tables: OfferTables
    ) -> tuple[IntArray, Layout, GatheredSpeedups]:
        """The positions (ascending) of the cells at ``own`` and of every combined plan's cells with the
        products they combine (``plan_cells``), their ``subset`` and its speed-ups under ``rule``: the
        plans' part, the same for every request of the layout, is found once (its positions, which of the
        layout's cells they are, and its plans), the request's cells merged with it by position, and each
        array taken at the merged positions at once, the speed-ups read off the layout's own where they are
        kept (``_gathered_at``: 263,000 cells at 96,000 offers took 7.6-8.1 ms taken apart and merged, 5.0-6.4
        ms so); where that part is most of the layout, the subset is taken whole (the same arrays)."""
        forced_cells = self.plan_cells(tables)
        if forced_cells.size > _PLANS_MOST * self.cells.size:
            # The plans' part is most of the layout (one built for some rows, ``evaluate.placed``, and
            # billed once or twice): taking the subset whole costs less than taking that part apart.
            marked = np.zeros(self.cells.size, dtype=np.bool_)
            marked[own] = True
            marked[forced_cells] = True
            at = np.flatnonzero(marked)
            whole = self.subset(at)
            return at, whole, whole._gather(self.scaling(rule, tables))
        part = _PLAN_PART.of(self.memos).get(0, lambda: self._plan_part(tables))
        if part is None:
            own_layout = self.subset(own)
            return own, own_layout, own_layout._gather(self.scaling(rule, tables))
        forced = part.at
        extra = own[~part.marked.take(own)]
        if extra.size == 0:
            return forced, part.layout, part.layout.gathered(rule, tables)
        # The two ascending runs merged: the part's (a few thousand) found among the request's, the
        # request's in the places left (in order, by a mask), rather than joined and sorted. Every array
        # is then taken at the merged positions at once (the part's cells are the layout's own there).
        forced_rank = np.arange(forced.size) + np.searchsorted(extra, forced)
        left = np.ones(extra.size + forced.size, dtype=np.bool_)
        left[forced_rank] = False
        at = np.empty(left.size, dtype=np.int64)
        at[left] = extra
        at[forced_rank] = forced
        plans = part.layout.plans
        assert plans is not None
        layout = replace(
            self.subset(at, with_plans=False),
            plans=replace(plans, at=forced_rank.take(plans.at), parts_at=forced_rank.take(plans.parts_at)),
        )
        return at, layout, self._gathered_at(at, layout, rule, tables)

    def _gathered_at(
        self, at: IntArray, subset: Layout, rule: SpeedupRule, tables: OfferTables
    ) -> GatheredSpeedups:
        """``subset``'s speed-ups under ``rule`` (``subset``: this layout's cells at positions ``at``,
        ascending): read off this layout's own where they are kept (the same floats, one read a cell),
        else gathered from the rule's table."""
        whole = _SPEEDUPS.of(self.memos).lookup(rule)
        if whole is None or whole.every_bound is not None:
            return subset._gather(self.scaling(rule, tables))
        head = self.dense * tables.size
        split = int(np.searchsorted(at, head))
        sparse = np.empty(at.size)
        whole.dense.reshape(-1).take(at[:split], out=sparse[:split])
        whole.sparse.take(at[split:] - head, out=sparse[split:])
        return GatheredSpeedups(
            scaling=whole.scaling, dense=np.empty((0, tables.size)), sparse=sparse, every_bound=None
        )

    def subset_alone(
        self, own: IntArray, rule: SpeedupRule, tables: OfferTables
    ) -> tuple[Layout, GatheredSpeedups]:
        """The ``subset`` of the cells at ``own`` (ascending, none a combined plan's) without the plans,
        and its speed-ups under ``rule``: a few offers' cells billed alone."""
        layout = self.subset(own, with_plans=False)
        return layout, layout._gather(self.scaling(rule, tables))

    def _plan_part(self, tables: OfferTables) -> _PlanPart | None:
        if self.plans is None:
            return None
        at = self.plan_cells(tables)
        marked = np.zeros(self.cells.size, dtype=np.bool_)
        marked[at] = True
        return _PlanPart(at=at, layout=self.subset(at), marked=frozen(marked))


def _by_row(cell_offer: IntArray, rows: int) -> tuple[IntArray, IntArray]:
    """The cells ordered by their row (stably), and where each row's cells start in that order."""
    order = frozen(np.argsort(cell_offer, kind="stable"))
    starts = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(cell_offer, minlength=rows), out=starts[1:])
    return order, frozen(starts)


# Each layout's cells grouped by row, for the rows a pruned evaluation bills (``Layout.cells_of``).
_ROW_CELLS: MemoSlot[int, tuple[IntArray, IntArray]] = MemoSlot("cells by row", size=1)
_PLAN_CELLS: MemoSlot[int, IntArray] = MemoSlot("plan cells", size=1)


@dataclass(frozen=True, slots=True)
class _PlanPart:
    """A layout's combined plans' cells with the products they combine: their positions among its cells
    (``Layout.plan_cells``) and their ``subset``."""

    at: IntArray
    layout: Layout
    # (cells,) whether each of the layout's cells is among ``at``: which of a request's cells to take apart
    # from the part is read here, not searched for among ``at`` (half the time, at 96,000 offers)
    marked: BoolArray


# Each layout's plans' part, which every pruned evaluation of it bills (``Layout.subset_with_plans``).
_PLAN_PART: MemoSlot[int, _PlanPart | None] = MemoSlot("plans' part", size=1)


class _AtCells(Protocol):
    """Per-row values read at every billed cell of a layout being built (``_rows_at_cells``)."""

    def __call__(self, values: ArrayT) -> ArrayT: ...


def _supplies(units: FloatArray, cards: FloatArray, tables: OfferTables, at: _AtCells) -> BoolArray:
    """Whether renting ``units`` gives exactly the ``cards`` asked for, within the offer's limits and
    stock (per cell: ``at`` reads each row's figure at every cell)."""
    billed_cards = units * at(tables.unit_cards)
    supplies = (units <= at(tables.max_units)) & (billed_cards <= at(tables.available_cards))
    if tables.whole_units_only.any():
        # A bundle supplies exactly n cards only when n is a whole number of bundles.
        supplies &= ~at(tables.whole_units_only) | (billed_cards == cards)
    return supplies


def _rows_at_cells(values: ArrayT, dense: int, sparse_offer: IntArray) -> ArrayT:
    """Per-row ``values`` at each billed cell: the ``dense`` counts' whole rows repeated, then the other
    cells' rows (``sparse_offer``) gathered: what ``values.take(cell_offer)`` gives, without reading an
    index per dense cell."""
    head = dense * values.shape[0]
    out = np.empty(head + sparse_offer.size, dtype=values.dtype)
    out[:head].reshape(dense, values.shape[0])[:] = values
    out[head:] = values.take(sparse_offer)
    return out  # type: ignore[return-value]


def _needed(
    tables: OfferTables,
    requested: BoolArray,
    one_card: tuple[int, BoolArray | None],
    rows: BoolArray | None = None,
    columns: IntArray | None = None,
) -> tuple[BoolArray, tuple[IntArray, IntArray]]:
    """The cells a response can read (see the module docstring); no other plan cell is priced.
    ``one_card``: the one-card column, and the rows whose one-card cell can be the single card
    (``LayoutInputs.one_card_rows``; None: every row's). With ``rows`` (per row or per cell): those it
    sets alone, and the products their combined plans combine. ``columns``: the rows ``requested`` and
    ``rows`` hold (ascending, the combined plans' last and every product they combine among them:
    ``_kept_cells``); None: every row. Also each needed plan cell's count column and plan, as the plans'
    columns' ``np.nonzero`` gives them."""
    one_card_column, one_card_rows = one_card
    if rows is None:
        needed = requested.copy()
        if one_card_rows is None:
            needed[one_card_column] = True
        else:
            needed[one_card_column] |= one_card_rows
    else:
        needed = requested & rows
        needed[one_card_column] |= rows if rows.ndim == 1 else rows[one_card_column]
    plans = tables.size - tables.offer_count
    count_at, plan_at = np.nonzero(needed[:, needed.shape[1] - plans :])
    if plans:
        part_rows = tables.plan_arrays.part_rows
        if columns is not None:  # where each part's row is among the columns
            part_rows = np.searchsorted(columns, part_rows)
        needed[count_at[:, None], part_rows[plan_at]] = True
    return needed, (count_at, plan_at)


def _always_kept(tables: OfferTables) -> IntArray:
    """The combined plans' rows and every product they combine: the rows ``_kept_cells`` keeps whatever
    else it keeps (ascending)."""

    def make() -> IntArray:
        kept = np.zeros(tables.size, dtype=np.bool_)
        kept[tables.plan_arrays.part_rows] = True
        kept[tables.offer_count :] = True
        return frozen(np.flatnonzero(kept))

    return _ALWAYS_KEPT.of(tables.memos).get(0, make)


_ALWAYS_KEPT: MemoSlot[int, IntArray] = MemoSlot("rows of the plans and their parts", size=1)


@dataclass(frozen=True, slots=True)
class _Cells:
    """The billed cells of a layout being built: flat ``(counts, rows)`` positions (ascending), their
    count columns and rows, whether each is requested, and each needed plan cell's count and plan."""

    cells: IntArray
    cell_count: IntArray
    cell_offer: IntArray
    requested: BoolArray
    plan_cells: tuple[IntArray, IntArray]


@dataclass(frozen=True, slots=True)
class KeptCells:
    """The cells a layout built for some rows keeps (``build_layout``): ``rows`` (ascending), and per
    count which of their cells (``(counts, len(rows))``); every combined plan's row among them."""

    rows: IntArray
    cells: BoolArray


def _kept_cells(tables: OfferTables, requested: BoolArray, one_card_column: int, kept: KeptCells) -> _Cells:
    """The cells ``kept`` keeps, with the products their combined plans combine (``build_layout``),
    worked out over the columns of its rows and of the plans' parts alone: the same cells in the same
    order as over every column, no other column holding one."""
    columns = np.union1d(kept.rows, _always_kept(tables))
    rows = np.zeros((kept.cells.shape[0], columns.size), dtype=np.bool_)
    rows[:, np.searchsorted(columns, kept.rows)] = kept.cells
    requested_kept = requested[:, columns]
    needed, plan_cells = _needed(tables, requested_kept, (one_card_column, None), rows, columns)
    flat = np.flatnonzero(needed)
    cell_count, at = np.divmod(flat, columns.size)
    cell_offer = columns.take(at)
    return _Cells(
        cells=cell_count * tables.size + cell_offer,
        cell_count=cell_count,
        cell_offer=cell_offer,
        requested=requested_kept.reshape(-1).take(flat),
        plan_cells=plan_cells,
    )


def _dense_rows(needed: BoolArray, sparse_billing: bool) -> int:
    """How many leading counts are billed whole: the prefix that bills least, a count's whole row costing
    its cells and a needed cell past the prefix ``1 / _SPARSE_SHARE`` of them (a count is in the prefix
    when at least that share of its rows is needed, or a later count's is: many runs at once, say, all
    rows' last count); the one-card column (the first count) whenever all of it is needed (it then
    always bills least whole); every count of a small table (where the numpy calls of billing cell by
    cell cost more than the cells they skip); every count without ``sparse_billing``."""
    counts, rows = needed.shape
    if not sparse_billing or needed.size <= _DENSE_CELLS:
        return int(counts)
    per_count = np.count_nonzero(needed, axis=1)
    after = np.zeros(counts + 1)
    after[:-1] = np.cumsum(per_count[::-1])[::-1]  # needed cells at each count and past it
    cost = np.arange(counts + 1) * float(rows) + after / _SPARSE_SHARE
    return int(np.argmin(cost))


def _rentals(
    tables: OfferTables,
    inputs: LayoutInputs,
    by_count: tuple[FloatArray, IntArray],
    cell_cards: FloatArray,
    at: _AtCells,
) -> tuple[FloatArray, BoolArray, FloatArray | None]:
    """Per billed cell (``by_count``: the counts' cards and each cell's count, ``cell_cards`` its cards):
    the units rented, whether the offer supplies them, and the machines a placement takes (None: one
    rental each): the placement's (once per kind of row where that costs less: ``placing``), else one
    rental's (``_supplies``)."""
    if inputs.placement is not None:
        cards, cell_count = by_count
        by_kind = placed_by_kind(tables, inputs, cards, cell_count, at)
        return by_kind if by_kind is not None else inputs.placement(cell_cards, at)
    units = np.maximum(at(tables.min_units), np.ceil(cell_cards / at(tables.unit_cards)))
    return units, _supplies(units, cell_cards, tables, at), None


def build_layout(
    tables: OfferTables, inputs: LayoutInputs, fast: FastPaths, rows: KeptCells | None = None
) -> Layout:
    """The layout of ``inputs.counts`` with ``inputs.requested`` (broadcast to ``(counts, rows)``).

    ``placement``, when given, replaces the one-rental units and capacity check at the billed cells (a
    serving job's replicas or independent runs placed over several machines: ``jobs.serving``,
    ``jobs.independent``).

    ``rows``, when given, keeps the cells it sets alone (``KeptCells``: some rows' cells, every combined
    plan's row among them), with the products the plans combine, as ``_needed`` adds them, each billed
    cell by cell (no dense count: the other rows' one-card cells are left out too):
    each cell kept holds what the whole layout holds there (``evaluate.placed`` judges the other rows'
    cells without them).
    """
    counts = inputs.counts
    cards = np.array(counts, dtype=np.float64)
    shape = (cards.size, tables.size)
    one_card_column = counts.index(1)
    if rows is None:
        requested = np.array(np.broadcast_to(inputs.requested, shape))
        needed, needed_plans = _needed(tables, requested, (one_card_column, inputs.one_card_rows))
        dense = _dense_rows(needed, fast.sparse_billing)
        cells = np.concatenate(
            (np.arange(dense * tables.size), np.flatnonzero(needed[dense:]) + dense * tables.size)
        )
        cell_count, cell_offer = np.divmod(cells, tables.size)
        kept = _Cells(cells, cell_count, cell_offer, requested.reshape(-1).take(cells), needed_plans)
    else:
        kept, dense = _kept_cells(tables, np.broadcast_to(inputs.requested, shape), one_card_column, rows), 0
    sparse = slice(dense * tables.size, None)
    # Only the billed cells are worked out: the grid's other cells are never read.
    at = functools.partial(_rows_at_cells, dense=dense, sparse_offer=kept.cell_offer[sparse])
    cell_cards = cards.take(kept.cell_count)
    units, supplies, machines = _rentals(tables, inputs, (cards, kept.cell_count), cell_cards, at)
    return Layout(
        counts=counts,
        cards=frozen(cards),
        one_card_column=one_card_column,
        cells=frozen(kept.cells),
        cell_offer=frozen(kept.cell_offer),
        cell_cards=frozen(cell_cards),
        requested=frozen(kept.requested),
        units=frozen(units),
        supplies=frozen(supplies),
        dense=dense,
        bounds_up_front=rows is None
        and (not fast.sparse_billing or (dense == cards.size and kept.cells.size <= _DENSE_CELLS)),
        plans=plan_cells(
            tables,
            kept.plan_cells,
            cards,
            kept.cells,
            dense_cells=dense * tables.size,
            pruning=fast.plan_pruning,
        )
        if tables.plans
        else None,
        machines=None if machines is None else frozen(machines),
    )


def cached_layout(
    tables: OfferTables, candidates: Candidates, fast: FastPaths, inputs: LayoutInputs | None = None
) -> Layout:
    """The layout of ``candidates`` on ``tables``, built the first time they are asked for (from
    ``inputs``, their inputs, when the caller has them already)."""
    kept = _LAYOUTS if candidates.shared else _JOB_LAYOUTS
    # Kept by the fast paths it is built by alone: an evaluation with every row billed (what the nearest
    # options past a limit read) shares the pruned evaluations' layout.
    paths = (fast.sparse_billing, fast.plan_pruning)
    return kept.of(tables.memos).get(
        (candidates, paths),
        lambda: build_layout(tables, candidates.inputs(tables) if inputs is None else inputs, fast),
    )


def kept_layouts(tables: OfferTables) -> list[tuple[Candidates, Layout]]:
    """The layouts kept on ``tables``, shared ones first, each with the candidates it was built for."""
    return [
        (candidates, layout)
        for kept in (_LAYOUTS, _JOB_LAYOUTS)
        for (candidates, _), layout in kept.of(tables.memos).items()
    ]
