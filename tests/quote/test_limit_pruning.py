"""Limits billed only where they can be met answer exactly what the exhaustive evaluation answers.

With a deadline or a budget (judged on the expected figures), a large table bills only the rows whose
least hours are not past the deadline or whose least cost is not past the budget, however they are shown;
the other rows' cells are judged past them without figures (``service.quote.evaluate.pruning.
rows_within_reach``). The limits here are drawn where that matters: at the hours and costs a request's
own candidates take (the cut between billed and set-aside rows runs through the candidates), at the
rounding edges and the judge's band around them, alone and together, judged on the expected figures or
on the high end (which the bill then holds for every billed cell), with lead times, spot offers and
every ``rank_by``; each answer is compared byte for byte with the reference evaluation (every fast path
off), over seeded catalogs of several sizes run with pruning on every table.
"""

from __future__ import annotations

import random
from collections import Counter
from functools import cache
from typing import Any

import msgspec
import numpy as np
import pytest

from schemas.quote import QuoteRequest, RankBy, Workload
from service.errors import InvalidRequest
from service.quote import FastPaths, QuoteOptions, Snapshot, build_quote, nearest
from service.quote.evaluate import evaluation, pruning
from tests.quote.factories import MAX_AGE_S, NOW, count_billed_cells
from tests.quote.seeded import answers, catalog, requests, without_limits

_PRUNED = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))
_REFERENCE = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths.none())
# Every fast path but the bound pruning: what a pruned evaluation is measured against.
_UNPRUNED = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(bound_pruning=False))
# (seed, offers, clusters, packaged vendors)
_CATALOGS = ((41, 120, 6, 3), (42, 500, 24, 8), (43, 900, 40, 0))
_REQUESTS = 100
# Where a limit is put from a candidate's hours or cost: on them, just inside and outside the rounding to
# hundredths, and about the judge's band (an hour, a yuan) past them (a row's cut).
_OFFSETS = (0.0, 0.004, 0.006, -0.006, 0.99, 1.0, 1.01, 3.0)


@cache
def _catalog(at: int) -> Snapshot:
    seed, offers, clusters, packaged = _CATALOGS[at]
    return catalog(seed, offers, clusters=clusters, packaged_vendors=packaged)


def _near(figures: list[float], rng: random.Random) -> float:
    limit = rng.choice(figures) + rng.choice(_OFFSETS)
    if rng.random() < 0.3:
        limit *= rng.choice((0.2, 0.5, 2.0, 10.0))
    return round(max(0.01, limit), 3)


def _with_limits(snapshot: Snapshot, request: QuoteRequest, rng: random.Random) -> list[QuoteRequest]:
    """``request`` with a deadline, a budget and both, drawn about the hours and costs its candidates
    take."""
    base = without_limits(request)
    try:
        quotes = build_quote(snapshot, base, options=_REFERENCE).quotes
    except InvalidRequest:
        return [msgspec.structs.replace(base, deadline_hours=24.0, budget_cny=100.0)]
    hours = [quote.hours.expected for quote in quotes] or [1.0]
    costs = [quote.cost_cny.expected for quote in quotes] or [10.0]
    high_hours = [quote.hours.high for quote in quotes] or [1.0]
    high_costs = [quote.cost_cny.high for quote in quotes] or [10.0]
    return [
        msgspec.structs.replace(base, deadline_hours=_near(hours, rng)),
        msgspec.structs.replace(base, deadline_hours=_near(hours, rng)),
        msgspec.structs.replace(base, budget_cny=_near(costs, rng)),
        msgspec.structs.replace(base, deadline_hours=_near(hours, rng), budget_cny=_near(costs, rng)),
        # Judged on the high end, each limit alone and with the other judged on the expected figures.
        msgspec.structs.replace(base, deadline_hours=_near(high_hours, rng), deadline_confidence="high"),
        msgspec.structs.replace(
            base,
            deadline_hours=_near(hours, rng),
            budget_cny=_near(high_costs, rng),
            budget_confidence="high",
        ),
    ]


