"""Independent runs' default candidates, found per group of alike rows, are the ones found row by row.

``RunPlacement`` quotes each matching row at its default runs at once (powers of two, whole machines, all
of them) and its deadline's cards; the layout builds them for rows grouped by run, machine and most
runs. The reference here walks every row on its own, as the rule reads.
"""

from __future__ import annotations

import numpy as np
import pytest

from service.quote.base.arrays import BoolArray, FloatArray, IntArray
from service.quote.jobs.base import ArrayKey
from service.quote.jobs.independent import RunPlacement, _default_runs_at_once
from service.quote.model.tables import OfferTables
from tests.quote.seeded import catalog


def _reference(
    tables: OfferTables,
    per_run: FloatArray,
    matching: BoolArray,
    runs: int | None,
    max_cards: int,
    deadline: IntArray | None,
) -> tuple[tuple[int, ...], BoolArray]:
    by_row: list[set[int]] = []
    for row in range(tables.size):
        run_cards = int(per_run[row])
        if not matching[row] or run_cards > max_cards:
            by_row.append(set())
            continue
        most = max_cards // run_cards if runs is None else min(runs, max_cards // run_cards)
        per_machine = max(int(tables.machine_cards[row]) // run_cards, 1)
        totals = {at_once * run_cards for at_once in _default_runs_at_once(per_machine, most)}
        if deadline is not None and deadline[row] > 0:
            totals.add(int(deadline[row]))
        by_row.append(totals)
    counts = tuple(sorted({1}.union(*by_row)))
    requested = np.zeros((len(counts), tables.size), dtype=np.bool_)
    for row, totals in enumerate(by_row):
        for total in totals:
            requested[counts.index(total), row] = True
    return counts, requested


def _key(array: np.ndarray) -> ArrayKey:  # type: ignore[type-arg]
    array.flags.writeable = False
    return ArrayKey(array)


@pytest.mark.parametrize("seed", [3, 11, 21])
def test_default_candidates_are_the_row_by_row_ones(seed: int) -> None:
    tables = catalog(seed, 200).tables
    rng = np.random.default_rng(seed)
    for trial in range(30):
        per_run = rng.choice([1.0, 2.0, 3.0, 4.0, 8.0, 16.0], size=tables.size)
        matching = rng.random(tables.size) < 0.7
        runs = (None, 1, 3, 7, 100)[trial % 5]
        max_cards = (512, 64, 8, 1024)[trial % 4]
        deadline = None
        if trial % 3 == 0:
            deadline = (rng.integers(0, 6, size=tables.size) * per_run).astype(np.int64)
        placement = RunPlacement(
            _key(per_run), runs, None, max_cards, _key(matching), None if deadline is None else _key(deadline)
        )
        inputs = placement.inputs(tables)
        counts, requested = _reference(tables, per_run, matching, runs, max_cards, deadline)
        assert inputs.counts == counts
        assert np.array_equal(np.broadcast_to(inputs.requested, requested.shape), requested)
