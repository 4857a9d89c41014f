"""A deadline that leaves no candidate out is evaluated as without it, and answers what the exhaustive
evaluation answers.

When every matching row's slowest expected hours (its one-card hours over the least speed-up among the
layout's counts, with the copy's and the lead time) are within the deadline however shown, no cell is
past it: the request is bound-pruned as one without it, and the billed cells' high ends are judged
against it (``evaluation._deadline_passes_nothing``, ``_high_ends_within``). The deadlines here are drawn
far past a request's candidates, and about the slowest cell's hours, where the judge's band and the
rounding to hundredths decide; with spot offers, lead times, data copied from another city and every
``rank_by``, each asked again with a vendor filter that removes the vendors its own answer returned. Each
answer is compared byte for byte with the reference evaluation (every fast path off).
"""

from __future__ import annotations

import random
from functools import cache

import msgspec
import numpy as np
import pytest

from schemas.offer import CardHourPricing, NodeHourPricing
from schemas.quote import QuoteRequest
from service.errors import InvalidRequest
from service.quote import FastPaths, QuoteOptions, Snapshot, build_quote, engine
from service.quote.evaluate import evaluation
from service.quote.evaluate.figures import Figure
from tests.quote.factories import MAX_AGE_S, NOW, count_billed_cells, offer, snapshot
from tests.quote.seeded import answers, catalog, requests, without_limits

_PRUNED = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))
_REFERENCE = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths.none())
# (seed, offers, clusters, packaged vendors)
_CATALOGS = ((61, 200, 8, 3), (62, 700, 30, 6))
_REQUESTS = 60
# About the judge's band (an hour past the slowest cell) and the rounding to hundredths on either side.
_EDGES = (0.99, 0.995, 1.0, 1.004, 1.006, 1.01, 1.5)


@cache
def _catalog(at: int) -> Snapshot:
    seed, offers, clusters, packaged = _CATALOGS[at]
    return catalog(seed, offers, clusters=clusters, packaged_vendors=packaged)


def _slowest_hours(snapshot: Snapshot, request: QuoteRequest) -> tuple[float, float] | None:
    """The most expected hours, and the most high-end hours, lead time added, of any cell of a matching
    row the request's layout bills (every cell, bounds too, in the reference evaluation); None when the
    request is refused or has no such cell."""
    try:
        resolved = engine._resolved(snapshot, request, _REFERENCE)
    except InvalidRequest:
        return None
    judged = engine._evaluated(snapshot.tables, resolved, _REFERENCE, FastPaths.none())
    rows = judged.cell_offer
    matching = judged.matching.take(rows)
    lead = snapshot.tables.lead_time_h.take(rows)[matching]
    expected = judged.figures[Figure.HOURS_EXPECTED][matching] + lead
    high = judged.figures[Figure.HOURS_HIGH][matching] + lead
    if np.isnan(expected).all():
        return None
    return float(np.nanmax(expected)), float(np.nanmax(high))


def _deadlines(snapshot: Snapshot, request: QuoteRequest, rng: random.Random) -> list[QuoteRequest]:
    """``request`` with deadlines far past its slowest cell, about it (the judge's band and the rounding),
    between its expected hours and its high end (where the high ends of the candidates returned decide
    the plan free of risk), and short of it (some cells past the deadline)."""
    base = without_limits(request)
    slowest = _slowest_hours(snapshot, base)
    if slowest is None:
        return [msgspec.structs.replace(base, deadline_hours=10_000.0)]
    expected, high = slowest
    drawn = (
        expected * rng.choice((1.2, 3.0, 50.0)) + 2,
        expected + rng.choice(_EDGES),
        expected + 1.0 + (high - expected) * rng.random(),
        expected * rng.choice((0.5, 0.8, 0.95, 0.99)),
        expected - rng.choice((23.0, 24.5, 25.0)),
    )
    confidence = rng.choice(("expected", "expected", "high"))
    asked = [
        msgspec.structs.replace(base, deadline_hours=round(max(deadline, 0.01), 3)) for deadline in drawn
    ]
    # The first also judged on the high end, the third with one quote: the plan free of risk is then
    # often past the candidates the response returns.
    asked[0] = msgspec.structs.replace(asked[0], deadline_confidence=confidence)
    asked.append(msgspec.structs.replace(asked[2], limit=1))
    # Judged on the high end, about its slowest cell: the interruptions a long job on many cards meets
    # can make it the slowest.
    for deadline in (high + rng.choice(_EDGES), high - rng.choice((0.5, 2.0, 10.0))):
        rounded = round(max(deadline, 0.01), 3)
        asked.append(msgspec.structs.replace(base, deadline_hours=rounded, deadline_confidence="high"))
    # A budget nothing meets beside a deadline nothing misses: the nearest option past the budget is
    # found with the budget lifted, the deadline kept, by the cost the budget judges (the high end's too).
    for budget_confidence in ("expected", "high"):
        asked.append(
            msgspec.structs.replace(
                asked[0], budget_cny=0.5, budget_confidence=budget_confidence, deadline_confidence=confidence
            )
        )
    return asked


