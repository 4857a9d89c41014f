"""A pruned evaluation judges the whole table by row (``evaluate.row_judge``) as ``judge`` does by cell.

Over seeded catalogs (stale prices, bundles, node offers, combined plans) and seeded requests (filters,
models that need several cards), each evaluated with bound pruning on every table and with every row
billed: where the pruned one ran, what it says of the whole table — ``excluded``, the stale fallback,
the offers with a qualifying cell — and the runnable and qualifying cells it billed are the exhaustive
evaluation's. Asked at the catalog's time and a week later (every price stale: the fallback), and with
filters that match no offer.
"""

from __future__ import annotations

from datetime import timedelta
from functools import cache

import msgspec
import numpy as np
import pytest

from schemas.quote import QuoteRequest
from service.errors import InvalidRequest
from service.quote import FastPaths, QuoteOptions, Snapshot
from service.quote.evaluate.evaluation import Evaluation, evaluate
from service.quote.resolve import resolve_request
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import catalog, requests

# (seed, offers, clusters, packaged vendors)
_CATALOGS = ((61, 300, 12, 6), (62, 700, 30, 10), (63, 500, 0, 0))
_PRUNED = FastPaths(prune_from_rows=0)
_WHOLE = FastPaths(bound_pruning=False)
_LATER_S = timedelta(days=7).total_seconds()


@cache
def _catalog(at: int) -> Snapshot:
    seed, offers, clusters, packaged = _CATALOGS[at]
    return catalog(seed, offers, clusters=clusters, packaged_vendors=packaged)


def _evaluated(snapshot: Snapshot, request: QuoteRequest, fast: FastPaths, later_s: float) -> Evaluation:
    options = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S)
    tables = snapshot.tables
    resolved = resolve_request(
        request, tables, snapshot.statuses.keys(), options.catalog, options.bytes_per_param
    )
    return evaluate(
        tables,
        resolved,
        catalog=options.catalog,
        now_s=NOW.timestamp() + later_s,
        price_max_age_s=MAX_AGE_S,
        cross_node_factor=options.cross_node_factor,
        fast=fast,
    )


def _requests(at: int) -> list[QuoteRequest]:
    snapshot = _catalog(at)
    drawn = list(requests(400 + at, 400, snapshot))
    # Filters that match no offer.
    drawn += [msgspec.structs.replace(request, vendors=["none-such"]) for request in drawn[:6]]
    return drawn


@pytest.mark.parametrize("at", range(len(_CATALOGS)))
@pytest.mark.parametrize("later_s", [0.0, _LATER_S])
def test_the_pruned_judgement_is_the_exhaustive_one(at: int, later_s: float) -> None:
    snapshot = _catalog(at)
    pruned_runs = fallbacks = 0
    for request in _requests(at):
        try:
            pruned = _evaluated(snapshot, request, _PRUNED, later_s)
        except InvalidRequest:
            continue
        if pruned.quoted_offers is None or request.deadline_hours is not None or request.budget_cny:
            continue  # not pruned by its ranking's bounds
        pruned_runs += 1
        whole = _evaluated(snapshot, request, _WHOLE, later_s)
        assert pruned.excluded == whole.excluded
        assert pruned.used_stale == whole.used_stale
        fallbacks += pruned.used_stale
        assert np.array_equal(pruned.quoted_offers, whole.offers_qualifying())
        at_whole = np.searchsorted(whole.cells, pruned.cells)
        assert np.array_equal(whole.cells[at_whole], pruned.cells)
        assert np.array_equal(pruned.runnable, whole.runnable[at_whole])
        assert np.array_equal(pruned.qualifying, whole.qualifying[at_whole])
    assert pruned_runs >= 40
    if later_s:
        assert fallbacks >= 20  # every price stale: the fallback judged