@pytest.mark.parametrize("at", range(len(_CATALOGS)))
def test_limit_pruned_answers_are_the_exhaustive_ones(at: int) -> None:
    snapshot = _catalog(at)
    rng = random.Random(at)
    asked = [
        limited
        for request in requests(_CATALOGS[at][0], _REQUESTS, snapshot)
        for limited in _with_limits(snapshot, request, rng)
    ]
    assert answers(snapshot, asked, _PRUNED) == answers(snapshot, asked, _REFERENCE)


def test_a_tight_deadline_bills_the_rows_that_can_meet_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above means something only if rows are set aside: a long job due soon bills the
    few rows fast enough for it, a small budget the few cheap enough (judged on the expected figures or
    on the high end), and the requests above take that path in numbers."""
    snapshot = _catalog(2)
    billed = count_billed_cells(monkeypatch)
    for body in (
        {"workload": {"gpu_hours": 400, "reference_gpu": "rtx4090"}, "deadline_hours": 30},
        {"workload": {"gpu_hours": 40, "reference_gpu": "rtx4090"}, "budget_cny": 70},
        # Judged on the high end: the rows billed hold it for every billed cell, and no other row's.
        {
            "workload": {"gpu_hours": 400, "reference_gpu": "rtx4090"},
            "deadline_hours": 30,
            "deadline_confidence": "high",
        },
        {
            "workload": {"gpu_hours": 40, "reference_gpu": "rtx4090"},
            "budget_cny": 70,
            "budget_confidence": "high",
        },
    ):
        billed.clear()
        request = msgspec.convert(body, QuoteRequest)
        pruned = build_quote(snapshot, request, options=_PRUNED)
        reference = build_quote(snapshot, request, options=_REFERENCE)
        assert pruned == reference and pruned.quotes
        assert billed[0] < billed[1] / 4, body

    taken: list[bool] = []
    limits_pruned = evaluation._limits_pruned

    def recording(*args: Any) -> evaluation.Evaluation | None:
        result: evaluation.Evaluation | None = limits_pruned(*args)
        taken.append(result is not None)
        return result

    monkeypatch.setattr(evaluation, "_limits_pruned", recording)
    rng = random.Random(7)
    asked = [d for r in requests(43, 40, snapshot) for d in _with_limits(snapshot, r, rng)]
    answers(snapshot, asked, _PRUNED)
    assert sum(taken) >= 10 and not all(taken), (sum(taken), len(taken))  # pruned often; whole when no saving


def test_limits_nothing_meets_bill_the_rows_within_reach_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """When no candidate meets the limits, the answer (why nothing fits, the nearest option past each
    limit) reads the judgement of every cell and evaluates again with each limit lifted: the first
    evaluation bills only the rows within reach, and the answer is the reference's."""
    snapshot = _catalog(2)
    billed = count_billed_cells(monkeypatch)
    for body in (
        {"workload": {"gpu_hours": 4_000, "reference_gpu": "rtx4090"}, "deadline_hours": 2},
        {"workload": {"gpu_hours": 900, "reference_gpu": "rtx4090", "model_params_b": 14}, "budget_cny": 90},
        {"workload": {"gpu_hours": 600, "reference_gpu": "h800"}, "deadline_hours": 3, "budget_cny": 400},
        {"workload": {"gpu_hours": 600, "reference_gpu": "h800"}, "deadline_hours": 3, "rank_by": "time"},
    ):
        request = msgspec.convert(body, QuoteRequest)
        billed.clear()
        pruned = build_quote(snapshot, request, options=_PRUNED)
        first_billed = billed[0]
        billed.clear()
        unpruned = build_quote(snapshot, request, options=_UNPRUNED)  # the same layout, every row billed
        reference = build_quote(snapshot, request, options=_REFERENCE)
        assert msgspec.json.encode(pruned) == msgspec.json.encode(reference) == msgspec.json.encode(unpruned)
        assert not pruned.quotes and pruned.excluded.deadline + pruned.excluded.budget > 0, body
        assert first_billed < billed[0] / 4, (body, first_billed, billed[0])


