"""A pruned evaluation's subset of a layout holds the layout's own cells, plans and speed-ups.

``Layout.subset_with_plans`` takes the cells a request bills with every combined plan's and the products
they combine, each array at the merged positions at once, and the speed-ups read off the layout's own
where they are kept (else gathered from the rule's table). Every call the seeded requests make is checked
against the plain construction, with the layout's speed-ups kept and not.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from service.quote import FastPaths, QuoteOptions
from service.quote.evaluate.layout import Layout
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import answers, catalog, requests

_PRUNED = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))
_ARRAYS = ("cells", "cell_offer", "cell_cards", "requested", "units", "supplies")


def _check(layout: Layout, own: np.ndarray, rule: Any, tables: Any) -> bool:
    """Whether the subset is the plain one; True when it took the plans' part apart from ``own``."""
    at, subset, speedups = layout.subset_with_plans(own, rule, tables)
    expected_at = np.union1d(own, layout.plan_cells(tables))
    np.testing.assert_array_equal(at, expected_at)
    for name in _ARRAYS:
        np.testing.assert_array_equal(getattr(subset, name), getattr(layout, name).take(expected_at))
    if layout.machines is not None:
        assert subset.machines is not None
        np.testing.assert_array_equal(subset.machines, layout.machines.take(expected_at))
    assert subset.plans is not None and layout.plans is not None
    np.testing.assert_array_equal(subset.cells.take(subset.plans.at), layout.cells.take(layout.plans.at))
    np.testing.assert_array_equal(
        subset.cells.take(subset.plans.parts_at), layout.cells.take(layout.plans.parts_at)
    )
    assert speedups.dense.shape[0] == subset.dense == 0
    expected = layout.expected_speedups(layout.scaling(rule, tables), expected_at)
    np.testing.assert_array_equal(speedups.sparse.view(np.int64), expected.view(np.int64))
    return bool(own.size) and layout.plan_cells(tables).size <= 0.5 * layout.cells.size


@pytest.mark.parametrize(("seed", "offers"), [(81, 400), (82, 1_200)])
def test_subsets_hold_the_layouts_own_cells_and_speedups(
    seed: int, offers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = catalog(seed, offers, clusters=30, packaged_vendors=6)
    calls: list[tuple[Layout, np.ndarray, Any]] = []
    original = Layout.subset_with_plans

    def recording(self: Layout, own: np.ndarray, rule: Any, tables: Any) -> Any:
        calls.append((self, own.copy(), rule))
        return original(self, own, rule, tables)

    monkeypatch.setattr(Layout, "subset_with_plans", recording)
    answers(snapshot, list(requests(seed, 150, snapshot)), _PRUNED)
    monkeypatch.undo()
    assert len(calls) >= 100
    taken_apart = 0
    tables = snapshot.tables
    for layout, own, rule in calls[:400]:
        if layout.plans is None:
            continue
        taken_apart += _check(layout, own, rule, tables)
        layout.gathered(rule, tables)  # the layout's own speed-ups kept: read off them
        _check(layout, own, rule, tables)
    assert taken_apart >= 50
