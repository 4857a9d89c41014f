"""The single card the summary compares is billed at its one-card cell alone.

A model a big card holds alone, and many small cards hold together, makes the single card dear beside the
ranking's top: every small-card row's lower cost bound is under the single card's cost, so widening the
cost threshold to it bills each of those rows whole. A pruned evaluation bills the one-card cells of the
rows that can be the single card instead (``pruning.cheapest_single_card``, ``known.single_card_rows``),
and answers what the reference evaluation answers, with and without a deadline most rows meet (the
limits' path, which reads every candidate's own figures).
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from schemas.offer import CardHourPricing
from schemas.quote import QuoteRequest
from service.quote import FastPaths, QuoteOptions, Snapshot, build_quote
from service.quote.evaluate import evaluation
from tests.quote.factories import MAX_AGE_S, NOW, count_billed_cells, offer, snapshot

_PRUNED = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))
_REFERENCE = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths.none())


def _market(seed: int) -> Snapshot:
    """Many small cards at spread rates, a few big ones each holding the model alone, dearer per card."""
    rng = random.Random(seed)
    small = [
        offer(
            f"v{index % 9}",
            f"small-{index}",
            pricing=CardHourPricing(cny_per_card_hour=rng.uniform(1.8, 9.0)),
        )
        for index in range(360)
    ]
    big = [
        offer(
            f"v{index % 9}",
            f"big-{index}",
            gpu="a100-80g",
            pricing=CardHourPricing(cny_per_card_hour=rng.uniform(24.0, 40.0)),
        )
        for index in range(12)
    ]
    return snapshot([*small, *big])


def _asked(deadline_hours: float | None) -> QuoteRequest:
    body: dict[str, object] = {
        "workload": {"gpu_hours": 200, "reference_gpu": "rtx4090", "model_params_b": 20, "task": "inference"}
    }
    if deadline_hours is not None:
        body["deadline_hours"] = deadline_hours
    return msgspec.convert(body, QuoteRequest)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("deadline_hours", [None, 170.0])
def test_the_single_card_is_billed_alone_and_answered_as_the_reference(
    seed: int, deadline_hours: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    market = _market(seed)
    request = _asked(deadline_hours)
    paths: list[str] = []
    for path in ("_pruned", "_ranked_within_limits"):
        original = getattr(evaluation, path)

        def noted(*args: Any, _original: Any = original, _path: str = path, **kwargs: Any) -> Any:
            found = _original(*args, **kwargs)
            if found is not None:
                paths.append(_path)
            return found

        monkeypatch.setattr(evaluation, path, noted)
    billed = count_billed_cells(monkeypatch)
    pruned = build_quote(market, request, options=_PRUNED)
    pruned_cells = billed[0]  # the answer's own evaluation (its quantized alternatives' come after)
    # Without a limit the rows' bounds decide; a deadline that the one-card cells of small cards pass
    # (they cannot hold the model anyway) and most rows meet is judged on every cell's own figures.
    assert paths[0] == ("_pruned" if deadline_hours is None else "_ranked_within_limits")
    billed.clear()
    reference = build_quote(market, request, options=_REFERENCE)
    every_cell = billed[0]
    assert msgspec.json.encode(pruned) == msgspec.json.encode(reference)
    # The case this is about: the top is many small cards, and the summary compares one big card.
    assert pruned.quotes[0].gpu == "rtx4090" and pruned.quotes[0].cards > 1
    assert "A single card: 1 × A100 80G" in pruned.summary
    # Every small-card row has cells at several counts; the rows whose bound is under the single card's
    # cost are most of them, and billed whole they were most of the table's cells.
    assert pruned_cells < every_cell / 4