def test_rows_are_set_aside_only_past_the_band() -> None:
    """A row is set aside only when its least hours (cost) are further past the deadline (budget) than
    the judge's band (1, or 1e-9 of a huge limit), and past every limit set: at the band's edge it is
    billed, just beyond it not; NaN bounds are billed, infinite ones (no candidate) set aside."""
    for limit in (0.01, 0.5, 24.0, 1e3, 7.5e12):
        edge = limit + max(1.0, limit * 1e-9)
        figures = np.array([0.0, limit, edge, np.nextafter(edge, np.inf), edge * 2, np.inf, np.nan])
        near = np.zeros(figures.size)
        for hours, cost, deadline, budget in (
            (figures, near, limit, None),
            (near, figures, None, limit),
            (figures, figures, limit, limit),
        ):
            bounds = pruning.RowBounds(cost=cost, hours=hours)
            assert pruning.rows_within_reach(bounds, deadline, budget).tolist() == [0, 1, 2, 6]
        # Past one limit and within the other: billed.
        bounds = pruning.RowBounds(cost=near, hours=figures)
        assert pruning.rows_within_reach(bounds, limit, limit).tolist() == list(range(figures.size))


def test_the_cost_bound_counts_only_the_counts_that_hold_the_model() -> None:
    """``RowSpeedups.least_ratio_holding``: per row, the least n / s(n) over the layout's counts of at
    least the row's fewest cards (a cell with fewer fails on memory), +inf where no count holds it; the
    plain least ratio when every count does. Checked against the plain minimum over random tables."""
    rng = np.random.default_rng(3)
    for trial in range(50):
        cards = np.unique(rng.integers(1, 64, rng.integers(1, 12))).astype(np.float64)
        columns, rows = int(rng.integers(1, 5)), 40
        expected = np.sort(rng.uniform(0.5, 1.0, (cards.size, columns)), axis=0) * cards[:, None]
        code = rng.integers(0, columns, rows)
        ratios = cards[:, None] / expected
        speeds = pruning.RowSpeedups(
            fastest=np.ones(rows),
            supplied=np.ones(rows, dtype=np.bool_),
            rate_per_card_hour=np.ones(rows),
            ratio_from=np.minimum.accumulate(ratios[::-1], axis=0)[::-1],
            cards=cards,
            code=code,
        )
        fewest = rng.choice(np.concatenate((cards, cards + 0.5, [1.0, 100.0])), rows)
        if trial % 5 == 0:
            fewest = np.full(rows, cards[0])
        want = [
            min((ratios[i, code[row]] for i in range(cards.size) if cards[i] >= fewest[row]), default=np.inf)
            for row in range(rows)
        ]
        assert speeds.least_ratio_holding((None, fewest)).tolist() == want


