"""Bound pruning answers exactly what the exhaustive evaluation answers, over thousands of requests.

``FastPaths.bound_pruning`` bills only the rows whose lower bounds can reach what a response returns
(``service.quote.evaluate.pruning``). Here it runs on tables of every size (the service prunes only large
ones) and each answer is compared byte for byte with the reference evaluation (every fast path off) over
seeded catalogs of several sizes and shapes, and seeded requests, each asked as drawn and again with a
vendor filter that removes the vendors of the offers its own answer returned (the rows a pruning would
have kept), so the next-best rows must be found among those it set aside.
"""

from __future__ import annotations

import random
from functools import cache
from typing import Any

import msgspec
import numpy as np
import pytest

from schemas.offer import CardHourPricing, Offer
from schemas.quote import QuoteRequest
from service.errors import InvalidRequest
from service.quote import FastPaths, QuoteOptions, Snapshot, build_quote
from service.quote.evaluate import evaluation, pruning
from service.quote.evaluate.layout import Layout
from tests.quote.factories import MAX_AGE_S, NOW, count_billed_cells, offer, snapshot
from tests.quote.seeded import answers, catalog, requests

_PRUNED = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))
_REFERENCE = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths.none())
# (seed, offers, clusters, packaged vendors): small and large tables, many packages or none.
_CATALOGS = (
    (21, 60, 4, 2),
    (22, 240, 12, 6),
    (23, 600, 20, 10),
    (24, 900, 0, 0),
    (25, 400, 40, 3),
)
_REQUESTS = 240


@cache
def _catalog(at: int) -> Snapshot:
    seed, offers, clusters, packaged = _CATALOGS[at]
    return catalog(seed, offers, clusters=clusters, packaged_vendors=packaged)


