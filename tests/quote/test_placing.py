"""Replicas and runs placed once per kind of row (``service.quote.evaluate.placing``) are placed as each
cell alone would be: the same units, placements and machines at every cell, the same answers; and a
placement that reads a per-row array its kinds are not keyed by fails rather than reading another row's.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest

from schemas.quote import QuoteRequest
from service.quote import QuoteOptions, Snapshot
from service.quote.base.arrays import ArrayT
from service.quote.evaluate import layout, placing
from service.quote.jobs import LayoutInputs, RowsAt
from service.quote.jobs.serving import serving_layout
from service.quote.model.memory import min_cards
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import answers, catalog, requests

_OPTIONS = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S)


@cache
def _snapshot() -> Snapshot:
    return catalog(41, 900, clusters=40, packaged_vendors=6)


def _placed_jobs(snapshot: Snapshot) -> list[QuoteRequest]:
    """Seeded requests whose layouts place replicas or runs."""
    drawn = requests(42, 900, snapshot)
    return [request for request in drawn if request.workload.kind in ("serving", "independent")]


def _placing_every_layout(
    monkeypatch: pytest.MonkeyPatch, pairs: str = "every"
) -> list[tuple[LayoutInputs, Any, Any]]:
    """Place every layout by kind, however small, each of its pairs (``pairs`` "every") or those its
    cells hold ("held"), and record each one's inputs, cells and result."""
    monkeypatch.setattr(placing, "_FROM_CELLS", 0 if pairs == "every" else 2**62)
    monkeypatch.setattr(placing, "_PRESENT_FROM_CELLS", 0)
    monkeypatch.setattr(placing, "_PAIR_SHARE", np.inf)
    seen: list[tuple[LayoutInputs, Any, Any]] = []
    original = placing.placed_by_kind

    def recording(tables: Any, inputs: LayoutInputs, cards: Any, cell_count: Any, at: RowsAt) -> Any:
        result = original(tables, inputs, cards, cell_count, at)
        assert result is not None
        seen.append((inputs, cards.take(cell_count), (at, result)))
        return result

    monkeypatch.setattr(layout, "placed_by_kind", recording)
    return seen