@pytest.mark.parametrize("confidence", ["expected", "high"])
def test_the_nearest_option_past_a_missed_limit_is_the_exhaustive_one(
    confidence: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When nothing meets the limits, the nearest option past each is found on the request with that
    limit lifted, pruned as any request is, the limits judged on the expected figures or on the high
    end, and said exactly as the reference says it."""
    snapshot = _catalog(2)
    read: list[int] = []  # the cells billed by each evaluation a nearest option is read from
    original = nearest._nearest_option

    def recording(found: evaluation.Evaluation, *args: Any, **kwargs: Any) -> Any:
        read.append(found.cells.size)
        return original(found, *args, **kwargs)

    monkeypatch.setattr(nearest, "_nearest_option", recording)
    rng = random.Random(11)
    fewer = same = 0
    for request in requests(44, 60, snapshot):
        missed = msgspec.structs.replace(
            request,
            deadline_hours=rng.choice((None, 0.05, 0.4)),
            budget_cny=rng.choice((None, 0.5, 3.0)),
            deadline_confidence=confidence,
            budget_confidence=confidence,
        )
        read.clear()
        pruned = answers(snapshot, [missed], _PRUNED)
        by_pruned = list(read)
        read.clear()
        assert pruned == answers(snapshot, [missed], _UNPRUNED) == answers(snapshot, [missed], _REFERENCE)
        assert len(by_pruned) == len(read) // 2  # the unpruned evaluations', then the reference's
        unpruned = read[: len(by_pruned)]
        fewer += sum(mine < whole for mine, whole in zip(by_pruned, unpruned, strict=True))
        same += sum(mine == whole for mine, whole in zip(by_pruned, unpruned, strict=True))
    assert fewer >= 20, (fewer, same)  # the lifted evaluations bill a few rows' cells


@pytest.mark.parametrize("looked", [4, 4_096])
def test_the_plan_free_of_risk_is_looked_for_among_the_least_keys(
    monkeypatch: pytest.MonkeyPatch, looked: int
) -> None:
    """Where most rows are within reach of the limits, the least key free of risk is looked for among
    the cells with the least keys (``evaluation._least_risk_free_key``): at the least key on capacity no
    one takes back, then up to about the ``looked``-th. Found at the first look, at the second, or at
    neither (the rows the ranking returns are then billed first and it is looked for among them), every
    answer is the exhaustive one; with few looked at, each way is taken."""
    monkeypatch.setattr(evaluation, "_RISK_FREE_LOOKED", looked)
    search, found = evaluation._least_risk_free_key, Counter[str]()

    def counted(job: Any, at: Any, candidates: Any) -> float | None:
        key = search(job, at, candidates)
        cost, hours, spot = candidates
        least = float(evaluation._ranking_key(job.resolved.request, cost, hours)[~spot].min())
        found["neither" if key is None else "first" if key == least else "second"] += 1
        return key

    monkeypatch.setattr(evaluation, "_least_risk_free_key", counted)
    asked, snapshots = [], []
    for at in range(len(_CATALOGS)):
        snapshot, rng = _catalog(at), random.Random(100 + at)
        limited = [
            one
            for request in requests(_CATALOGS[at][0] + 7, 40, snapshot)
            for one in _with_limits(snapshot, request, rng)
        ]
        snapshots.append(snapshot)
        asked.append(limited)
    for snapshot, limited in zip(snapshots, asked, strict=True):
        assert answers(snapshot, limited, _PRUNED) == answers(snapshot, limited, _REFERENCE)
    assert found["first"] >= 20
    if looked < 100:
        assert found["second"] >= 3 and found["neither"] >= 3


def test_a_spot_plan_within_the_limits_is_not_the_plan_free_of_risk() -> None:
    """On a larger catalog of spot and on-demand offers, deadlines and budgets drawn across the jobs'
    whole range and every ranking: where the first on-demand plan's high end passes a limit, a spot plan
    within it must not stand for the plan free of risk (on capacity no one takes back), or the rows up to
    the real one go unbilled and the answer names another. Every answer is the unpruned one's."""
    snapshot, rng = catalog(5, 3_000, clusters=40, packaged_vendors=6), random.Random(5)
    asked = []
    for _ in range(300):
        workload = Workload(
            gpu_hours=round(rng.uniform(1, 5_000), 3),
            reference_gpu=rng.choice(("rtx4090", "a100-80g", "h800", "l40s", "h20")),
            model_params_b=rng.choice((None, 7, 14, 32, 70)),
        )
        limits: dict[str, Any] = {}
        drawn = rng.random()
        if drawn < 0.8:
            limits["deadline_hours" if drawn < 0.5 else "budget_cny"] = (
                round(rng.uniform(2, 300), 2) if drawn < 0.5 else round(rng.uniform(50, 30_000), 2)
            )
        else:
            limits |= {"deadline_hours": round(rng.uniform(2, 300), 2), "budget_cny": 15_000.0}
        rank_by: RankBy = rng.choice(("cost", "cost", "time", "value"))
        if rank_by == "value":
            limits["time_value_cny_per_hour"] = round(rng.uniform(1, 300), 2)
        asked.append(QuoteRequest(workload=workload, rank_by=rank_by, **limits))
    assert answers(snapshot, asked, _PRUNED) == answers(snapshot, asked, _UNPRUNED)
