"""What a request nothing fits is told of the supply and the fewest cards: the same as offer by offer.

When the caller's card counts leave every candidate out, the summary names the offers that sell the most
cards below the largest count asked (``nearest._supplies``: the largest first, then by vendor and GPU,
then in row order, each with the count nearest the caller's it runs the job at) and, per GPU, the fewest
cards that hold the model (``nearest._fewest_cards``). Both are worked out for every offer at once; here
they are checked against the rule written offer by offer, on seeded catalogs and requests whose counts
are too few or too many, and the search for the nearest count is made for the offers named alone.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import numpy as np
import pytest

from schemas.quote import QuoteRequest
from service.errors import InvalidRequest
from service.quote import FastPaths, QuoteOptions, Snapshot, build_quote, nearest
from service.quote.evaluate.evaluation import Evaluation
from service.quote.prose.empty import Supply
from service.quote.resolve import ResolvedRequest
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import catalog, requests, without_limits

_OPTIONS = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))
# (seed, offers, clusters, packaged vendors)
_CATALOGS = ((51, 400, 20, 4), (52, 1500, 60, 0))


def _supplies_offer_by_offer(
    relaxed: Evaluation, evaluation: Evaluation, resolved: ResolvedRequest, snapshot: Snapshot, top_k: bool
) -> tuple[Supply, ...]:
    tables, asked = snapshot.tables, max(resolved.card_counts or (1,))
    found: list[tuple[int, Supply]] = []
    for index in np.flatnonzero(evaluation.matching[: tables.offer_count]).tolist():
        most, limit, value = nearest._supply_limit(tables, index)
        if most >= asked:
            continue
        count = nearest._nearest_count(relaxed, snapshot, resolved, index, asked, top_k)
        offer = tables.offers[index]
        found.append((most, Supply(offer.vendor, offer.gpu, most, limit, value, count)))
    found.sort(key=lambda pair: (-pair[0], pair[1].vendor, pair[1].gpu))
    return tuple(supply for _, supply in found[: nearest._SUPPLIES_NAMED])


def _fewest_cell_by_cell(relaxed: Evaluation, snapshot: Snapshot) -> tuple[tuple[int, str], ...]:
    fewest: dict[str, int] = {}
    columns, offers = np.divmod(relaxed.cells[relaxed.qualifying], snapshot.tables.size)
    for column, offer in zip(columns.tolist(), offers.tolist(), strict=True):
        gpu, cards = snapshot.tables.offers[offer].gpu, relaxed.counts[column]
        fewest[gpu] = min(fewest.get(gpu, cards), cards)
    return tuple(sorted((cards, gpu) for gpu, cards in fewest.items()))


def _short_of_counts(snapshot: Snapshot, seed: int, count: int) -> list[QuoteRequest]:
    """Seeded requests with card counts too few for a large model, or more than most offers sell."""
    rng = random.Random(seed)
    asked = []
    for request in requests(seed, count, snapshot):
        base = without_limits(request)
        if rng.random() < 0.5:
            workload = msgspec.structs.replace(
                base.workload,
                model=None,
                model_params_b=rng.choice((13.0, 70.0, 180.0)),
                task="full_finetune",
            )
            base = msgspec.structs.replace(base, workload=workload)
            counts = rng.choice(((1,), (1, 2), (2, 4)))
        else:
            counts = rng.choice(((16,), (48,), (8, 64), (1024,)))
        asked.append(msgspec.structs.replace(base, card_counts=counts))
    return asked


@pytest.mark.parametrize("at", range(len(_CATALOGS)))
def test_supplies_and_fewest_cards_are_the_offer_by_offer_ones(
    at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed, offers, clusters, packaged = _CATALOGS[at]
    snapshot = catalog(seed, offers, clusters=clusters, packaged_vendors=packaged)
    compared = {"supplies": 0, "named": 0, "fewest": 0}
    supplies, fewest_cards = nearest._supplies, nearest._fewest_cards

    def checked_supplies(*args: Any) -> tuple[Supply, ...]:
        found = supplies(*args)
        assert found == _supplies_offer_by_offer(*args)
        compared["supplies"] += 1
        compared["named"] += len(found)
        return found

    def checked_fewest(relaxed: Evaluation, snapshot: Snapshot) -> tuple[tuple[int, str], ...]:
        found = fewest_cards(relaxed, snapshot)
        assert found == _fewest_cell_by_cell(relaxed, snapshot)
        compared["fewest"] += bool(found)
        return found

    monkeypatch.setattr(nearest, "_supplies", checked_supplies)
    monkeypatch.setattr(nearest, "_fewest_cards", checked_fewest)
    for request in _short_of_counts(snapshot, seed, 150):
        try:
            build_quote(snapshot, request, options=_OPTIONS)
        except InvalidRequest:
            continue
    # The comparison means something only if both were asked often, and offers were named.
    assert compared["supplies"] >= 20 and compared["named"] >= 40 and compared["fewest"] >= 20, compared


def test_only_the_offers_named_are_searched_for_their_nearest_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thousands of offers sell fewer cards than asked; the summary names three, and the search for the
    count nearest the caller's (which reads every cell) is made for those three alone."""
    snapshot = catalog(53, 3000, clusters=0, packaged_vendors=0)
    searched: list[int] = []
    search = nearest._nearest_count

    def counting(*args: Any) -> Any:
        searched.append(args[3])
        return search(*args)

    monkeypatch.setattr(nearest, "_nearest_count", counting)
    # The node-hour offers (which sell thousands of cards) filtered out: every other one sells fewer.
    body = {
        "workload": {"gpu_hours": 100, "reference_gpu": "rtx4090"},
        "card_counts": [1024],
        "pricing": ["card_hour", "bundle", "term", "mixed"],
    }
    response = build_quote(snapshot, msgspec.convert(body, QuoteRequest), options=_OPTIONS)
    assert response.quotes == [] and response.excluded.capacity > 2_000, response.excluded
    assert len(searched) == nearest._SUPPLIES_NAMED
    assert "supplies at most" in response.summary
