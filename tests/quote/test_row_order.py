"""Bounds read along the rows' order answer what every row's bounds answer.

``FastPaths.row_order`` reads a pruned evaluation's seeds, its single-card bound and its kept rows off
rows sorted once per rule, memory need and conversion (``service.quote.evaluate.ordered``), with the
seeds' figures carried from one request of a shape to the next. Here requests of a few shapes each ask
job hours from a minute to years in a shuffled order (so a figure carried over is now too small, now
too wide), at several limits, rankings and spot choices, and every answer is compared byte for byte with
the one every row's bounds give; and the rows a figure is read over are checked against every row's
bounds directly.
"""

from __future__ import annotations

import random
from functools import cache
from typing import Any

import msgspec
import numpy as np
import pytest

from schemas.quote import QuoteRequest
from service.quote import FastPaths, QuoteOptions, Snapshot
from service.quote.evaluate import evaluation, ordered
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import answers, catalog

_ORDERED = FastPaths(prune_from_rows=0)
_EVERY_ROW = FastPaths(prune_from_rows=0, row_order=False)
# (seed, offers, clusters, packaged vendors)
_CATALOGS = ((41, 900, 0, 0), (42, 700, 20, 10), (43, 500, 40, 4))
_SHAPES: tuple[dict[str, Any], ...] = (
    {"workload": {"reference_gpu": "rtx4090"}},
    {"workload": {"reference_gpu": "a100-80g", "model_params_b": 14, "task": "lora"}, "rank_by": "time"},
    {"workload": {"reference_gpu": "h800", "model_params_b": 70, "task": "full_finetune"}},
    {"workload": {"model_params_b": 7, "task": "qlora"}, "allow_spot": False},
    {"workload": {"reference_gpu": "l20"}, "time_value_cny_per_hour": 40, "limit": 3},
    {"workload": {"reference_gpu": "rtx4090"}, "regions": ["jiangsu"]},
    {"workload": {"reference_gpu": "a100-80g"}, "vendors": [f"seed-{at:02d}" for at in range(15)]},
)
_ASKED_PER_SHAPE = 40


def _requests(seed: int) -> list[QuoteRequest]:
    """Each shape at hours from a minute to years, limits of 1 to 40, in a shuffled order."""
    rng = random.Random(seed)
    asked = []
    for shape in _SHAPES:
        for _ in range(_ASKED_PER_SHAPE):
            body = {
                **shape,
                "workload": {**shape["workload"], "gpu_hours": round(10 ** rng.uniform(-1.5, 4.7), 4)},
            }
            if "limit" not in shape and rng.random() < 0.3:
                body["limit"] = rng.choice((1, 2, 5, 20, 40))
            if "allow_spot" not in shape and rng.random() < 0.2:
                body["allow_spot"] = rng.random() < 0.5
            asked.append(msgspec.convert(body, QuoteRequest))
    rng.shuffle(asked)
    return asked


@cache
def _catalog(at: int) -> Snapshot:
    seed, offers, clusters, packaged = _CATALOGS[at]
    return catalog(seed, offers, clusters=clusters, packaged_vendors=packaged)


def _options(paths: FastPaths) -> QuoteOptions:
    return QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=paths)


@pytest.mark.parametrize("at", range(len(_CATALOGS)))
def test_ordered_bounds_answer_what_every_rows_bounds_answer(
    at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _requests(at)
    read_in_order = []
    seeds = ordered.OrderedBounds.seeds

    def counted(self: ordered.OrderedBounds, *args: Any) -> Any:
        read_in_order.append(1)
        return seeds(self, *args)

    monkeypatch.setattr(ordered.OrderedBounds, "seeds", counted)
    monkeypatch.setattr(ordered, "_SORTED_FROM", 2)  # every shape's order sorted at its second request
    fast = answers(_catalog(at), asked, _options(_ORDERED))
    # The comparison means something only if most requests were read in order (a shape's first is not).
    assert len(read_in_order) > len(asked) // 2
    assert fast == answers(_catalog(at), asked, _options(_EVERY_ROW))


def test_the_rows_read_hold_every_row_within_the_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the figures, the rows ``covering`` reads hold every row whose bounds are within them,
    each with the bounds every row's evaluation gives it."""
    made: list[ordered.OrderedBounds] = []
    ordered_bounds = ordered.ordered_bounds

    def kept(*args: Any) -> ordered.OrderedBounds | None:
        found = ordered_bounds(*args)
        if found is not None:
            made.append(found)
        return found

    monkeypatch.setattr(evaluation, "ordered_bounds", kept)
    monkeypatch.setattr(ordered, "_SORTED_FROM", 2)
    snapshot = _catalog(1)
    answers(snapshot, _requests(7)[:60], _options(_ORDERED))
    assert len(made) > 10
    rng = random.Random(5)
    safe = ~snapshot.tables.interruptible
    for bounds in made[:: max(1, len(made) // 12)]:
        every = bounds.every_row().bounds
        for _ in range(20):
            cost, hours = (
                float(rng.choice(figure[np.isfinite(figure)])) for figure in (every.cost, every.hours)
            )
            key = rng.choice((0, 1))
            wider = float(
                rng.choice((every.cost, every.hours)[key][safe & np.isfinite((every.cost, every.hours)[key])])
            )
            rows, found = bounds.covering(cost, hours, (key, wider))
            assert np.array_equal(found.cost, every.cost[rows]) and np.array_equal(
                found.hours, every.hours[rows]
            )
            within = (
                (every.cost <= cost)
                | (every.hours <= hours)
                | (safe & ((every.cost, every.hours)[key] <= wider))
            )
            assert set(np.flatnonzero(within).tolist()) <= set(rows.tolist())


def test_an_order_is_sorted_only_for_a_shape_asked_often(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sorting costs dozens of passes over every row: a shape asked a few times never pays for it, one
    asked ``_SORTED_FROM`` times sorts its order once, and the requests after read it."""
    sorted_orders = []
    sort = ordered._sorted

    def counted(*args: Any) -> Any:
        sorted_orders.append(1)
        return sort(*args)

    monkeypatch.setattr(ordered, "_sorted", counted)
    snapshot = catalog(44, 700, clusters=10, packaged_vendors=4)
    shape = {"workload": {"reference_gpu": "rtx4090", "model_params_b": 7, "task": "lora"}}
    asked = [
        msgspec.convert({**shape, "workload": {**shape["workload"], "gpu_hours": 1 + index}}, QuoteRequest)
        for index in range(3 * ordered._SORTED_FROM)
    ]
    options = _options(_ORDERED)
    answers(snapshot, asked[: ordered._SORTED_FROM - 1], options)
    assert not sorted_orders
    answers(snapshot, asked[ordered._SORTED_FROM - 1 :], options)
    assert len(sorted_orders) == 1
