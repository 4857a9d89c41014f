"""A deadline or a budget most rows can meet answers exactly what the exhaustive evaluation answers.

When the rows that can meet the limits hold most of a large table, every cell's expected hours and cost
are worked out by themselves and judged, and only the rows the ranking can return are billed whole
(``service.quote.evaluate.evaluation._ranked_within_limits``); the first candidate without a risk, which
a response names and which can rank far down, widens them. The limits here are drawn loose: a few times
the hours and costs the request's own quotes take, or far past every candidate, alone and together,
with every ``rank_by`` and time values, over seeded catalogs with spot offers, lead times, packages and
clusters. Each answer is compared byte for byte with the reference evaluation (every fast path off).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from functools import cache
from typing import Any

import msgspec
import numpy as np
import pytest

from schemas.quote import QuoteRequest
from service.errors import InvalidRequest
from service.quote import FastPaths, QuoteOptions, Snapshot, build_quote, engine, rank
from service.quote.evaluate import evaluation, known
from tests.quote.factories import MAX_AGE_S, NOW, count_billed_cells
from tests.quote.seeded import answers, catalog, requests, without_limits

_PRUNED = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))
_REFERENCE = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths.none())
# (seed, offers, clusters, packaged vendors)
_CATALOGS = ((51, 150, 8, 3), (52, 600, 30, 8), (53, 1_000, 45, 2))
_REQUESTS = 70
# How far past a quote's hours or cost a loose limit lies.
_LOOSE = (1.5, 3.0, 10.0, 1e6)


@cache
def _catalog(at: int) -> Snapshot:
    seed, offers, clusters, packaged = _CATALOGS[at]
    return catalog(seed, offers, clusters=clusters, packaged_vendors=packaged)


def _loose(figures: list[float], rng: random.Random) -> float:
    return round(max(0.01, rng.choice(figures) * rng.choice(_LOOSE)), 3)


def _with_loose_limits(snapshot: Snapshot, request: QuoteRequest, rng: random.Random) -> list[QuoteRequest]:
    """``request`` with a loose deadline, budget and both, judged on the expected figures."""
    base = without_limits(request)
    try:
        quotes = build_quote(snapshot, base, options=_REFERENCE).quotes
    except InvalidRequest:
        return []
    hours = [quote.hours.high for quote in quotes] or [1.0]
    costs = [quote.cost_cny.high for quote in quotes] or [10.0]
    return [
        msgspec.structs.replace(base, deadline_hours=_loose(hours, rng)),
        msgspec.structs.replace(base, budget_cny=_loose(costs, rng)),
        msgspec.structs.replace(base, deadline_hours=_loose(hours, rng), budget_cny=_loose(costs, rng)),
    ]


def _risky_limits(
    snapshot: Snapshot, asked: Iterable[QuoteRequest], rng: random.Random, shares: tuple[float, ...]
) -> list[QuoteRequest]:
    """Each of ``asked`` with a limit between the expected and the high figure of one of its top three
    quotes (``shares`` of the way): the cheapest are slow, the fastest dear, so a deadline on a cost
    ranking (a budget on a time ranking) that the top quotes barely meet is one most rows can meet,
    and the plan without a risk lies further down."""
    limited = []
    for request in asked:
        rank_by = rng.choice(("cost", "time"))
        unlimited = msgspec.structs.replace(
            request, deadline_hours=None, budget_cny=None, rank_by=rank_by, time_value_cny_per_hour=None
        )
        try:
            quotes = build_quote(snapshot, unlimited, options=_REFERENCE).quotes
        except InvalidRequest:
            continue
        if not quotes:
            continue
        quote, share = rng.choice(quotes[:3]), rng.choice(shares)
        if rank_by == "cost":
            deadline = quote.hours.expected + share * (quote.hours.high - quote.hours.expected)
            limited.append(msgspec.structs.replace(unlimited, deadline_hours=round(deadline, 2)))
        else:
            budget = quote.cost_cny.expected + share * (quote.cost_cny.high - quote.cost_cny.expected)
            limited.append(msgspec.structs.replace(unlimited, budget_cny=round(budget, 2)))
    return limited


def _recording(monkeypatch: pytest.MonkeyPatch, name: str) -> list[bool]:
    """From now on, per call of ``evaluation.<name>``, whether it answered (not None)."""
    taken: list[bool] = []
    original = getattr(evaluation, name)

    def recording(*args: Any) -> Any:
        result = original(*args)
        taken.append(result is not None)
        return result

    monkeypatch.setattr(evaluation, name, recording)
    return taken


@pytest.mark.parametrize("at", range(len(_CATALOGS)))
def test_loose_limit_answers_are_the_exhaustive_ones(at: int, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = _catalog(at)
    rng = random.Random(at)
    asked = [
        limited
        for request in requests(_CATALOGS[at][0], _REQUESTS, snapshot)
        for limited in _with_loose_limits(snapshot, request, rng)
    ]
    taken = _recording(monkeypatch, "_ranked_within_limits")
    pruned = answers(snapshot, asked, _PRUNED)
    monkeypatch.undo()
    assert pruned == answers(snapshot, asked, _REFERENCE)
    assert sum(taken) >= 20, (sum(taken), len(taken))  # the comparison reaches the path in numbers


def test_the_first_plan_without_a_risk_is_billed_however_far_down(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows are widened to the first candidate free of risk when it ranks past the ranking's
    thresholds, and the answers stay the reference's: limits between the expected and the high figures
    of the top quotes, which their expected figures meet and their high ends pass, so the plan without
    a risk lies further down (on capacity no one takes back)."""
    snapshot = _catalog(2)
    billed = _recording(monkeypatch, "_billed_ranked")
    asked = _risky_limits(snapshot, requests(55, 120, snapshot), random.Random(5), (0.3, 0.6, 0.9))
    ranked = _recording(monkeypatch, "_ranked_within_limits")
    pruned = answers(snapshot, asked, _PRUNED)
    monkeypatch.undo()
    assert pruned == answers(snapshot, asked, _REFERENCE)
    widened = len(billed) - sum(ranked)
    assert sum(ranked) >= 10 and widened >= 3, (sum(ranked), widened)


