"""The PriceStore contract, run against the memory store and a real Redis alike."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest

from schemas.offer import BundlePricing, CardHourPricing
from service.store.base import HistoryBounds, PriceStore
from service.store.memory import MemoryPriceStore
from service.store.redis import RedisPriceStore
from tests.builders import FETCHED_AT, make_offer, ok_status


async def test_empty_store_reads_as_version_zero(store: PriceStore) -> None:
    assert await store.version() == 0
    contents = await store.read()
    assert contents.version == 0
    assert dict(contents.offers_by_vendor) == {}


async def test_write_reads_back_equal_offers_and_moves_the_version(store: PriceStore) -> None:
    offers = [
        make_offer(sku="4090"),
        make_offer(sku="4090x4", pricing=BundlePricing(cards=4, cny_per_bundle_hour=22)),
    ]
    version = await store.write_vendor("js-test", offers, ok_status("js-test", 2))
    assert version > 0
    assert await store.version() == version
    contents = await store.read()
    assert list(contents.offers_by_vendor["js-test"]) == offers
    assert contents.statuses["js-test"].offer_count == 2
    assert await store.write_vendor("js-test", offers, ok_status("js-test", 2)) == version + 1


async def test_a_vendors_offers_read_back_hold_each_repeated_value_once(store: PriceStore) -> None:
    """A decoder makes a new string or time per offer; what repeats across a vendor's offers (its name,
    places, fetch time, GPU model) is held once, and every offer still equals what was written."""
    written = [
        make_offer(sku=f"4090-{index}", pricing=CardHourPricing(cny_per_card_hour=8.0 + index))
        for index in range(4)
    ] + [make_offer(sku="h800", gpu="h800", city="wuxi")]
    await store.write_vendor("js-test", written, ok_status("js-test", len(written)))
    read = list((await store.read()).offers_by_vendor["js-test"])
    assert read == written
    first, *others = read
    for offer in others:
        for name in ("vendor", "region", "source", "currency", "fetched_at"):
            assert getattr(offer, name) is getattr(first, name), name
    assert read[1].gpu is read[2].gpu is read[3].gpu is first.gpu
    assert read[4].gpu == "h800" and read[4].city == "wuxi" and read[1].city is first.city
    assert len({id(offer.id) for offer in read}) == len(read)  # what differs stays each offer's own


async def test_vendor_rewrite_replaces_only_that_vendors_offers(store: PriceStore) -> None:
    await store.write_vendor("a", [make_offer("a", "x"), make_offer("a", "y")], ok_status("a", 2))
    await store.write_vendor("b", [make_offer("b", "x")], ok_status("b"))
    await store.write_vendor("a", [make_offer("a", "z")], ok_status("a"))
    contents = await store.read()
    assert [offer.id for offer in contents.offers_by_vendor["a"]] == ["a:z"]
    assert [offer.id for offer in contents.offers_by_vendor["b"]] == ["b:x"]


async def test_history_records_changes_not_repeats(store: PriceStore) -> None:
    cheap = make_offer(pricing=CardHourPricing(cny_per_card_hour=8.0))
    dear = make_offer(pricing=CardHourPricing(cny_per_card_hour=9.5))
    for offers in ([cheap], [cheap], [dear], [dear], []):
        await store.write_vendor("js-test", offers, ok_status("js-test"))
    history = await store.history("js-test:4090")
    assert [(entry.change, entry.pricing) for entry in history] == [
        ("new", cheap.pricing),
        ("changed", dear.pricing),
        ("removed", dear.pricing),
    ]
    assert await store.history("js-test:nothing") == []


async def test_history_is_trimmed_to_the_newest_entries(store: PriceStore) -> None:
    for step in range(60):
        offer = make_offer(pricing=CardHourPricing(cny_per_card_hour=5.0 + step / 100))
        await store.write_vendor("js-test", [offer], ok_status("js-test"))
    newest = await store.history("js-test:4090", limit=5)
    assert [entry.pricing.cny_per_card_hour for entry in newest] == pytest.approx(  # type: ignore[union-attr]
        [5.55, 5.56, 5.57, 5.58, 5.59]
    )
    assert 50 <= len(await store.history("js-test:4090", limit=1000)) <= 60


async def test_status_write_keeps_offers_and_moves_the_version(store: PriceStore) -> None:
    await store.write_vendor("a", [make_offer("a")], ok_status("a"))
    written = await store.version()
    failed = ok_status("a").__class__(vendor="a", last_error="HTTP 500", offer_count=1)
    assert await store.write_status(failed) == written + 1
    contents = await store.read()
    assert [offer.id for offer in contents.offers_by_vendor["a"]] == ["a:4090"]
    assert contents.statuses["a"].last_error == "HTTP 500"


async def test_refresh_lock_admits_one_holder(store: PriceStore) -> None:
    assert await store.try_lock("first", ttl_s=30)
    assert not await store.try_lock("second", ttl_s=30)
    await store.unlock("second")  # not the holder: no effect
    assert not await store.try_lock("second", ttl_s=30)
    await store.unlock("first")
    assert await store.try_lock("second", ttl_s=30)
    await store.unlock("second")


async def test_expired_lock_can_be_taken(store: PriceStore) -> None:

    assert await store.try_lock("crashed", ttl_s=0.05)
    await asyncio.sleep(0.1)
    assert await store.try_lock("next", ttl_s=30)
    await store.unlock("next")


async def test_history_records_stock_changes_dated_when_observed(store: PriceStore) -> None:
    observed = FETCHED_AT - timedelta(days=3)
    plenty = make_offer(available_cards=40, fetched_at=observed)
    scarce = make_offer(available_cards=2, fetched_at=observed + timedelta(hours=6))
    for offers in ([plenty], [plenty], [scarce]):
        await store.write_vendor("js-test", offers, ok_status("js-test"))
    history = await store.history("js-test:4090")
    # The price never moved; the stock did, and each entry is dated when its figures were observed.
    assert [(entry.change, entry.available_cards, entry.at) for entry in history] == [
        ("new", 40, observed),
        ("changed", 2, observed + timedelta(hours=6)),
    ]


async def test_removing_a_vendor_takes_its_offers_out_and_records_it(store: PriceStore) -> None:
    await store.write_vendor("a", [make_offer("a", "x")], ok_status("a"))
    await store.write_vendor("b", [make_offer("b", "y")], ok_status("b"))
    before = await store.version()
    assert await store.remove_vendor("b") > before
    contents = await store.read(expected_vendors=["a"])
    assert (set(contents.offers_by_vendor), set(contents.statuses), dict(contents.faults)) == (
        {"a"},
        {"a"},
        {},
    )
    assert [entry.change for entry in await store.history("b:y")] == ["new", "removed"]


def _bounded(store: PriceStore, bounds: HistoryBounds) -> PriceStore:
    """The same kind of store, keeping history within ``bounds`` (in the same namespace for Redis)."""
    if isinstance(store, RedisPriceStore):
        return RedisPriceStore(store.client, namespace=store.namespace, history=bounds)
    return MemoryPriceStore(history=bounds)


async def test_history_keeps_the_newest_entries_up_to_its_bound(store: PriceStore) -> None:
    bounded = _bounded(store, HistoryBounds(max_entries=10))
    prices = [8.0 + step / 10 for step in range(13)]
    for price in prices:
        offer = make_offer(pricing=CardHourPricing(cny_per_card_hour=price))
        await bounded.write_vendor("js-test", [offer], ok_status("js-test"))
    history = await bounded.history("js-test:4090")
    assert [entry.pricing for entry in history] == [CardHourPricing(cny_per_card_hour=p) for p in prices[3:]]
    assert [entry.change for entry in history] == ["changed"] * 10
    assert [entry.pricing for entry in await bounded.history("js-test:4090", limit=2)] == [
        CardHourPricing(cny_per_card_hour=p) for p in prices[-2:]
    ]


async def test_history_of_a_gone_offer_goes_after_the_retention(store: PriceStore) -> None:
    bounded = _bounded(store, HistoryBounds(max_entries=10, max_age_s=0.4))
    await bounded.write_vendor(
        "js-test", [make_offer(sku="old"), make_offer(sku="kept")], ok_status("js-test")
    )
    await bounded.write_vendor("js-test", [make_offer(sku="kept")], ok_status("js-test"))
    assert [entry.change for entry in await bounded.history("js-test:old")] == ["new", "removed"]
    deadline = time.monotonic() + 5
    while await bounded.history("js-test:old"):
        assert time.monotonic() < deadline, "the removed offer's history outlived its retention"
        await asyncio.sleep(0.05)


async def test_history_drops_entries_older_than_the_retention_but_the_newest(store: PriceStore) -> None:
    bounded = _bounded(store, HistoryBounds(max_entries=10, max_age_s=0.4))
    cheap = make_offer(pricing=CardHourPricing(cny_per_card_hour=8.0))
    dear = make_offer(pricing=CardHourPricing(cny_per_card_hour=9.0))
    await bounded.write_vendor("js-test", [cheap], ok_status("js-test"))
    await asyncio.sleep(0.25)
    await bounded.write_vendor("js-test", [dear], ok_status("js-test"))
    await asyncio.sleep(0.2)
    # The first entry was recorded 0.45 s ago, past the 0.4 s retention: gone; the newest (recorded 0.2 s
    # ago, its key living 0.4 s from then) says the price since when.
    assert [(entry.change, entry.pricing) for entry in await bounded.history("js-test:4090")] == [
        ("changed", dear.pricing)
    ]
