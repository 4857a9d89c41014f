"""Which offers' one-card hours are known (``evaluate.conversion.known_hours``): every bound finite, as
reading all three rows of the hours says, whichever shortcut answers it (a reference's conversion, no
reference at all, a job sized by its tokens)."""

from __future__ import annotations

import numpy as np
import pytest

from schemas.quote import QuoteRequest, Workload
from service.errors import InvalidRequest
from service.quote import QuoteOptions
from service.quote.engine import _resolved
from service.quote.evaluate.conversion import known_hours, one_card_hours_of
from service.quote.model.one_card import OneCardHours
from service.quote.model.tables import OfferTables
from service.quote.resolve import ResolvedRequest
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import catalog, requests

_OPTIONS = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S)


def _every_row_finite(tables: OfferTables, resolved: ResolvedRequest) -> np.ndarray:
    _, hours = one_card_hours_of(tables, resolved, _OPTIONS.catalog)
    fresh = OneCardHours([hours.row(0).copy(), hours.expected.copy(), hours.row(2).copy()], None, None)
    finite = np.isfinite(fresh.every())
    every_bound: np.ndarray = finite[0] & finite[1] & finite[2]
    return every_bound


@pytest.mark.parametrize("seed", [5, 17])
def test_known_hours_are_the_offers_with_every_bound_finite(seed: int) -> None:
    snapshot = catalog(seed, 400, clusters=20)
    tables = snapshot.tables
    kinds = set()
    for request in requests(seed, 300, snapshot):
        try:
            resolved = _resolved(snapshot, request, _OPTIONS)
        except InvalidRequest:
            continue
        _, hours = one_card_hours_of(tables, resolved, _OPTIONS.catalog)
        known = known_hours(tables, resolved, _OPTIONS.catalog, hours)
        assert np.array_equal(known, _every_row_finite(tables, resolved))
        kinds.add((resolved.reference_gpu is None, resolved.job.sizing is None))
    assert kinds == {(True, True), (True, False), (False, True)}  # none, tokens, a reference


@pytest.mark.parametrize("hours", [1.0, 720.0, 1e300])
def test_hours_without_a_reference_are_known_on_every_offer(hours: float) -> None:
    snapshot = catalog(3, 200, clusters=10)
    request = QuoteRequest(workload=Workload(kind="serving", hours=hours, model="qwen2.5-7b"))
    resolved = _resolved(snapshot, request, _OPTIONS)
    _, one_card = one_card_hours_of(snapshot.tables, resolved, _OPTIONS.catalog)
    known = known_hours(snapshot.tables, resolved, _OPTIONS.catalog, one_card)
    assert known.all() and known.flags.writeable
    assert np.array_equal(known, _every_row_finite(snapshot.tables, resolved))
