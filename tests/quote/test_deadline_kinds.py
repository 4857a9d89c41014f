"""The fewest cards meeting a deadline, searched once per kind of row, are each row's own.

``jobs.deadline._reached_by_kind`` searches the speed-up a row needs once per kind of row (speed-up
column, GPU model, lead time) instead of once per row; it must give every row what the per-row lookup
(``_reached``) gives on every deadline the seeded requests ask, and give up (None) whenever the needed
speed-up differs within a kind, however slightly.
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np
import pytest

from service.quote import FastPaths, QuoteOptions
from service.quote.jobs import deadline
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import answers, catalog, requests

_OPTIONS = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))


def test_each_kind_searched_once_gives_each_rows_count(monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = catalog(13, 700, clusters=30)
    calls: list[tuple[bool, bool]] = []
    by_kind = deadline._reached_by_kind

    def compared(tables: Any, scaling: Any, needed: Any, lookup: Any) -> Any:
        found = by_kind(tables, scaling, needed, lookup)
        order, starts = deadline._by_column(tables, scaling)
        each = deadline._reached(tables.size, (order, starts), needed, lookup)
        assert found is None or np.array_equal(found, each)
        # One row's need nudged by an ulp: no longer one per kind, so no answer by kind.
        nudged = needed.copy()
        row = int(np.flatnonzero(np.isfinite(nudged))[0])
        nudged[row] = np.nextafter(nudged[row], np.inf)
        calls.append((found is not None, by_kind(tables, scaling, nudged, lookup) is None))
        return found

    monkeypatch.setattr(deadline, "_reached_by_kind", compared)
    asked = [
        msgspec.structs.replace(request, deadline_hours=hours)
        for request in requests(13, 60, snapshot)
        for hours in (2.0, 30.0)
    ]
    answers(snapshot, asked, _OPTIONS)
    assert sum(by_kind for by_kind, _ in calls) >= len(calls) // 2  # lead times, GPUs, split models
    assert all(gave_up for _, gave_up in calls)
