"""Every row's bounds are at most what each of its candidates costs and takes.

Bound pruning (``evaluate.pruning``) sets a row aside only when its lower bounds of cost and hours are
past what a response returns; a bound above a candidate's figure could set aside a candidate that should
be returned. Over seeded catalogs and requests (with and without deadlines, budgets, data in another
city, models that need several cards), the bounds each pruned evaluation works out are compared with the
figures of every qualifying candidate of the exhaustive evaluation of the same request (the combined
plans' rows aside: they are billed whatever their bounds).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from schemas.quote import QuoteRequest, Workload
from service.errors import InvalidRequest
from service.quote import FastPaths, QuoteOptions
from service.quote.evaluate import evaluation, pruning
from service.quote.evaluate.evaluation import Evaluation, evaluate
from service.quote.resolve import resolve_request
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import catalog, requests

_OPTIONS = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S)
# Float noise between a bound and the figure it bounds (``pruning._MARGIN``).
_NOISE = 1e-9


@pytest.mark.parametrize(("seed", "offers", "clusters", "packaged"), [(81, 400, 16, 6), (82, 800, 30, 10)])
def test_row_bounds_are_at_most_every_candidates_figures(
    seed: int, offers: int, clusters: int, packaged: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = catalog(seed, offers, clusters=clusters, packaged_vendors=packaged)
    tables = snapshot.tables
    found: list[pruning.RowBounds] = []

    def kept(*args: Any) -> pruning.RowBounds:
        bounds = pruning.row_bounds(*args)
        found.append(bounds)
        return bounds

    monkeypatch.setattr(evaluation, "row_bounds", kept)

    def evaluated(resolved: Any, fast: FastPaths) -> Evaluation:
        return evaluate(
            tables,
            resolved,
            catalog=_OPTIONS.catalog,
            now_s=NOW.timestamp(),
            price_max_age_s=MAX_AGE_S,
            cross_node_factor=_OPTIONS.cross_node_factor,
            fast=fast,
        )

    # Jobs of a few milliseconds too: their fastest hours fall inside the billing tolerance of a granule.
    short = [
        QuoteRequest(workload=Workload(gpu_hours=hours, reference_gpu="rtx4090"), limit=limit)
        for hours in (1e-9, 1e-7, 1e-5, 3e-3)
        for limit in (1, 10)
    ]
    compared = 0
    for request in [*requests(seed, 400, snapshot), *short]:
        try:
            resolved = resolve_request(
                request, tables, snapshot.statuses.keys(), _OPTIONS.catalog, _OPTIONS.bytes_per_param
            )
            found.clear()
            evaluated(resolved, FastPaths(prune_from_rows=0))
        except InvalidRequest:
            continue
        if not found:
            continue
        whole = evaluated(resolved, FastPaths(bound_pruning=False))
        # Combined plans are billed whatever their bounds (``Layout.plan_cells``): offers' rows only.
        candidates = whole.qualifying & (whole.cell_offer < tables.offer_count)
        rows = whole.cell_offer[candidates]
        cost, hours = whole.cost_expected[candidates], whole.hours_expected[candidates]
        for bounds in found:
            assert np.all(bounds.cost.take(rows) <= cost * (1 + _NOISE) + _NOISE)
            assert np.all(bounds.hours.take(rows) <= hours * (1 + _NOISE) + _NOISE)
        compared += rows.size
    assert compared >= 20_000
