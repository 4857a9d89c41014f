"""Independent runs are bound-pruned on their grid of candidates and answer what the whole evaluation does.

A placed job's layout is built per request, so ``evaluate.placed`` prunes before building it: the rows'
bounds and the judgement's counts come from the ``(counts, rows)`` grid, and the layout is built for the
rows billed alone (``build_layout``'s ``rows``). Here every independent request of a seeded draw is asked
pruned (on tables of every size) and by the reference evaluation (every fast path off), as drawn and with
a vendor filter that removes the vendors its own answer returned; the parts are checked on their own too:
a layout built for some rows holds the whole layout's values at each of its cells, and the counts read
off the grid are those read off the whole layout's cells, and a sweep asked again for other hours reuses
the grid it made.
"""

from __future__ import annotations

import dataclasses
import random
from functools import cache
from typing import Any

import msgspec
import numpy as np
import pytest

from schemas.quote import QuoteRequest
from service.errors import InvalidRequest
from service.quote import FastPaths, QuoteOptions, Snapshot, build_quote
from service.quote.evaluate import evaluation, layout, placed, row_judge
from service.quote.evaluate.layout import Layout, build_layout
from service.quote.jobs import independent
from tests.quote.factories import MAX_AGE_S, NOW, count_billed_cells
from tests.quote.seeded import answers, catalog, requests

_PRUNED = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))
_REFERENCE = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths.none())
# (seed, offers, clusters, packaged vendors)
_CATALOGS = ((41, 300, 12, 6), (42, 900, 40, 2), (43, 1500, 0, 0))


@cache
def _catalog(at: int) -> Snapshot:
    seed, offers, clusters, packaged = _CATALOGS[at]
    return catalog(seed, offers, clusters=clusters, packaged_vendors=packaged)


def _independent(seed: int, snapshot: Snapshot, count: int) -> list[QuoteRequest]:
    """The independent jobs among the first seeded requests, until ``count`` of them."""
    found = []
    for request in requests(seed, 40 * count, snapshot):
        if request.workload.kind == "independent":
            found.append(request)
            if len(found) == count:
                break
    return found


