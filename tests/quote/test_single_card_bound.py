"""The single card a pruned evaluation bills is found as over every row.

``pruning.cheapest_single_card`` costs only the rows whose cost bound is within the least cost of the rows
billed first; here every call a seeded request makes is made again over every row that can be the
single-card comparison (no rows billed first: the full rule) and must give the same float and the same
rows, the rows that cost it, and only those.
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
    real: Callable[..., pruning.SingleCard] = pruning.cheapest_single_card
    compared: list[pruning.SingleCard] = []

    def checked(*args: Any) -> pruning.SingleCard:
        *rest, (bounds, first) = args
        found = real(*rest, (bounds, first))
        every_row = real(*rest, (bounds, np.empty(0, dtype=np.int64)))
        assert found.cost == every_row.cost or (np.isnan(found.cost) and np.isnan(every_row.cost))
        np.testing.assert_array_equal(found.rows, every_row.rows)
        compared.append(found)
        return found

    monkeypatch.setattr(evaluation, "cheapest_single_card", checked)
    answers(snapshot, list(requests(seed, 400, snapshot)), _OPTIONS)
    assert len(compared) >= 80
    finite = [single for single in compared if np.isfinite(single.cost)]
    assert len(finite) >= 60
    # Each finite single card's rows: at least the one it is, and far fewer than every row.
    assert all(single.rows.size >= 1 for single in finite)
    assert max(single.rows.size for single in finite) < snapshot.tables.size // 4