def _without_returned_vendors(snapshot: Snapshot, request: QuoteRequest) -> QuoteRequest:
    """``request`` filtered to the vendors its own answer did not return (the rows a pruning keeps)."""
    try:
        returned = {quote.vendor for quote in build_quote(snapshot, request, options=_PRUNED).quotes}
    except InvalidRequest:
        return request
    others = sorted({offer.vendor for offer in snapshot.offers} - returned)
    return msgspec.structs.replace(request, vendors=others or ["none-such"])


def _asked(at: int) -> list[QuoteRequest]:
    snapshot = _catalog(at)
    rng = random.Random(at)
    drawn = [d for r in requests(_CATALOGS[at][0], _REQUESTS, snapshot) for d in _deadlines(snapshot, r, rng)]
    return drawn + [_without_returned_vendors(snapshot, request) for request in drawn[::3]]


@pytest.mark.parametrize("at", range(len(_CATALOGS)))
def test_a_deadline_passing_nothing_answers_what_the_exhaustive_evaluation_does(
    at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot, asked = _catalog(at), _asked(at)
    passes: list[bool] = []
    taken: list[bool] = []
    passes_nothing, within = evaluation._deadline_passes_nothing, evaluation._high_ends_within

    def judging(job: evaluation._Request) -> bool:
        passes.append(passes_nothing(job))
        return passes[-1]

    def recording(*args: object) -> evaluation.Evaluation | None:
        result = within(*args)  # type: ignore[arg-type]
        taken.append(result is not None)
        return result

    monkeypatch.setattr(evaluation, "_deadline_passes_nothing", judging)
    monkeypatch.setattr(evaluation, "_high_ends_within", recording)
    assert answers(snapshot, asked, _PRUNED) == answers(snapshot, asked, _REFERENCE)
    # The comparison means something only if each way is taken: a deadline that passes nothing (and
    # answers so) and one that passes some cells.
    assert sum(passes) >= 40 and passes.count(False) >= 40, (sum(passes), len(passes))
    assert sum(taken) >= 40, (sum(taken), len(taken))


def test_a_deadline_passing_nothing_bills_what_the_response_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long job with a deadline far past every candidate bills about what the same job without it
    bills, a fraction of what a deadline that leaves some cells out bills (every cell's hours and cost
    worked out, then the rows that can be returned)."""
    snapshot = _catalog(1)
    billed = count_billed_cells(monkeypatch)
    job = {"gpu_hours": 300, "reference_gpu": "rtx4090"}
    answered = {}
    for name, body in {
        "none": {"workload": job},
        "far": {"workload": job, "deadline_hours": 100_000},
    }.items():
        billed.clear()
        request = msgspec.convert(body, QuoteRequest)
        answered[name] = build_quote(snapshot, request, options=_PRUNED)
        assert msgspec.json.encode(answered[name]) == msgspec.json.encode(
            build_quote(snapshot, request, options=_REFERENCE)
        )
        assert billed[0] < billed[1] / 4, (name, billed)
    assert answered["far"].excluded == answered["none"].excluded
    assert [quote.id for quote in answered["far"].quotes] == [quote.id for quote in answered["none"].quotes]


@pytest.mark.parametrize("spot", [False, True], ids=["on-demand", "cheapest spot"])
def test_the_plan_free_of_risk_past_the_rows_billed_is_found(
    spot: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cheap H20 cards whose high end is past the deadline (their expected hours within it), A100s
    faster than everything, and one RTX 4090 that is neither the cheapest nor the fastest but the first
    plan free of risk. The bound-pruned rows hold the A100s alone beside the H20s, so the evaluation
    that passes nothing gives way to the limits' own, which bills up to the 4090. With the cheapest
    H20s spot, the rows without the spot risk are billed up to the cheapest of them billed, an H20 at
    risk (its high end past the deadline): still short of the 4090."""

    def card(price: float) -> CardHourPricing:
        return CardHourPricing(cny_per_card_hour=price, max_cards=1)

    offers = [offer(f"h20-{at:03d}", "h20", gpu="h20", pricing=card(2.0 + at / 100)) for at in range(120)]
    if spot:
        offers = [msgspec.structs.replace(item, spot=True) for item in offers[:60]] + [
            offer(f"h20-{at:03d}", "h20", gpu="h20", pricing=card(2.4 + at / 100)) for at in range(60, 120)
        ]
    offers += [
        offer(f"a100-{at:02d}", "a100", gpu="a100-40g", pricing=card(20.0 + at / 10)) for at in range(24)
    ]
    offers.append(offer("safe", "4090", gpu="rtx4090", pricing=card(4.0)))
    table = snapshot(offers)
    taken: list[bool] = []
    within = evaluation._high_ends_within

    def recording(*args: object) -> evaluation.Evaluation | None:
        result = within(*args)  # type: ignore[arg-type]
        taken.append(result is not None)
        return result

    monkeypatch.setattr(evaluation, "_high_ends_within", recording)
    body = {"workload": {"gpu_hours": 100, "reference_gpu": "rtx4090"}, "deadline_hours": 118, "limit": 1}
    request = msgspec.convert(body, QuoteRequest)
    pruned = build_quote(table, request, options=_PRUNED)
    assert msgspec.json.encode(pruned) == msgspec.json.encode(build_quote(table, request, options=_REFERENCE))
    assert taken == [False]
    assert (
        pruned.quotes[0].vendor == "h20-000" and pruned.safe is not None and pruned.safe.startswith("safe:")
    )


def test_a_cluster_slowest_on_its_most_cards_is_judged_at_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ethernet H800 nodes and a job heavy on communication: past a few nodes each doubling loses more
    than it adds, so the slowest cells are the most cards' (512 of them: about 291 expected hours, 533 at
    the high end, against 100 on one card), and the high end's slowest is on the low speed-up. A
    deadline between the expected and the high end's slowest passes every cell judged on the expected
    hours, and not judged on the high end; past both, every cell either way."""
    nodes = [
        offer(
            f"eth-{at:02d}",
            "h800",
            gpu="h800",
            interconnect="ethernet",
            pricing=NodeHourPricing(cny_per_node_hour=100.0 + at, cards_per_node=8, max_nodes=64),
        )
        for at in range(20)
    ]
    cards = [
        offer(f"card-{at:02d}", "4090", pricing=CardHourPricing(cny_per_card_hour=3.0 + at / 10))
        for at in range(20)
    ]
    table = snapshot(nodes + cards)
    passes: list[bool] = []
    passes_nothing = evaluation._deadline_passes_nothing

    def judging(job: evaluation._Request) -> bool:
        passes.append(passes_nothing(job))
        return passes[-1]

    monkeypatch.setattr(evaluation, "_deadline_passes_nothing", judging)
    workload = {"gpu_hours": 100, "reference_gpu": "rtx4090", "communication": "heavy"}
    for deadline, confidence in ((450, "expected"), (450, "high"), (700, "high")):
        body = {"workload": workload, "deadline_hours": deadline, "deadline_confidence": confidence}
        request = msgspec.convert(body, QuoteRequest)
        pruned = build_quote(table, request, options=_PRUNED)
        assert msgspec.json.encode(pruned) == msgspec.json.encode(
            build_quote(table, request, options=_REFERENCE)
        )
    assert passes == [True, False, True]