def test_a_loose_budget_bills_few_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison above means something only if few cells are billed: a budget every row can meet
    bills the rows the ranking can return, not the table, and answers as the reference does."""
    snapshot = _catalog(2)
    for body in (
        {"workload": {"gpu_hours": 40, "reference_gpu": "rtx4090"}, "budget_cny": 1e7},
        {"workload": {"gpu_hours": 400, "reference_gpu": "rtx4090"}, "deadline_hours": 1e5},
        {
            "workload": {"gpu_hours": 400, "reference_gpu": "rtx4090"},
            "deadline_hours": 1e5,
            "budget_cny": 1e8,
            "rank_by": "value",
            "time_value_cny_per_hour": 30,
        },
    ):
        request = msgspec.convert(body, QuoteRequest)
        billed = count_billed_cells(monkeypatch)
        pruned = build_quote(snapshot, request, options=_PRUNED)
        reference = build_quote(snapshot, request, options=_REFERENCE)
        monkeypatch.undo()
        assert pruned == reference and pruned.quotes
        assert billed[0] < billed[1] / 4, (body, billed)


@pytest.mark.parametrize("at", range(len(_CATALOGS)))
def test_the_first_candidate_without_a_risk_is_among_the_billed_cells(
    at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether or not a response names it, the first candidate in ranking order free of risk (its high
    end within the limits, on capacity no one takes back), found over the reference evaluation's every
    cell, is among the cells the pruned evaluation billed, for every request the path answers."""
    snapshot = _catalog(at)
    found: list[tuple[Any, evaluation.Evaluation]] = []
    original = evaluation._ranked_within_limits

    def recording(job: Any, bounds: Any) -> evaluation.Evaluation | None:
        result = original(job, bounds)
        if result is not None:
            found.append((job.resolved, result))
        return result

    monkeypatch.setattr(evaluation, "_ranked_within_limits", recording)
    asked = _risky_limits(snapshot, requests(57 + at, 120, snapshot), random.Random(9 + at), (0.2, 0.5, 0.8))
    for request in asked:
        build_quote(snapshot, request, options=_PRUNED)
    monkeypatch.undo()
    tables = snapshot.tables
    checked = 0
    for resolved, pruned in found:
        reference = engine._evaluated(tables, resolved, _REFERENCE, FastPaths.none())
        keys = engine._keys(reference, tables, resolved.request)
        cells = np.flatnonzero(reference.qualifying)
        assert reference.high_ok is not None
        free = reference.high_ok.at(cells) & ~tables.interruptible.take(reference.cell_offer.take(cells))
        first = rank.first_among(keys, free, resolved.request.rank_by, top_k=False)
        if first is None:
            continue
        position = int(keys.positions[first])
        assert position in set(pruned.cells.tolist()), resolved.request
        checked += 1
    assert checked >= 10, checked


@pytest.mark.parametrize(("gpu_hours", "deadline_hours"), [(2_000, 150), (5_000, 500), (400, 60)])
def test_a_deadline_met_only_at_many_cards_bills_the_rows_within_it(
    gpu_hours: float, deadline_hours: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deadline the one-card cells of most rows pass, met at many cards: the rows' bounds (their cheap
    one-card cost, deadline or not) keep most of the table, the candidates within the deadline a few
    rows (``evaluate.known``). Billed by their own figures, the answer is the reference's in a tenth of
    the cells where, by the bounds, the path gave up and billed every cell."""
    snapshot = catalog(54, 1_000, clusters=0, packaged_vendors=0)
    request = msgspec.convert(
        {"workload": {"gpu_hours": gpu_hours, "reference_gpu": "rtx4090"}, "deadline_hours": deadline_hours},
        QuoteRequest,
    )
    reference = build_quote(snapshot, request, options=_REFERENCE)
    billed = count_billed_cells(monkeypatch)
    taken = _recording(monkeypatch, "_ranked_within_limits")
    assert build_quote(snapshot, request, options=_PRUNED) == reference and reference.quotes
    monkeypatch.setattr(known.KnownCandidates, "of", classmethod(lambda cls, *args: None))
    assert build_quote(snapshot, request, options=_PRUNED) == reference
    monkeypatch.undo()
    by_candidates, by_bounds = billed
    assert taken[0] and by_candidates * 4 < by_bounds, (taken, billed)
