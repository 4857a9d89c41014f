"""A pruned evaluation bills the candidates of its kept rows that can reach a threshold, not every cell.

A row is kept when its lower bound (its least cell's) is within a threshold; a model split over many
cards makes most of a kept row's cells no candidate at all (too few cards to hold it) and the rest dear.
``evaluation._cells_within_thresholds`` keeps the cells whose own expected hours or cost before fees can
reach one; the answer stays the reference's, with and without the rows' single cards asked for.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from schemas.quote import QuoteRequest
from service.quote import FastPaths, QuoteOptions, build_quote
from service.quote.evaluate import evaluation
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import catalog

_PRUNED = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))
_REFERENCE = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths.none())


@pytest.mark.parametrize(
    "body",
    [
        {"workload": {"gpu_hours": 200, "reference_gpu": "a100-80g", "model_params_b": 34, "task": "lora"}},
        {"workload": {"gpu_hours": 200, "reference_gpu": "rtx4090", "model_params_b": 70, "task": "inference"}},
        {"workload": {"gpu_hours": 3_000, "reference_gpu": "rtx4090", "model_params_b": 34, "task": "inference"},
         "rank_by": "value", "time_value_cny_per_hour": 40},
        {"workload": {"gpu_hours": 3_000, "reference_gpu": "a100-80g", "model_params_b": 34, "task": "lora"},
         "card_counts": [2, 4, 8, 16, 32]},
    ],
)  # fmt: skip
def test_kept_rows_bill_their_candidates_that_can_reach_a_threshold(
    body: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = catalog(63, 1_000, clusters=300, packaged_vendors=4)
    request = msgspec.convert(body, QuoteRequest)
    reference = msgspec.json.encode(build_quote(snapshot, request, options=_REFERENCE))
    filtered = []
    original = evaluation._cells_within_thresholds

    def recording(job: Any, rows: Any, thresholds: Any) -> Any:
        found = original(job, rows, thresholds)
        filtered.append((job.layout.cells_of(rows, job.tables).size, found.size))
        return found

    monkeypatch.setattr(evaluation, "_cells_within_thresholds", recording)
    assert msgspec.json.encode(build_quote(snapshot, request, options=_PRUNED)) == reference
    # The answer's own evaluation kept rows holding many cells, few of them candidates within reach.
    (of_rows, kept), *_ = filtered
    assert kept * 3 < of_rows
    # Every cell of each kept row billed instead: the same answer.
    monkeypatch.setattr(
        evaluation, "_cells_within_thresholds", lambda job, rows, _: job.layout.cells_of(rows, job.tables)
    )
    assert msgspec.json.encode(build_quote(snapshot, request, options=_PRUNED)) == reference
