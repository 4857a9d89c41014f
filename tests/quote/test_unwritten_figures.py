"""The figure block's rows no pass writes are never read.

``figures.bill`` takes its ``(Figure, cells)`` block unzeroed: a layout that bills the low and high bounds
for the returned quotes alone leaves their rows as the allocator gives them, and so do the data fees'
rows without a data set. Here every block (and every other array ``figures`` takes unfilled) comes filled with NaN instead,
which any read of an unwritten figure carries into the answer, and the answers must be those of the
service as it runs, byte for byte, over seeded catalogs and requests.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from service.quote import FastPaths, QuoteOptions
from service.quote.evaluate import figures
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import answers, catalog, requests

# (seed, offers, clusters, packaged vendors): tables large enough that bounds are left to the quotes.
_CATALOGS = ((31, 400, 20, 4), (32, 900, 0, 0))
_REQUESTS = 160
_OPTIONS = {
    "service": QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S),
    "pruned everywhere": QuoteOptions(
        now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0)
    ),
}


class _NumpyFillingNaN:
    """numpy, but ``empty`` gives arrays full of NaN; counts the figure blocks it gave."""

    def __init__(self) -> None:
        self.blocks = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)

    def empty(self, shape: Any, dtype: Any = float) -> Any:
        if isinstance(shape, tuple) and shape and shape[0] == len(figures.Figure):
            self.blocks += 1
        return np.full(shape, np.nan, dtype=dtype)


@pytest.mark.parametrize("options", _OPTIONS.values(), ids=_OPTIONS.keys())
@pytest.mark.parametrize("at", range(len(_CATALOGS)))
def test_no_answer_reads_a_figure_no_pass_wrote(
    at: int, options: QuoteOptions, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed, offers, clusters, packaged = _CATALOGS[at]
    snapshot = catalog(seed, offers, clusters=clusters, packaged_vendors=packaged)
    asked = list(requests(seed, _REQUESTS, snapshot))
    expected = answers(snapshot, asked, options)
    filling = _NumpyFillingNaN()
    monkeypatch.setattr(figures, "np", filling)
    snapshot = catalog(seed, offers, clusters=clusters, packaged_vendors=packaged)  # no layout kept
    assert answers(snapshot, asked, options) == expected
    assert filling.blocks >= _REQUESTS // 2  # the blocks were taken here, not kept from before
