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
from dataclasses import replace
from typing import Any

import msgspec
import numpy as np
import pytest

from schemas.offer import CardHourPricing
from schemas.quote import QuoteRequest
from service.errors import InvalidRequest
from service.quote import FastPaths, QuoteOptions, Snapshot, build_quote, format_cny, hours_text, nearest
from service.quote.evaluate.evaluation import Evaluation
from service.quote.model.tables import OfferTables
from service.quote.prose.empty import NearestOption, Supply, SupplyLimit
from service.quote.resolve import ResolvedRequest
from tests.quote import factories
from tests.quote.factories import MAX_AGE_S, NOW
from tests.quote.seeded import catalog, requests, without_limits

_OPTIONS = QuoteOptions(now=NOW, price_max_age_s=MAX_AGE_S, fast_paths=FastPaths(prune_from_rows=0))
# (seed, offers, clusters, packaged vendors)
_CATALOGS = ((51, 400, 20, 4), (52, 1500, 60, 0))


def _supply_limit(tables: OfferTables, index: int) -> tuple[int, SupplyLimit, int]:
    """The most cards offer ``index`` supplies in one rental, what bounds it and that bound's figure."""
    terms = tables.terms[index]
    rental = terms.max_units * terms.unit_cards
    stock = float(tables.available_cards[index])
    in_all = float(tables.most_units[index]) * terms.unit_cards
    if stock < min(rental, in_all):
        return int(stock), "stock", int(stock)
    if in_all < rental:
        return int(in_all), "rental", int(in_all)
    if terms.spans_machines:
        return rental, "nodes", terms.max_units
    return rental, "machine" if rental == terms.machine_cards else "rental", rental


def _supplies_offer_by_offer(
    relaxed: Evaluation, evaluation: Evaluation, resolved: ResolvedRequest, snapshot: Snapshot, top_k: bool
) -> list[tuple[Supply, list[NearestOption]]]:
    """The supplies named, each with every nearest option its offers have (one search per offer)."""
    tables, asked = snapshot.tables, max(resolved.card_counts or (1,))
    found: list[tuple[int, str, str, int]] = []
    for index in np.flatnonzero(evaluation.matching[: tables.offer_count]).tolist():
        most = _supply_limit(tables, index)[0]
        if most < asked:
            found.append((-most, tables.offers[index].vendor, tables.offers[index].gpu, index))
    found.sort()
    named: dict[tuple[str, str, int, SupplyLimit, int], list[NearestOption]] = {}
    for _, vendor, gpu, index in found:
        sentence = (vendor, gpu, *_supply_limit(tables, index))
        if sentence not in named and len(named) == nearest._SUPPLIES_NAMED:
            continue
        option = nearest._nearest_count(relaxed, snapshot, resolved, np.array([index]), asked, top_k)
        named.setdefault(sentence, []).extend([] if option is None else [option])
    return [(Supply(*sentence, None), options) for sentence, options in named.items()]


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
        if rng.random() < 0.5:  # one GPU: many offers alike in what they supply
            base = msgspec.structs.replace(base, gpus=[rng.choice(("rtx4090", "a100-80g", "h800"))])
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
        expected = _supplies_offer_by_offer(*args)
        assert [replace(supply, nearest=None) for supply in found] == [supply for supply, _ in expected]
        for supply, (_, options) in zip(found, expected, strict=True):
            # The nearest option of the offers alike: at their most cards up to those asked, the cheapest.
            if not options:
                assert supply.nearest is None
                continue
            cards = max(option.cards for option in options)
            cheapest = min(option.cost_cny for option in options if option.cards == cards)
            assert supply.nearest in [o for o in options if (o.cards, o.cost_cny) == (cards, cheapest)]
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


def test_offers_alike_are_named_once_with_the_cheapest_of_them() -> None:
    """Three offers of one vendor, each one 8-card RTX 4090 machine at its own price, and two of another:
    asked for 16 cards, the summary names each vendor's supply once (not one sentence per offer, the
    same words three times), with the cheapest of its offers at 8 cards."""
    offers = [
        factories.offer(
            "js-alpha", f"m-{price}", pricing=CardHourPricing(cny_per_card_hour=price, max_cards=8)
        )
        for price in (3.0, 2.5, 2.8)
    ] + [
        factories.offer(
            "js-beta", f"m-{price}", pricing=CardHourPricing(cny_per_card_hour=price, max_cards=8)
        )
        for price in (4.0, 4.5)
    ]
    catalog_alike = factories.snapshot(offers)
    asked = {"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090"}, "card_counts": [16]}
    response = build_quote(catalog_alike, msgspec.convert(asked, QuoteRequest), options=_OPTIONS)
    assert response.quotes == []
    assert response.summary.count("js-alpha supplies at most 8 × RTX 4090 (one machine)") == 1
    assert response.summary.count("js-beta supplies at most 8 × RTX 4090 (one machine)") == 1
    for vendor, sku in (("js-alpha", "m-2.5"), ("js-beta", "m-4.0")):
        cheapest = {"workload": asked["workload"], "card_counts": [8], "vendors": [vendor]}
        quote = build_quote(catalog_alike, msgspec.convert(cheapest, QuoteRequest), options=_OPTIONS).quotes[
            0
        ]
        assert quote.offer_id == f"{vendor}:{sku}"
        told = f"{vendor} supplies at most 8 × RTX 4090 (one machine), and 8 × RTX 4090 take about"
        assert f"{told} {hours_text(quote.hours.expected)} h for {format_cny(quote.cost_cny.expected)}" in (
            response.summary
        )