def _without_returned_vendors(snapshot: Snapshot, request: QuoteRequest, seed: int) -> QuoteRequest:
    """``request`` filtered to the vendors its own answer did not return (a random half of them)."""
    try:
        returned = {quote.vendor for quote in build_quote(snapshot, request, options=_PRUNED).quotes}
    except InvalidRequest:  # a refused request stays refused; ask it as drawn
        return request
    others = sorted({offer.vendor for offer in snapshot.offers} - returned)
    rng = random.Random(seed)
    kept = rng.sample(others, k=max(1, len(others) // 2)) if others else ["none-such"]
    return msgspec.structs.replace(request, vendors=kept)


@pytest.mark.parametrize("at", range(len(_CATALOGS)))
def test_pruned_answers_are_the_exhaustive_ones(at: int) -> None:
    snapshot = _catalog(at)
    drawn = list(requests(_CATALOGS[at][0], _REQUESTS, snapshot))
    filtered = [_without_returned_vendors(snapshot, request, index) for index, request in enumerate(drawn)]
    asked = drawn + filtered
    assert answers(snapshot, asked, _PRUNED) == answers(snapshot, asked, _REFERENCE)


def test_pruning_bills_fewer_cells_than_the_whole_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above means something only if pruning sets rows aside: on the largest catalog a
    plain request without limits bills a fraction of the cells the reference bills."""
    snapshot = _catalog(3)
    request = msgspec.convert({"workload": {"gpu_hours": 100, "reference_gpu": "rtx4090"}}, QuoteRequest)
    billed = count_billed_cells(monkeypatch)
    build_quote(snapshot, request, options=_PRUNED)
    build_quote(snapshot, request, options=_REFERENCE)
    pruned, whole = billed
    assert pruned < whole / 4


def test_per_row_values_at_cells_are_the_gathered_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Layout.at_cells`` broadcasts the dense counts' rows, ``Layout.rows_with`` reduces them a count
    at a time and ``Layout.cells_of`` finds some rows' cells: they must equal the plain gather, scatter
    and search on every layout the seeded requests judge (dense and sparse counts, pruned subsets,
    deadlines, placements)."""
    snapshot = _catalog(1)
    layouts: list[Layout] = []
    original = evaluation._judged

    def capturing(job: Any, layout: Layout, *args: Any, **kwargs: Any) -> Any:
        layouts.append(layout)
        return original(job, layout, *args, **kwargs)

    monkeypatch.setattr(evaluation, "_judged", capturing)
    answers(snapshot, list(requests(31, 80, snapshot)), _PRUNED)
    assert len({layout.dense for layout in layouts}) > 1
    rng = np.random.default_rng(5)
    size = snapshot.tables.size
    for layout in layouts:
        values = rng.random(size)
        assert np.array_equal(layout.at_cells(values), values.take(layout.cell_offer))
        assert np.array_equal(layout.at_cells(values < 0.5), (values < 0.5).take(layout.cell_offer))
        cells = rng.random(layout.cells.size) < 0.01
        found = np.zeros(size, dtype=np.bool_)
        found[layout.cell_offer[cells]] = True
        assert np.array_equal(layout.rows_with(cells, size), found)
        for share in (0.001, 0.01, 0.3):  # sorted for few rows, by a mask over every cell for many
            rows = np.flatnonzero(rng.random(size) < share)
            expected = np.flatnonzero(np.isin(layout.cell_offer, rows))
            assert np.array_equal(layout.cells_of(rows, snapshot.tables), expected)


@pytest.mark.parametrize("size", [30, 600, 5_000, 40_000])
def test_the_rows_seeded_first_hold_the_least_finite_bounds(size: int) -> None:
    """``pruning._smallest`` picks its rows among a sample's cut, not by partitioning every row: the
    values it picks must be the ``count`` least finite ones all the same, with many ties, infinite and
    NaN bounds (rows no candidate of which qualifies), and fewer finite ones than asked; and with them
    every row tied with the largest, unless those are more than ``_TIED_SEEDS`` times ``count``."""
    rng = np.random.default_rng(size)
    for trial in range(40):
        values = rng.integers(0, 50, size).astype(np.float64) * rng.choice((0.5, 13.7))
        unreachable = rng.random(size) < rng.choice((0.0, 0.3, 0.99, 1.0))
        values[unreachable] = rng.choice((np.inf, np.nan), int(unreachable.sum()))
        count = int(rng.choice((18, 36, 216)))
        (picked,) = pruning._smallest(values, count)
        finite = np.sort(values[np.isfinite(values)])
        assert np.unique(picked).size == picked.size, trial
        if finite.size <= count:
            assert np.array_equal(np.sort(values[picked]), finite), trial
            continue
        cut = finite[count - 1]
        tied = np.flatnonzero(values <= cut)
        if tied.size <= pruning._TIED_SEEDS * count:
            assert np.array_equal(np.sort(picked), tied), trial
        else:
            assert np.array_equal(np.sort(values[picked]), finite[:count]), trial


def _smallest_alone(values: np.ndarray, count: int, kept_in: np.ndarray | None) -> np.ndarray:
    """``pruning._smallest`` for one mask on its own: a pass over every value for it alone."""
    sample = values[:: pruning._SAMPLE_STEP]
    if kept_in is not None:
        sample = sample[kept_in[:: pruning._SAMPLE_STEP]]
    if sample.size > count:
        cut = np.partition(sample, count - 1)[count - 1]
        if np.isfinite(cut):
            near = values <= cut
            if kept_in is not None:
                near &= kept_in
            within = np.flatnonzero(near)
            least = within[np.argpartition(values.take(within), count - 1)[:count]]
            return pruning._with_ties(values, least, within, count)
    return pruning._least_finite(values, count, kept_in)


def test_keys_sharing_a_pass_pick_what_each_picks_alone() -> None:
    """``pruning._smallest`` finds the rows of several masks over the same values in one pass: each
    mask's rows must be exactly those it picks for each alone (the same order, the same ties),
    where the sample bounds them and where it cannot (too few rows kept, or none finite)."""
    rng = np.random.default_rng(11)
    for trial in range(60):
        size = int(rng.choice((20, 700, 9_000)))
        values = rng.integers(0, 40, size).astype(np.float64) * 1.5
        values[rng.random(size) < rng.choice((0.0, 0.5, 1.0))] = np.inf
        masks = tuple(
            None if share is None else rng.random(size) < share
            for share in rng.choice(np.array([None, 0.001, 0.2, 0.9], dtype=object), 3)
        )
        count = int(rng.choice((4, 36)))
        together = pruning._smallest(values, count, masks)
        alone = [_smallest_alone(values, count, mask) for mask in masks]
        for found, expected in zip(together, alone, strict=True):
            assert np.array_equal(found, expected), trial


@pytest.mark.parametrize("rank_by", ["cost", "time", "value"])
def test_kept_rows_are_every_row_within_a_threshold(rank_by: str) -> None:
    """``pruning.kept_rows`` finds the rows within each threshold from one pass per array of bounds: they
    must be the rows a mask per threshold gives (NaN and infinite bounds, infinite thresholds, the wider
    threshold of the rows without the spot risk), split into the rows billed whole and by hours alone."""
    rng = np.random.default_rng(17)
    request = msgspec.convert(
        {"workload": {"gpu_hours": 5}, "rank_by": rank_by, "time_value_cny_per_hour": 3.0}, QuoteRequest
    )
    for trial in range(80):
        size = int(rng.choice((10, 400, 5_000)))
        cost = rng.integers(0, 60, size).astype(np.float64) * 1.5
        hours = rng.integers(0, 60, size).astype(np.float64) * 0.25
        for values in (cost, hours):
            values[rng.random(size) < 0.1] = rng.choice((np.inf, np.nan))
        bounds = pruning.RowBounds(cost=cost, hours=hours)
        picks = [float(rng.choice((5.0, 30.0, 89.0, np.inf))) for _ in range(4)]
        key = {"cost": 0, "time": 1, "value": 2}[rank_by]
        thresholds = pruning.Thresholds(
            picks[0], picks[1], picks[2] if rank_by == "value" else -np.inf,
            safe_key=key if rng.random() < 0.5 else None, safe=picks[3] * 2,
        )  # fmt: skip
        interruptible = rng.random(size) < 0.3
        safe = pruning.SafeRows(rows=~interruptible, any_spot=bool(interruptible.any()))
        whole_mask = cost <= thresholds.cost
        if np.isfinite(thresholds.value):
            whole_mask |= bounds.value(3.0) <= thresholds.value
        if thresholds.safe_key is not None:
            whole_mask |= ~interruptible & (bounds.ranked(request) <= thresholds.safe)
        by_hours = hours <= thresholds.hours
        whole, fastest = pruning.kept_rows(bounds, thresholds, request, safe)
        if rank_by == "time":
            assert np.array_equal(whole, np.flatnonzero(whole_mask | by_hours)), trial
            assert fastest.size == 0
        else:
            assert np.array_equal(whole, np.flatnonzero(whole_mask)), trial
            assert np.array_equal(fastest, np.flatnonzero(by_hours & ~whole_mask)), trial


def test_rows_supplying_no_count_are_bounded_past_every_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row that supplies none of a layout's counts has +inf bounds: whether they come out of the
    arithmetic (positive hours: ``time_rate`` +inf there) or are set (some row's hours unknown or 0)."""
    # Every seventh offer out of stock: it supplies no count at all.
    offers = [
        msgspec.structs.replace(item, available_cards=0) if index % 7 == 0 else item
        for index, item in enumerate(_catalog(2).offers)
    ]
    market = snapshot(offers)
    calls: list[tuple[Any, ...]] = []
    original = pruning.row_bounds

    def capturing(*args: Any) -> pruning.RowBounds:
        calls.append(args)
        return original(*args)

    monkeypatch.setattr(evaluation, "row_bounds", capturing)
    answers(market, list(requests(41, 60, market)), _PRUNED)
    unreachable_seen = 0
    for tables, speeds, one_card_hours, extra_hours, matching, fewest in calls:
        unreachable = ~speeds.supplied
        unreachable_seen += int(unreachable.sum())
        one_unknown = one_card_hours.copy()
        one_unknown[one_unknown.size // 2] = np.nan
        for hours in (one_card_hours, one_unknown, np.zeros_like(one_card_hours)):
            bounds = original(tables, speeds, hours, extra_hours, matching, fewest)
            assert np.all(bounds.cost[unreachable] == np.inf)
            assert np.all(bounds.hours[unreachable] == np.inf)
    assert unreachable_seen > 0


def _spot(sku: str, rate_cny: float) -> Offer:
    card_minute = CardHourPricing(cny_per_card_hour=rate_cny, granularity_s=60)
    return msgspec.structs.replace(
        offer("js-spot", sku, gpu="h100", pricing=card_minute), spot=True, spot_interruptions_per_month=2.0
    )


def _bills(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The cells of each bill ``evaluation`` runs from now on."""
    billed: list[int] = []
    original = evaluation._bill

    def counting(job: Any, layout: Layout, *speedups: Any) -> Any:
        billed.append(layout.cells.size)
        return original(job, layout, *speedups)

    monkeypatch.setattr(evaluation, "_bill", counting)
    return billed


def test_the_plan_without_the_spot_risk_is_found_past_the_rows_seeded_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A spot recommendation returns the best plan without the risk too, so rows without it are kept up
    to that plan's cost, past the spot rows' threshold. Here the seeds' safe rows are 40 hourly offers
    whose bounds (1.5 h of a card) undercut what they bill (2 h); the best safe plan is a per-minute
    offer whose bound, 1.8, is above every seed's: only that threshold bills it."""
    spot = [_spot(f"spot-{index}", 0.2 + index / 1000) for index in range(100)]
    hourly = [offer("js-hourly", f"h-{index}", pricing=CardHourPricing(cny_per_card_hour=1.0 + index / 1000))
              for index in range(40)]  # fmt: skip
    minute = offer("js-minute", "m", pricing=CardHourPricing(cny_per_card_hour=1.2, granularity_s=60))
    market = snapshot([*spot, *hourly, minute])
    request = msgspec.convert({"workload": {"gpu_hours": 1.5, "reference_gpu": "rtx4090"}}, QuoteRequest)
    billed = _bills(monkeypatch)
    pruned = build_quote(market, request, options=_PRUNED)
    assert len(billed) == 2  # the seeds, then the rows the safe plan's cost keeps
    assert [quote.offer_id for quote in pruned.quotes if quote.id == pruned.safe] == [minute.id]
    assert msgspec.json.encode(pruned) == msgspec.json.encode(
        build_quote(market, request, options=_REFERENCE)
    )


def test_rows_tied_on_a_seed_key_are_billed_in_the_first_bill(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows alike share a bound (the same GPU and most cards: the same least hours), and every one at or
    under the threshold is billed: seeded together, a short job on 120 of them is billed once."""
    alike = [offer("js-alike", f"a-{index}", pricing=CardHourPricing(cny_per_card_hour=2.0 + index / 100))
             for index in range(120)]  # fmt: skip
    market = snapshot(alike)
    request = msgspec.convert({"workload": {"gpu_hours": 1.0, "reference_gpu": "rtx4090"}}, QuoteRequest)
    billed = _bills(monkeypatch)
    pruned = build_quote(market, request, options=_PRUNED)
    assert len(billed) == 1
    assert msgspec.json.encode(pruned) == msgspec.json.encode(
        build_quote(market, request, options=_REFERENCE)
    )


def test_a_request_nothing_fits_bills_its_first_rows_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """With no candidate anywhere (a model no allowed count holds, counts no offer sells, filters no
    offer passes), there is nothing to rank: the answer reads the judgement of every cell and evaluates
    again with each cause lifted, so the first evaluation bills only the rows it seeds (at most half the
    layout here), and the answer is the reference's and the one billing every row."""
    unpruned = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(bound_pruning=False))
    snapshot = catalog(26, 3_000, clusters=0, packaged_vendors=0)
    billed = count_billed_cells(monkeypatch)
    for body in (
        {"workload": {"gpu_hours": 50, "reference_gpu": "rtx4090", "model_params_b": 70, "task": "full_finetune"},
         "card_counts": [1, 2]},
        {"workload": {"gpu_hours": 50, "reference_gpu": "rtx4090"}, "card_counts": [1024],
         "pricing": ["card_hour", "bundle", "term", "mixed"]},
        {"workload": {"gpu_hours": 50, "reference_gpu": "rtx4090", "model_params_b": 180, "task": "full_finetune"},
         "gpus": ["rtx4090", "rtx3090"], "pricing": ["card_hour"]},
    ):  # fmt: skip
        request = msgspec.convert(body, QuoteRequest)
        billed.clear()
        pruned = build_quote(snapshot, request, options=_PRUNED)
        first_billed = billed[0]
        billed.clear()
        whole = build_quote(snapshot, request, options=unpruned)
        reference = build_quote(snapshot, request, options=_REFERENCE)
        assert msgspec.json.encode(pruned) == msgspec.json.encode(whole) == msgspec.json.encode(reference)
        assert not pruned.quotes, body
        assert first_billed < billed[0] / 2, (body, first_billed, billed[0])