def _without_returned_vendors(snapshot: Snapshot, request: QuoteRequest, seed: int) -> QuoteRequest:
    try:
        returned = {quote.vendor for quote in build_quote(snapshot, request, options=_PRUNED).quotes}
    except InvalidRequest:
        return request
    others = sorted({offer.vendor for offer in snapshot.offers} - returned)
    kept = random.Random(seed).sample(others, k=max(1, len(others) // 2)) if others else ["none-such"]
    return msgspec.structs.replace(request, vendors=kept)


@pytest.mark.parametrize("at", range(len(_CATALOGS)))
def test_placed_pruning_answers_what_the_whole_evaluation_does(
    at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = _catalog(at)
    drawn = _independent(_CATALOGS[at][0], snapshot, 120)
    asked = drawn + [_without_returned_vendors(snapshot, request, i) for i, request in enumerate(drawn)]
    outcomes = {"pruned": 0, "whole": 0}
    real = evaluation._pruned

    def counted(job: Any, rows: Any = None) -> Any:
        found = real(job, rows)
        if rows is not None:
            outcomes["pruned" if found is not None else "whole"] += 1
        return found

    monkeypatch.setattr(evaluation, "_pruned", counted)
    assert answers(snapshot, asked, _PRUNED) == answers(snapshot, asked, _REFERENCE)
    # The comparison means something only if the grid's pruning answered many of them itself.
    assert outcomes["pruned"] >= 40, outcomes


def test_a_sweep_bills_a_fraction_of_its_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = _catalog(2)
    request = msgspec.convert(
        {"workload": {"kind": "independent", "gpu_hours": 400, "runs": 64, "reference_gpu": "rtx4090"}},
        QuoteRequest,
    )
    billed = count_billed_cells(monkeypatch)
    pruned = build_quote(snapshot, request, options=_PRUNED)
    whole = build_quote(snapshot, request, options=_REFERENCE)
    assert msgspec.json.encode(pruned) == msgspec.json.encode(whole)
    assert billed[0] < billed[1] / 4


def _captured(snapshot: Snapshot, monkeypatch: pytest.MonkeyPatch) -> list[placed.PlacedRows]:
    """The grids the independent requests of a seeded draw were pruned on."""
    found: list[placed.PlacedRows] = []
    real = placed.placed_rows

    def capturing(*args: Any) -> placed.PlacedRows:
        rows = real(*args)
        found.append(rows)
        return rows

    monkeypatch.setattr(evaluation, "placed_rows", capturing)
    answers(snapshot, _independent(7, snapshot, 100), _PRUNED)
    assert len(found) >= 50
    return found


def _by_position(built: Layout) -> dict[int, tuple[Any, ...]]:
    machines = built.machines if built.machines is not None else np.zeros(built.cells.size)
    columns = (built.cell_cards, built.requested, built.units, built.supplies, machines)
    return {int(cell): tuple(column[at].item() for column in columns) for at, cell in enumerate(built.cells)}


@pytest.mark.parametrize("whole_rows", [True, False])
def test_a_layout_for_some_rows_holds_the_whole_layouts_cells(
    monkeypatch: pytest.MonkeyPatch, whole_rows: bool
) -> None:
    """Each cell of a layout built for some rows is the whole layout's cell there, value for value, and
    it holds exactly the cells it keeps (every cell of the rows kept whole, or some cells of each row),
    the combined plans' rows among them, with their products: what marking them on the whole grid
    gives, although only the kept rows' columns are worked out."""
    snapshot = _catalog(1)
    tables = snapshot.tables
    rng = np.random.default_rng(3)
    for grid in _captured(snapshot, monkeypatch)[:25]:
        whole = build_layout(tables, grid.grid.inputs, FastPaths())
        counts = len(whole.counts)
        rows = rng.random(tables.size) < rng.choice((0.001, 0.05, 0.5))
        rows[tables.offer_count :] = True
        kept_rows = np.flatnonzero(rows)
        cells = np.ones((counts, kept_rows.size), dtype=np.bool_)
        if not whole_rows:
            cells = rng.random(cells.shape) < 0.3
            cells[:, kept_rows >= tables.offer_count] = True
        some = build_layout(tables, grid.grid.inputs, FastPaths(), layout.KeptCells(kept_rows, cells))
        assert some.dense == 0 and not some.bounds_up_front
        assert np.all(np.diff(some.cells) > 0)
        whole_cells = _by_position(whole)
        some_cells = _by_position(some)
        for cell, values in some_cells.items():
            assert whole_cells[cell] == values
        # The cells kept, marked on every row's grid: those set, the one-card cell of each row with
        # one set, the products of each combined plan kept (the whole layout bills more at its dense
        # counts: every row's, read by nothing but the fastest speed-ups, of cells never quoted).
        marked = np.zeros((counts, tables.size), dtype=np.bool_)
        marked[:, kept_rows] = cells
        requested = np.array(np.broadcast_to(grid.grid.inputs.requested, (counts, tables.size)))
        needed, _ = layout._needed(tables, requested, (whole.one_card_column, None), marked)
        assert set(some_cells) == set(np.flatnonzero(needed).tolist())
        assert set(some_cells) <= set(whole_cells)


def test_the_grids_counts_are_the_whole_layouts(monkeypatch: pytest.MonkeyPatch) -> None:
    """The judgement's counts read off the grid equal those read off every cell of the whole layout."""
    snapshot = _catalog(0)
    tables = snapshot.tables
    compared = 0
    for grid in _captured(snapshot, monkeypatch):
        whole = build_layout(tables, grid.grid.inputs, FastPaths())
        for fewest in (np.ones(tables.size), np.minimum(tables.gpu_memory_gb / 20, 9.0).round()):
            fewest.flags.writeable = False
            expected = row_judge._row_counts(whole, tables, fewest)
            found = grid.row_counts(fewest)
            assert np.array_equal(found.counts, expected.counts)
            assert found.totals == expected.totals
            assert np.array_equal(found.one_card_fits, expected.one_card_fits)
            assert found.per_cell_memory == expected.per_cell_memory
            # The combined plans' rows' requested cells (judged cell by cell), as grid positions: the whole
            # layout has more at its dense counts, never quoted.
            assert np.array_equal(_requested_at(grid.layout, found), _requested_at(whole, expected))
            compared += 1
    assert compared >= 100


def _requested_at(built: Layout, counts: row_judge.RowCounts) -> np.ndarray:
    cells = counts.plan_cells
    return built.cells.take(cells[built.requested.take(cells)])


def test_a_wider_layout_holds_every_row_the_thresholds_keep(monkeypatch: pytest.MonkeyPatch) -> None:
    """``PlacedRows.holding``: the layout it builds holds every cell of the rows kept whole, and of the
    rows kept for their hours alone every cell within the hours (NaN kept), whether the narrower layout
    held them by their hours already or not at all."""
    snapshot = _catalog(1)
    tables = snapshot.tables
    rng = np.random.default_rng(9)
    checked = 0
    for rows in _captured(snapshot, monkeypatch):
        grid = rows.grid
        whole = build_layout(tables, grid.inputs, FastPaths())
        requested = np.array(np.broadcast_to(grid.inputs.requested, (len(whole.counts), tables.size)))
        needed, _ = layout._needed(tables, requested, (whole.one_card_column, grid.inputs.one_card_rows))
        offers = np.arange(tables.offer_count)
        kept = rng.choice(offers, size=3, replace=False)
        timed = np.flatnonzero(rows.timed)
        by_hours = np.unique(np.concatenate((rng.choice(offers, size=5, replace=False), timed[:4])))
        within = rows.timed_hours if timed.size else float(np.nanmedian(rows.bounds.hours[by_hours]))
        wider = rows.holding(kept, (by_hours, within))
        built = rows.layout if wider is None else wider.layout
        present = set(built.cells.tolist())
        for row in kept:
            assert set((np.flatnonzero(needed[:, row]) * tables.size + row).tolist()) <= present
        for row in by_hours:
            counts = np.flatnonzero(needed[:, row])
            speedups = grid.scaling.expected[counts, grid.scaling.code[row]]
            hours = grid.hours[0][row] / speedups
            if grid.hours[1] is not None:
                hours = hours + grid.hours[1][row]
            within_cells = counts[~(hours > within)] * tables.size + row
            assert set(within_cells.tolist()) <= present
        checked += 1
    assert checked >= 50


def _sweep(gpu_hours: float, runs: int, **workload: Any) -> QuoteRequest:
    fields = {"kind": "independent", "gpu_hours": gpu_hours, "runs": runs, "reference_gpu": "rtx4090"}
    return msgspec.convert({"workload": fields | workload}, QuoteRequest)


def test_a_sweep_asked_again_for_other_hours_makes_no_new_grid() -> None:
    """A sweep's grid (its default candidates, where each count is placed, the speed-ups its bounds take)
    depends on its runs and their cards, not on its hours: made once, and every answer still the whole
    evaluation's, whichever grid was made last."""
    snapshot = catalog(44, 1200, clusters=20, packaged_vendors=3)
    memos = snapshot.tables.memos
    grids = placed._PLACEMENTS.of(memos)
    defaults = independent._DEFAULT_CANDIDATES.of(memos)
    # (request, grids made, default candidates made)
    asked = [
        (_sweep(400, 64), 1, 1),
        (_sweep(977.5, 64), 0, 0),
        (_sweep(12, 16), 1, 1),
        (_sweep(3_100, 64), 0, 0),
        (_sweep(50, 16, cards_per_run=2), 1, 1),
        (_sweep(50, 16, cards_per_run=2, communication="heavy"), 1, 0),  # the same runs, another speed-up
        (_sweep(7, 16, cards_per_run=2), 0, 0),
    ]
    for request, new_grids, new_defaults in asked:
        made = (grids.misses, defaults.misses)
        pruned = build_quote(snapshot, request, options=_PRUNED)
        reference = build_quote(snapshot, request, options=_REFERENCE)
        assert msgspec.json.encode(pruned) == msgspec.json.encode(reference)
        assert (grids.misses - made[0], defaults.misses - made[1]) == (new_grids, new_defaults), request


def _same(values: np.ndarray, others: np.ndarray) -> bool:
    """The same values of the same type, NaN (an unknown speed-up) equal to NaN."""
    return values.dtype == others.dtype and bool(
        np.array_equal(values, others, equal_nan=values.dtype.kind == "f")
    )


def _arrays(built: Layout) -> list[np.ndarray]:
    """Every array of a layout, its plans' positions among them."""
    machines = [] if built.machines is None else [built.machines]
    plans = [] if built.plans is None else [built.plans.at, built.plans.parts_at, built.plans.offers]
    columns = [built.cells, built.cell_offer, built.cell_cards, built.requested, built.units, built.supplies]
    return [*columns, *machines, *plans]


@pytest.mark.parametrize("whole_part", [True, False])
def test_a_subset_taken_whole_is_the_subset_merged_with_the_plans_part(
    monkeypatch: pytest.MonkeyPatch, whole_part: bool
) -> None:
    """``Layout.subset_with_plans`` takes a subset whole where the plans' part is most of the layout,
    else merges the rest with that part taken once: the same cells, arrays and speed-ups either way, for
    the layouts placed jobs build for some rows and for whole layouts, at cells drawn anywhere."""
    snapshot = _catalog(1)
    tables = snapshot.tables
    rng = np.random.default_rng(5)
    built = [
        (rows.layout, rows.grid.inputs, rows.grid.scaling) for rows in _captured(snapshot, monkeypatch)[:12]
    ]
    built += [
        (build_layout(tables, inputs, FastPaths()), inputs, scaling) for _, inputs, scaling in built[:6]
    ]
    rule = object()  # a key for the gathered speed-ups alone: ``scaling`` is patched in below
    compared = 0
    for some, _, scaling in built:
        monkeypatch.setattr(Layout, "scaling", lambda self, rule, tables, scaling=scaling: scaling)
        own = np.flatnonzero(rng.random(some.cells.size) < rng.choice((0.01, 0.2)))
        monkeypatch.setattr(layout, "_PLANS_MOST", -1.0 if whole_part else 2.0)
        at, taken, speedups = some.subset_with_plans(own, rule, tables)  # type: ignore[arg-type]
        fresh = dataclasses.replace(some)  # no memos: the plans' part taken anew
        monkeypatch.setattr(layout, "_PLANS_MOST", 2.0 if whole_part else -1.0)
        other_at, other, other_speedups = fresh.subset_with_plans(own, rule, tables)  # type: ignore[arg-type]
        assert np.array_equal(at, other_at)
        assert taken.dense == other.dense == 0
        assert all(_same(a, b) for a, b in zip(_arrays(taken), _arrays(other), strict=True))
        assert _same(speedups.sparse, other_speedups.sparse)
        assert speedups.dense.shape == other_speedups.dense.shape
        compared += 1
    assert compared >= 12
