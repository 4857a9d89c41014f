"""A store refilled by a refresher that holds no snapshot (the ``gpuquote refresh`` CronJob after Redis came
back empty) while one vendor's feed is down: replicas keep that vendor's offers instead of dropping them."""

from __future__ import annotations

from pathlib import Path

from adapters import AdapterContext
from schemas.vendor import VendorConfig
from service.refresh import RefreshService
from service.services.snapshots import SnapshotCache
from service.store.memory import MemoryPriceStore
from tests.builders import card_hour_feed


def _vendor(vendor_id: str) -> VendorConfig:
    return VendorConfig(
        id=vendor_id,
        name=vendor_id,
        region="jiangsu",
        city="suzhou",
        format="static",
        path=f"{vendor_id}.json",
    )


def _refresher(store: MemoryPriceStore, folder: Path) -> RefreshService:
    return RefreshService(
        store=store, vendors=[_vendor("a"), _vendor("b")], context=AdapterContext(base_dir=folder)
    )


async def test_a_vendor_missing_after_a_failed_refill_keeps_its_held_offers(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(card_hour_feed({"a1": 8.0, "a2": 9.0}))
    (tmp_path / "b.json").write_bytes(card_hour_feed({"b1": 7.0}))
    first = MemoryPriceStore()
    for _ in range(3):  # a store with history: its version differs from the refilled one's
        await _refresher(first, tmp_path).refresh()
    cache = SnapshotCache(first)
    held = await cache.current()
    assert {offer.vendor for offer in held.offers} == {"a", "b"}

    # The store comes back empty; the CronJob refills it while b's feed is down.
    refilled = MemoryPriceStore()
    (tmp_path / "b.json").write_text('{"offers": [', encoding="utf-8")
    report = await _refresher(refilled, tmp_path).refresh()
    assert [outcome.ok for outcome in report.vendors] == [True, False]
    cache._store = refilled  # the same replica, now reading the refilled store
    assert await refilled.version() != held.version

    snapshot = await cache.latest()  # the rebuild this read starts, waited for
    by_vendor = {vendor: sorted(o.id for o in snapshot.offers if o.vendor == vendor) for vendor in ("a", "b")}
    assert by_vendor == {"a": ["a:a1", "a:a2"], "b": ["b:b1"]}
    kept = next(offer for offer in snapshot.offers if offer.vendor == "b")
    assert kept.fetched_at == next(o for o in held.offers if o.vendor == "b").fetched_at

    # Once b's feed works again, its fresh offers replace the kept ones.
    (tmp_path / "b.json").write_bytes(card_hour_feed({"b2": 6.0}))
    await _refresher(refilled, tmp_path).refresh()
    snapshot = await cache.latest()
    assert sorted(o.id for o in snapshot.offers if o.vendor == "b") == ["b:b2"]


async def test_a_vendor_that_succeeds_with_fewer_offers_is_not_padded(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(card_hour_feed({"a1": 8.0, "a2": 9.0}))
    (tmp_path / "b.json").write_bytes(card_hour_feed({"b1": 7.0}))
    store = MemoryPriceStore()
    await _refresher(store, tmp_path).refresh()
    cache = SnapshotCache(store)
    await cache.current()

    (tmp_path / "a.json").write_bytes(card_hour_feed({"a1": 8.0}))
    await _refresher(store, tmp_path).refresh()

    snapshot = await cache.latest()
    assert sorted(o.id for o in snapshot.offers if o.vendor == "a") == ["a:a1"]