@pytest.mark.parametrize("pairs", ["every", "held"])
def test_each_cell_is_placed_as_it_would_be_alone(pairs: str, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = _snapshot()
    seen = _placing_every_layout(monkeypatch, pairs)
    answers(snapshot, _placed_jobs(snapshot), _OPTIONS)
    assert len(seen) > 20
    kinds_seen = set()
    for inputs, cell_cards, (at, by_kind) in seen:
        assert inputs.placement is not None
        alone = inputs.placement(cell_cards, at)
        for expected, got in zip(alone, by_kind, strict=True):
            assert np.array_equal(expected, got, equal_nan=True)
        kinds_seen.add(len(inputs.placement_rows))
    assert kinds_seen == {1, 3}  # runs (their cards per run) and replicas (cards, machine, hosts)


@pytest.mark.parametrize("pairs", ["every", "held"])
def test_answers_placed_by_kind_are_the_answers_placed_cell_by_cell(
    pairs: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = _snapshot()
    asked = _placed_jobs(snapshot)
    monkeypatch.setattr(placing, "_FROM_CELLS", 2**62)
    monkeypatch.setattr(placing, "_PRESENT_FROM_CELLS", 2**62)
    cell_by_cell = answers(snapshot, asked, _OPTIONS)
    seen = _placing_every_layout(monkeypatch, pairs)
    by_kind = answers(snapshot, asked, _OPTIONS)
    assert seen
    assert by_kind == cell_by_cell


def test_a_placement_reading_an_array_its_kinds_are_not_keyed_by_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    snapshot = _snapshot()
    tables = snapshot.tables
    monkeypatch.setattr(placing, "_FROM_CELLS", 0)

    def reads_the_rate(cards: Any, rows_at: RowsAt) -> Any:
        rate = rows_at(tables.unit_rate_cny_per_hour)  # not a placement column
        return rate, rate > 0, rate

    requested = np.ones((2, tables.size), dtype=np.bool_)
    inputs = LayoutInputs(counts=(1, 2), requested=requested, placement=reads_the_rate)
    cards = np.array([1.0, 2.0])
    cell_count = np.repeat(np.arange(2), tables.size)

    def at_cells(values: ArrayT) -> ArrayT:
        return np.tile(values, 2)  # type: ignore[return-value]

    with pytest.raises(ValueError, match="not keyed by"):
        placing.placed_by_kind(tables, inputs, cards, cell_count, at_cells)


def test_a_jobs_row_kinds_are_kept_by_its_read_only_arrays() -> None:
    """The kinds of a job's per-row arrays are kept by the arrays' identity (the entry keeps the arrays,
    so no other array takes their ids meanwhile), only when they are read-only: each time the kinds are
    those the arrays' values give."""
    tables = _snapshot().tables
    rng = np.random.default_rng(4)

    def arrays() -> tuple[np.ndarray, ...]:
        cards = rng.choice((1.0, 2.0, 4.0, 8.0), tables.size)
        return (cards, cards > 2)

    def fresh(job_rows: tuple[np.ndarray, ...]) -> Any:
        return placing._row_kinds(
            tables, tuple(np.array(values) for values in job_rows)
        )  # writable: not kept

    for _ in range(20):
        job_rows = arrays()
        for values in job_rows:
            values.flags.writeable = False
        kept = placing._row_kinds(tables, job_rows)
        assert placing._row_kinds(tables, job_rows) is kept
        expected = fresh(job_rows)
        assert expected is not fresh(job_rows)
        assert np.array_equal(kept.code, expected.code) and np.array_equal(kept.first, expected.first)


def _same_kinds(found: Any, expected: Any) -> bool:
    """Whether two kinds split the rows alike (their codes may number the kinds differently), and each
    kind's first row is of that kind."""
    pairs = np.unique(found.code * expected.first.size + expected.code).size
    return (
        pairs == found.first.size == expected.first.size
        and np.array_equal(found.code.take(found.first), np.arange(found.first.size))
        and np.array_equal(expected.code.take(expected.first), np.arange(expected.first.size))
    )


def _folded_kinds(tables: Any, job_rows: tuple[np.ndarray, ...]) -> Any:
    table = placing._table_kinds(tables)
    return placing._kinds(table, [placing._bits(values) for values in job_rows])


def test_kinds_from_the_columns_a_jobs_arrays_follow_are_the_arrays_kinds() -> None:
    """A replica's cards (and a run's) follow from a row's GPU memory: the kinds merged from the finer
    kinds that column makes split the rows as folding the job's arrays over every row does."""
    tables = _snapshot().tables
    for needed_gb in (None, 10.0, 30.0, 90.0, 200.0, 700.0, 5_000.0):
        fewest = np.ones(tables.size) if needed_gb is None else min_cards(needed_gb, tables.gpu_memory_gb)
        layout = serving_layout(tables, fewest)
        job_rows = (layout.replica_cards, layout.within_machine, layout.hosts)
        merged = placing._followed(tables, placing._table_kinds(tables), job_rows, ("gpu_memory_gb",))
        assert merged is not None
        assert _same_kinds(merged, _folded_kinds(tables, job_rows))
        assert _same_kinds(merged, placing._row_kinds(tables, job_rows, ("gpu_memory_gb",)))
        per_run = (layout.replica_cards,)
        assert _same_kinds(
            placing._row_kinds(tables, per_run, ("gpu_memory_gb",)), _folded_kinds(tables, per_run)
        )


def test_arrays_that_do_not_follow_the_columns_named_are_folded_row_by_row() -> None:
    """A job whose arrays differ within a kind of the named columns is not placed by those kinds: the
    check finds the difference, and the kinds are the arrays' own."""
    tables = _snapshot().tables
    rng = np.random.default_rng(9)
    fewest = min_cards(30.0, tables.gpu_memory_gb)
    cards = serving_layout(tables, fewest).replica_cards.copy()
    finer = placing._kinds(placing._table_kinds(tables), [placing._bits(tables.gpu_memory_gb)])
    # Rows that share their finer kind with the row that stands for it: changing one is a difference.
    shared = np.flatnonzero(finer.first.take(finer.code) != np.arange(tables.size))
    changed = rng.choice(shared, 3, replace=False)
    cards[changed] *= 2.0  # three rows no longer follow their GPU memory
    job_rows = (cards, cards > 2)
    assert placing._followed(tables, placing._table_kinds(tables), job_rows, ("gpu_memory_gb",)) is None
    assert _same_kinds(
        placing._row_kinds(tables, job_rows, ("gpu_memory_gb",)), _folded_kinds(tables, job_rows)
    )
