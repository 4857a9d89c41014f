"""The fewest cards meeting a deadline, searched once per kind of row, are each row's own.

``jobs.deadline._reached_by_kind`` searches the speed-up a row needs once per kind of row (speed-up
column, GPU model, lead time) instead of once per row; it must give every row what the per-row lookup
(``_reached``) gives on every deadline the seeded requests ask, and give up (None) whenever the needed
speed-up differs within a kind, however slightly.
"""

from __future__ import annotations

import dataclasses
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


@pytest.mark.parametrize("seed", [13, 14])
def test_row_kinds_are_the_distinct_column_gpu_and_lead_time(seed: int) -> None:
    """``_kinds`` groups the rows by speed-up column, GPU model and lead time exactly as ``np.unique``
    over the three would (its lead times found among the distinct ones, not sorted row by row), with
    lead times that vary, repeat, are NaN and are -0.0."""
    tables = catalog(seed, 700, clusters=30).tables
    rng = np.random.default_rng(seed)
    leads = rng.choice([0.0, -0.0, 2.0, 24.0, 0.5, np.nan], size=tables.size)
    tables = dataclasses.replace(tables, lead_time_h=leads)
    of_row, first_row, starts = deadline._kinds(tables)
    _, lead_code = np.unique(tables.lead_time_h, return_inverse=True)
    leads_n, gpus = int(lead_code.max()) + 1, int(tables.gpu_code.max()) + 1
    keys = (tables.scaling_code.astype(np.int64) * gpus + tables.gpu_code) * leads_n + lead_code.ravel()
    unique, expected_first, expected_of = np.unique(keys, return_index=True, return_inverse=True)
    assert np.array_equal(of_row, expected_of.ravel())
    assert np.array_equal(first_row, expected_first)
    columns = int(tables.scaling_code.max()) + 1
    assert starts == np.searchsorted(unique // (gpus * leads_n), np.arange(columns + 1)).tolist()


def test_first_counts_kept_by_memory_minimum_are_those_worked_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first counts kept per memory minimum (``_first_counts``, by the read-only array's identity and
    the cap's) are what working them out again gives: for the seeded deadlines, each asked under its own
    cap and a lower one in turn, with the minimums read-only (kept) and writeable (worked out)."""
    snapshot = catalog(14, 700, clusters=30)
    original = deadline.fewest_meeting_deadline
    compared = 0

    def checked(*args: Any, **kwargs: Any) -> Any:
        nonlocal compared
        tables, scaling, bounds, hours, matching, fewest, max_cards = args
        for cap in (max_cards, max(1, max_cards // 3), max_cards):
            frozen_copy = fewest.copy()
            frozen_copy.flags.writeable = False
            kept = [original(tables, scaling, bounds, hours, matching, frozen_copy, cap, **kwargs)]
            kept.append(original(tables, scaling, bounds, hours, matching, frozen_copy, cap, **kwargs))
            worked_out = original(tables, scaling, bounds, hours, matching, fewest.copy(), cap, **kwargs)
            assert all(np.array_equal(found, worked_out) for found in kept)
            compared += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(deadline, "fewest_meeting_deadline", checked)
    monkeypatch.setattr("service.quote.jobs.batch.fewest_meeting_deadline", checked)
    asked = [
        msgspec.structs.replace(request, deadline_hours=hours)
        for request in requests(14, 40, snapshot)
        for hours in (3.0, 48.0)
    ]
    answers(snapshot, asked, _OPTIONS)
    assert compared >= 30


@pytest.mark.parametrize("seed", range(4))
def test_same_values_are_array_equal_with_nan_equal(seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.choice([0.0, -0.0, 1.5, np.inf, -np.inf, np.nan, 3.0], size=200)
    for others in (values.copy(), np.where(values == 0.0, -values, values), rng.permutation(values)):
        assert deadline._same(values, others) == np.array_equal(values, others, equal_nan=True)
    nudged = values.copy()
    nudged[seed] = np.nextafter(nudged[seed], np.inf)
    assert deadline._same(values, nudged) == np.array_equal(values, nudged, equal_nan=True)
