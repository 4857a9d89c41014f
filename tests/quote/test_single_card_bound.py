"""The single-card cost a pruned evaluation bounds its rows with is the least over every row.

``pruning.single_card_cost`` costs only the rows whose cost bound is within the least cost of the rows
billed first; here every call a seeded request makes is made again over every row that can be the
single-card comparison (no rows billed first: the full rule) and must give the same float.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from service.quote import FastPaths, QuoteOptions
from service.quote.evaluate import evaluation, pruning
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import answers, catalog, requests

_OPTIONS = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))


@pytest.mark.parametrize(("seed", "offers", "clusters", "packaged"), [(71, 400, 12, 6), (72, 900, 30, 2)])
def test_the_bounded_single_card_cost_is_the_least_of_every_row(
    seed: int, offers: int, clusters: int, packaged: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = catalog(seed, offers, clusters=clusters, packaged_vendors=packaged)
    real: Callable[..., float] = pruning.single_card_cost
    compared: list[float] = []

    def checked(*args: Any) -> float:
        *rest, (bounds, first) = args
        found = real(*rest, (bounds, first))
        every_row = real(*rest, (bounds, np.empty(0, dtype=np.int64)))
        assert found == every_row or (np.isnan(found) and np.isnan(every_row))
        compared.append(found)
        return found

    monkeypatch.setattr(evaluation, "single_card_cost", checked)
    answers(snapshot, list(requests(seed, 400, snapshot)), _OPTIONS)
    assert len(compared) >= 80
    assert sum(np.isfinite(cost) for cost in compared) >= 60
