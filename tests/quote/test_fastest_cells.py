"""The cells a pruned evaluation bills for the rows only their hours can return are the right ones.

A row kept for its hours alone (its cost and value bounds past what the response returns) can only be
returned as the fastest candidate: of it only the cells within the hours threshold are billed, found from
each row's largest speed-up and the next one (``evaluation._fastest_cells``). Every call seeded requests
make is checked against the cells timed one by one: with a threshold, the same cells; without (the first
bill), each row's fastest cells, ties with them included.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from service.quote import FastPaths, QuoteOptions
from service.quote.evaluate import evaluation
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import answers, catalog, requests

_OPTIONS = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))


@pytest.mark.parametrize(("seed", "offers", "clusters", "packaged"), [(91, 500, 24, 6), (92, 900, 52, 2)])
def test_the_fastest_cells_are_those_timed_one_by_one(
    seed: int, offers: int, clusters: int, packaged: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = catalog(seed, offers, clusters=clusters, packaged_vendors=packaged)
    real: Callable[..., np.ndarray] = evaluation._fastest_cells
    timed: Callable[..., np.ndarray] = evaluation._cells_within_hours
    calls = {"first": 0, "threshold": 0, "cells": 0}

    def checked(job: Any, rows: np.ndarray, within_hours: float | None) -> np.ndarray:
        found = real(job, rows, within_hours)
        if within_hours is not None:
            assert np.array_equal(found, timed(job, rows, within_hours))
            calls["threshold"] += 1
        else:
            every = timed(job, rows, np.inf)
            offers = job.layout.cell_offer
            for row in rows:
                mine = every[offers[every] == row]
                hours, speedups = _hours(job, mine)
                # A row with a cell of no speed-up (fewer cards than one of its runs) is timed whole.
                fastest = mine if np.isnan(speedups).any() or not mine.size else mine[hours <= hours.min()]
                assert np.array_equal(np.sort(found[offers[found] == row]), fastest)
            calls["first"] += 1
        calls["cells"] += found.size
        return found

    monkeypatch.setattr(evaluation, "_fastest_cells", checked)
    answers(snapshot, list(requests(seed, 300, snapshot)), _OPTIONS)
    assert calls["first"] >= 30 and calls["threshold"] >= 30 and calls["cells"] >= 100


def _hours(job: Any, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Expected hours of cells ``at``, as ``bill`` works them out, and their speed-ups."""
    head = job.layout.dense * job.tables.size
    gathered = job.layout.gathered(job.rule, job.tables)  # what billing every cell reads
    speedups = np.where(
        at < head,
        gathered.dense.reshape(-1).take(np.minimum(at, head - 1)) if head else np.nan,
        gathered.sparse.take(np.maximum(at - head, 0)) if gathered.sparse.size else np.nan,
    )
    offers = job.layout.cell_offer.take(at)
    hours: np.ndarray = job.one_card_hours.expected.take(offers) / speedups
    if job.extra_hours is not None:
        hours = hours + job.extra_hours.take(offers)
    return hours, speedups
