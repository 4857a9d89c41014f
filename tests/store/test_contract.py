"""The PriceStore contract, run against the memory store and a real Redis alike."""

from __future__ import annotations

import asyncio

import pytest

from schemas.offer import BundlePricing, CardHourPricing
from service.store.base import PriceStore
from tests.builders import make_offer, ok_status


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
