"""The refresh pipeline on both stores: last-known-good kept, bad rows dropped, jumps held back,
one refresher at a time."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from adapters import AdapterContext
from schemas.offer import CardHourPricing
from schemas.vendor import VendorConfig
from service.errors import InvalidRequest, RefreshBusy
from service.refresh import RefreshService
from service.store.base import PriceStore
from tests.builders import static_feed, static_row


def _static_vendor(vendor_id: str, path: str, **extra: object) -> VendorConfig:
    return VendorConfig(
        id=vendor_id,
        name=vendor_id,
        region="jiangsu",
        city="suzhou",
        format="static",
        path=path,
        **extra,  # type: ignore[arg-type]
    )


def _write_feed(folder: Path, name: str, rows: list[dict[str, object]]) -> None:
    (folder / name).write_bytes(static_feed(rows))


@pytest.fixture
def feeds(tmp_path: Path) -> Path:
    _write_feed(
        tmp_path, "a.json", [static_row("4090", 8.0, gpu="RTX 4090"), static_row("h800", 40.0, gpu="H800")]
    )
    _write_feed(tmp_path, "b.json", [static_row("a100", 20.0, gpu="A100 80G")])
    return tmp_path


def _service(store: PriceStore, folder: Path, *vendors: VendorConfig) -> RefreshService:
    return RefreshService(
        store=store,
        vendors=list(vendors) or [_static_vendor("va", "a.json"), _static_vendor("vb", "b.json")],
        context=AdapterContext(base_dir=folder),
    )


async def _prices(store: PriceStore, vendor: str) -> dict[str, float]:
    contents = await store.read()
    return {
        offer.sku: offer.pricing.cny_per_card_hour  # type: ignore[union-attr]
        for offer in contents.offers_by_vendor.get(vendor, ())
    }


async def test_refresh_stores_every_vendor(store: PriceStore, feeds: Path) -> None:
    report = await _service(store, feeds).refresh()
    assert report.ok
    assert {outcome.vendor: outcome.offers for outcome in report.vendors} == {"va": 2, "vb": 1}
    assert await _prices(store, "va") == {"4090": 8.0, "h800": 40.0}
    contents = await store.read()
    assert contents.statuses["vb"].last_success_at is not None
    assert report.version == contents.version


async def test_failed_vendor_keeps_last_known_good_offers(store: PriceStore, feeds: Path) -> None:
    service = _service(store, feeds)
    await service.refresh()
    first_success = (await store.read()).statuses["va"].last_success_at
    (feeds / "a.json").write_text('{"offers": [{"sku": "4090", "gpu": "RTX', encoding="utf-8")  # half-written
    _write_feed(feeds, "b.json", [static_row("a100", 21.0, gpu="A100 80G")])
    report = await service.refresh()
    assert not report.ok
    failed = next(outcome for outcome in report.vendors if outcome.vendor == "va")
    assert not failed.ok
    assert "malformed" in (failed.error or "")
    assert await _prices(store, "va") == {"4090": 8.0, "h800": 40.0}
    assert await _prices(store, "vb") == {"a100": 21.0}
    status = (await store.read()).statuses["va"]
    assert status.last_error is not None and "malformed" in status.last_error
    assert status.last_success_at == first_success


async def test_missing_feed_file_is_a_vendor_failure(store: PriceStore, feeds: Path) -> None:
    service = _service(store, feeds, _static_vendor("va", "a.json"), _static_vendor("gone", "missing.json"))
    report = await service.refresh()
    outcomes = {outcome.vendor: outcome for outcome in report.vendors}
    assert outcomes["va"].ok
    assert not outcomes["gone"].ok
    assert "cannot read missing.json" in (outcomes["gone"].error or "")


async def test_bad_rows_are_dropped_and_counted(store: PriceStore, feeds: Path) -> None:
    _write_feed(
        feeds,
        "a.json",
        [
            static_row("4090", 8.0, gpu="RTX 4090"),
            static_row("5090", 12.0, gpu="RTX 5090"),
            static_row("free", 0.0, gpu="H800"),
            static_row("neg", -3.0, gpu="H800"),
        ],
    )
    report = await _service(store, feeds, _static_vendor("va", "a.json")).refresh()
    assert report.vendors[0].ok
    assert report.vendors[0].rows_dropped == 3
    assert await _prices(store, "va") == {"4090": 8.0}
    status = (await store.read()).statuses["va"]
    assert status.drop_reasons == {"unknown_gpu": 1, "invalid_price": 2}


async def test_feed_with_no_valid_rows_keeps_previous_offers(store: PriceStore, feeds: Path) -> None:
    service = _service(store, feeds, _static_vendor("va", "a.json"))
    await service.refresh()
    _write_feed(feeds, "a.json", [static_row("x", 1.0, gpu="RTX 9999")])
    report = await service.refresh()
    assert not report.ok
    assert "no valid offers" in (report.vendors[0].error or "")
    assert await _prices(store, "va") == {"4090": 8.0, "h800": 40.0}


async def test_price_jump_is_held_back_until_seen_again(store: PriceStore, feeds: Path) -> None:
    service = _service(store, feeds, _static_vendor("va", "a.json"))
    await service.refresh()
    _write_feed(
        feeds, "a.json", [static_row("4090", 8.4, gpu="RTX 4090"), static_row("h800", 4.0, gpu="H800")]
    )

    first = await service.refresh()
    assert first.vendors[0].quarantined == 1
    assert await _prices(store, "va") == {"4090": 8.4, "h800": 40.0}
    held = (await store.read()).statuses["va"].quarantined
    assert [(entry.offer_id, entry.pricing) for entry in held] == [
        ("va:h800", CardHourPricing(cny_per_card_hour=4.0))
    ]
    assert held[0].change_ratio == pytest.approx(0.9)

    second = await service.refresh()
    assert second.vendors[0].released == 1
    assert await _prices(store, "va") == {"4090": 8.4, "h800": 4.0}
    assert (await store.read()).statuses["va"].quarantined == []


async def test_unknown_vendor_is_rejected_by_name(store: PriceStore, feeds: Path) -> None:
    with pytest.raises(InvalidRequest) as raised:
        await _service(store, feeds).refresh("nope")
    assert raised.value.field == "vendor"
    assert "va" in raised.value.reason


async def test_a_second_refresher_gives_up_while_the_lock_is_held(store: PriceStore, feeds: Path) -> None:
    assert await store.try_lock("someone-else", ttl_s=30)
    with pytest.raises(RefreshBusy):
        await _service(store, feeds).refresh()
    assert await store.version() == 0
    await store.unlock("someone-else")


async def test_a_waiting_refresher_runs_once_the_lock_is_released(store: PriceStore, feeds: Path) -> None:
    assert await store.try_lock("someone-else", ttl_s=30)

    async def release_soon() -> None:
        await asyncio.sleep(0.3)
        await store.unlock("someone-else")

    releaser = asyncio.create_task(release_soon())
    report = await _service(store, feeds).refresh(wait_s=5)
    await releaser
    assert report.ok


async def test_two_concurrent_refreshes_one_runs(store: PriceStore, tmp_path: Path) -> None:
    body = static_feed([static_row()])

    async def slow_vendor(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(0.3)
        return httpx.Response(200, content=body)

    vendor = VendorConfig(
        id="slow", name="slow", region="jiangsu", city="wuxi", format="static", url="http://vendor.test/feed"
    )
    service = _service(store, tmp_path, vendor)
    service.client_factory = lambda: httpx.AsyncClient(transport=httpx.MockTransport(slow_vendor))
    results = await asyncio.gather(service.refresh(), service.refresh(), return_exceptions=True)
    busy = [result for result in results if isinstance(result, RefreshBusy)]
    done = [result for result in results if not isinstance(result, BaseException)]
    assert len(busy) == 1
    assert len(done) == 1 and done[0].ok
