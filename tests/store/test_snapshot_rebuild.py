"""A snapshot rebuild on the real Redis store: requests meanwhile are answered from the held snapshot at
once, one build runs however many requests see the store move, and a build that fails keeps the held
snapshot and is tried again later.

The build is made slow by a gate (``threading.Event``) it waits on in its thread, so what happens during a
rebuild is fixed by the test, not by timing: a request that waited for the build would never return
before the gate opens.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from schemas.offer import CardHourPricing
from schemas.quote import QuoteRequest, Workload
from service.errors import StoreUnreachable
from service.quote import Snapshot
from service.services import build_services
from service.services._contents import build_served
from service.services.snapshots import SnapshotCache, SnapshotCheck
from service.settings import Settings
from service.store.base import StoreContents
from service.store.redis import RedisPriceStore
from tests.builders import make_offer, ok_status

pytestmark = pytest.mark.redis

VENDOR = "js-test"
GATE_TIMEOUT_S = 10.0  # a gate left closed by a failing test lets its thread go after this
ANSWER_TIMEOUT_S = 5.0  # a request answered without waiting for the build returns well within this
# Longer than that: a request that waited for the build within the store deadline would time out.
DEADLINE_S = 4 * ANSWER_TIMEOUT_S
NOW = datetime.now(UTC).replace(microsecond=0)


@dataclass
class GatedBuild:
    """``build_served`` that, once ``close``d, waits in its thread until ``open``; ``fail`` makes the next
    build raise instead. Counts the builds started."""

    builds: int = 0
    failures_left: int = 0
    started: threading.Event = field(default_factory=threading.Event)
    _open: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._open.set()

    def close(self) -> None:
        self.started.clear()
        self._open.clear()

    def open(self) -> None:
        self._open.set()

    def fail(self, times: int = 1) -> None:
        self.failures_left = times

    async def wait_started(self) -> None:
        assert await asyncio.to_thread(self.started.wait, GATE_TIMEOUT_S), "no build started"

    def __call__(
        self,
        contents: StoreContents,
        built_at: datetime,
        check: SnapshotCheck | None,
        held: StoreContents | None,
    ) -> tuple[Snapshot | None, dict[str, str]]:
        self.builds += 1
        self.started.set()
        self._open.wait(GATE_TIMEOUT_S)
        if self.failures_left:
            self.failures_left -= 1
            raise RuntimeError("the build ran out of memory")
        return build_served(contents, built_at, check, held)


async def _write_price(store: RedisPriceStore, cny_per_card_hour: float, fetched_at: datetime) -> int:
    offer = make_offer(
        VENDOR, pricing=CardHourPricing(cny_per_card_hour=cny_per_card_hour), fetched_at=fetched_at
    )
    return await store.write_vendor(VENDOR, [offer], ok_status(VENDOR))


def _price(snapshot: Snapshot) -> float:
    pricing = snapshot.offers[0].pricing
    assert isinstance(pricing, CardHourPricing)
    return pricing.cny_per_card_hour


@dataclass
class Swaps:
    """The snapshots a cache swapped in, in order (its ``on_rebuild``)."""

    snapshots: list[Snapshot] = field(default_factory=list)
    _swapped: asyncio.Event = field(default_factory=asyncio.Event)

    def __call__(self, snapshot: Snapshot) -> None:
        self.snapshots.append(snapshot)
        self._swapped.set()

    async def at(self, version: int) -> Snapshot:
        """The snapshot swapped in at ``version``, once it is (no request asks the store meanwhile)."""
        while not self.snapshots or self.snapshots[-1].version != version:
            self._swapped.clear()
            await self._swapped.wait()
        return self.snapshots[-1]


@pytest.fixture
async def gate() -> AsyncIterator[GatedBuild]:
    build = GatedBuild()
    try:
        yield build
    finally:
        build.open()  # never leave a thread waiting on a failed test's gate


@pytest.fixture
def swaps() -> Swaps:
    return Swaps()


@pytest.fixture
async def cache(redis_store: RedisPriceStore, gate: GatedBuild, swaps: Swaps) -> AsyncIterator[SnapshotCache]:
    snapshots = SnapshotCache(
        redis_store, deadline_s=DEADLINE_S, build=gate, retry_after_s=0.0, on_rebuild=swaps
    )
    try:
        yield snapshots
    finally:
        gate.open()
        await snapshots.aclose()


async def test_a_request_during_a_slow_rebuild_is_answered_from_the_held_snapshot(
    redis_store: RedisPriceStore, cache: SnapshotCache, gate: GatedBuild
) -> None:
    await _write_price(redis_store, 8.0, NOW - timedelta(hours=1))
    held = await cache.current()  # the first build is waited for: nothing is held before it
    moved = await _write_price(redis_store, 9.0, NOW)
    gate.close()

    served = await asyncio.wait_for(cache.current(), ANSWER_TIMEOUT_S)
    await gate.wait_started()  # the build is running, in its thread, and waits on the gate
    again = await asyncio.wait_for(cache.current(), ANSWER_TIMEOUT_S)

    assert served is held and again is held
    assert (_price(served), served.offers[0].fetched_at) == (8.0, NOW - timedelta(hours=1))
    gate.open()
    rebuilt = await asyncio.wait_for(cache.latest(), ANSWER_TIMEOUT_S)
    assert (rebuilt.version, _price(rebuilt), rebuilt.offers[0].fetched_at) == (moved, 9.0, NOW)
    assert cache.held is rebuilt
    assert gate.builds == 2


async def test_concurrent_requests_start_one_build_and_a_move_meanwhile_one_more_after_it(
    redis_store: RedisPriceStore, cache: SnapshotCache, gate: GatedBuild, swaps: Swaps
) -> None:
    await _write_price(redis_store, 8.0, NOW)
    held = await cache.current()
    moved = await _write_price(redis_store, 9.0, NOW)
    gate.close()

    served = await asyncio.gather(*(cache.current() for _ in range(50)))
    await gate.wait_started()
    # The store moves twice more while that build waits: requests that see it start no second build.
    await _write_price(redis_store, 10.0, NOW)
    last = await _write_price(redis_store, 11.0, NOW)
    served += await asyncio.gather(*(cache.current() for _ in range(50)))
    assert all(snapshot is held for snapshot in served)
    assert gate.builds == 2  # the first snapshot's, and this one

    gate.open()
    rebuilt = await asyncio.wait_for(swaps.at(last), ANSWER_TIMEOUT_S)
    assert _price(rebuilt) == 11.0
    # One more build, after the running one, for both moves: each swapped in whole, in order.
    assert [snapshot.version for snapshot in swaps.snapshots] == [held.version, moved, last]
    assert gate.builds == 3
    assert await cache.current() is rebuilt
    assert gate.builds == 3


async def test_a_failed_build_keeps_the_held_snapshot_and_a_later_request_retries_it(
    redis_store: RedisPriceStore, cache: SnapshotCache, gate: GatedBuild
) -> None:
    await _write_price(redis_store, 8.0, NOW)
    held = await cache.current()
    moved = await _write_price(redis_store, 9.0, NOW)
    gate.fail()

    assert await cache.latest() is held  # the build failed: the held snapshot serves, nothing raised
    assert cache.held is held
    assert cache.rebuild_error is not None and "ran out of memory" in cache.rebuild_error
    assert gate.builds == 2

    retried = await cache.latest()  # the next request tries again (no wait set here), and it works
    assert (retried.version, _price(retried)) == (moved, 9.0)
    assert cache.rebuild_error is None
    assert gate.builds == 3


async def test_a_failed_build_is_not_tried_again_before_its_retry_time(
    redis_store: RedisPriceStore, gate: GatedBuild
) -> None:
    cache = SnapshotCache(redis_store, build=gate, retry_after_s=3600.0)
    try:
        await _write_price(redis_store, 8.0, NOW)
        held = await cache.current()
        await _write_price(redis_store, 9.0, NOW)
        gate.fail()
        assert await cache.latest() is held
        for _ in range(5):
            assert await cache.latest() is held
        assert gate.builds == 2  # the failed one only: a build that fails is not run per request
    finally:
        await cache.aclose()


async def test_a_failed_first_build_is_a_503_not_the_build_error(
    redis_store: RedisPriceStore, cache: SnapshotCache, gate: GatedBuild
) -> None:
    await _write_price(redis_store, 8.0, NOW)
    gate.fail()
    with pytest.raises(StoreUnreachable, match="could not be built"):
        await cache.current()
    first = await cache.current()  # retried by the next request
    assert _price(first) == 8.0


async def test_a_quote_during_a_rebuild_states_the_held_snapshot_and_its_fetch_times(
    redis_store: RedisPriceStore, gate: GatedBuild, tmp_path: Path
) -> None:
    vendors = tmp_path / "vendors.toml"
    vendors.write_text(
        f'[[vendors]]\nid = "{VENDOR}"\nname = "Test"\nregion = "jiangsu"\ncity = "suzhou"\n'
        'format = "static"\npath = "feed.json"\n',
        encoding="utf-8",
    )
    services = build_services(Settings(vendors_file=vendors), store=redis_store)
    services.snapshots = SnapshotCache(redis_store, deadline_s=DEADLINE_S, build=gate, vendors=[VENDOR])
    request = QuoteRequest(workload=Workload(gpu_hours=10), gpus=["rtx4090"], card_counts=[1])
    fetched_before = NOW - timedelta(hours=1)
    try:
        await _write_price(redis_store, 8.0, fetched_before)
        before = await services.quote(request)
        await _write_price(redis_store, 9.0, NOW)
        gate.close()

        during = await asyncio.wait_for(
            services.quote(QuoteRequest(workload=Workload(gpu_hours=20), gpus=["rtx4090"], card_counts=[1])),
            ANSWER_TIMEOUT_S,
        )
        await gate.wait_started()
        # The held snapshot's own facts: its version, the price it holds and when that price was fetched.
        assert during.snapshot == before.snapshot
        assert during.snapshot.oldest_fetched_at == fetched_before
        assert during.quotes[0].price_fetched_at == fetched_before
        assert during.quotes[0].cost_cny.expected == 160.0

        gate.open()
        rebuilt = await asyncio.wait_for(services.snapshots.latest(), ANSWER_TIMEOUT_S)
        after = await services.quote(request)
        assert after.snapshot.version == rebuilt.version > before.snapshot.version
        assert after.quotes[0].price_fetched_at == NOW
        assert (before.quotes[0].cost_cny.expected, after.quotes[0].cost_cny.expected) == (80.0, 90.0)
    finally:
        gate.open()
        await services.snapshots.aclose()
