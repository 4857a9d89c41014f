"""A combined plan cell's cost is the same floats whichever cells are priced beside it.

The expected cost of every plan cell a layout needs is priced when it is billed (``price_plans``); the
low and high ones only for the cells a response reads, or every cell when a limit reads the high end
(``bound_costs``, from ``evaluate.bounds``). Each cell's arithmetic is its own, and plan pruning picks
how the cells are priced by how many combinations they list on average: here every subset of cells, at
every bound's hours, must cost what pricing them all at once costs.
"""

from __future__ import annotations

import numpy as np
import pytest

from service.quote import FastPaths, build_quote
from service.quote.base.arrays import FloatArray
from service.quote.evaluate.combined import bound_costs, price_plans
from service.quote.evaluate.layout import kept_layouts
from tests.quote.factories import options, request
from tests.quote.seeded import catalog


@pytest.mark.parametrize(("seed", "pruning"), [(3, True), (3, False), (8, True)])
def test_a_plan_cell_costs_the_same_priced_with_any_others(seed: int, pruning: bool) -> None:
    snapshot = catalog(seed, 300, clusters=10, packaged_vendors=8)
    build_quote(snapshot, request(400.0), options=options(fast_paths=FastPaths(plan_pruning=pruning)))
    plans = next(layout.plans for _, layout in kept_layouts(snapshot.tables) if layout.plans is not None)
    cells = plans.at.size
    assert cells > 50
    rng = np.random.default_rng(seed)
    # Hours from a minute to past a month, a few unknown (NaN), per bound.
    drawn = np.exp(rng.uniform(np.log(1 / 60), np.log(2_000), size=(3, cells)))
    hours: FloatArray = np.round(drawn, 3).astype(np.float64)
    hours[rng.random((3, cells)) < 0.02] = np.nan
    every = bound_costs(snapshot.tables, plans, np.arange(cells), hours)
    expected_cost = np.zeros(int(plans.parts_at.max()) + 1)
    _, alone = price_plans(snapshot.tables, plans, hours[1], expected_cost)
    np.testing.assert_array_equal(alone, every[1])
    # Small subsets often list more (or fewer) combinations per cell than the whole: priced the other way.
    for size in (*rng.integers(1, 9, size=60).tolist(), cells // 3, cells):
        at = np.sort(rng.choice(cells, size=size, replace=False))
        for rows in ((0, 2), (2,), (0, 1, 2)):
            some = bound_costs(snapshot.tables, plans, at, hours[list(rows)].take(at, axis=1))
            np.testing.assert_array_equal(some, every[list(rows)].take(at, axis=1))
    assert np.isfinite(every).mean() > 0.9
