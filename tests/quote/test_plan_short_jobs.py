"""A combined plan's cost for a job shorter than its plan's second combination covers.

Such a job prices one combination per cell: the first (no package but the best's), beside the
cheapest one covering every hour. ``plan_costs`` then prices it from each cell's first combination,
laid out once (``PlanCells.first_pairs``), without searching the plans' combinations: here it must
give the floats the search gives, at hours from a second to the next combination's, and unknown
ones, whichever way each cell is priced; and just past the next combination's, the search prices them.
"""

from __future__ import annotations

import numpy as np
import pytest

from service.quote import build_quote
from service.quote.base.arrays import FloatArray, IntArray
from service.quote.evaluate.combined import PricedPlans
from service.quote.evaluate.layout import kept_layouts
from service.quote.evaluate.plan_costs import cell_terms, plan_costs
from service.quote.model.plans import PlanArrays
from tests.quote.factories import options, request
from tests.quote.seeded import catalog

# A job this long needs a plan's later combinations: a cell priced for it makes the search price all.
_LONG_HOURS = 50_000.0


@pytest.mark.parametrize("seed", [3, 8, 21])
def test_a_short_job_costs_what_the_search_prices(seed: int) -> None:
    snapshot = catalog(seed, 300, clusters=10, packaged_vendors=8)
    build_quote(snapshot, request(400.0), options=options())
    plans = next(layout.plans for _, layout in kept_layouts(snapshot.tables) if layout.plans is not None)
    arrays, cells = snapshot.tables.plan_arrays, plans.terms
    firsts = cells.first_pairs
    assert cells.expanded is None  # priced by the search, not combination by combination
    finite = np.isfinite(firsts.next_hours)
    assert finite.mean() > 0.5  # most plans list a second combination: the bound is read
    rng = np.random.default_rng(seed)
    # Whole hours from 1 (the first combination covers none) to the next one's, each less up to a
    # whole hour (a job's hours round up to them), some exactly the next one's, and a few unknown.
    top = np.where(finite, firsts.next_hours, 2_000.0)
    whole = np.floor(rng.uniform(1, top + 1))
    hours: FloatArray = whole - rng.choice([0.0, 1e-9, 0.25, 0.999], size=whole.size)
    hours[:10] = top[:10]
    hours[rng.random(hours.size) < 0.03] = np.nan
    short = plan_costs(arrays, cells, hours)
    long_cell = int(np.flatnonzero(finite)[0])
    np.testing.assert_array_equal(short, _searched(arrays, plans, np.arange(hours.size), hours, long_cell))
    assert np.isfinite(short).mean() > 0.9
    # Just past the next combination's hours (two candidates per cell).
    past = np.flatnonzero(finite)
    past_hours = firsts.next_hours[past] + 0.5
    np.testing.assert_array_equal(
        plan_costs(arrays, cell_terms(arrays, plans.slots[past], plans.cards[past]), past_hours),
        _searched(arrays, plans, past, past_hours, long_cell),
    )
    # Each cell by itself costs the same.
    for at in rng.choice(hours.size, size=40, replace=False).tolist():
        alone = cell_terms(arrays, plans.slots[at : at + 1], plans.cards[at : at + 1])
        np.testing.assert_array_equal(plan_costs(arrays, alone, hours[at : at + 1]), short[at : at + 1])


def _searched(
    arrays: PlanArrays, plans: PricedPlans, at: IntArray, hours: FloatArray, long_cell: int
) -> FloatArray:
    """The plan cells ``at`` priced at ``hours`` beside cell ``long_cell`` priced for a long job, so
    that the search prices every one of them."""
    slots = np.append(plans.slots[at], plans.slots[long_cell])
    cards = np.append(plans.cards[at], plans.cards[long_cell])
    priced: FloatArray = plan_costs(arrays, cell_terms(arrays, slots, cards), np.append(hours, _LONG_HOURS))
    return priced[:-1]
