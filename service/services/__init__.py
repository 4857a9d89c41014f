"""The service's long-lived parts, built once per app, CLI run or MCP server from ``Settings``.

``AppServices`` is what the HTTP routes, the CLI and the MCP tools share: the store, the snapshot cache,
the refresher, the quote path, and the start-up load and periodic refresh every front end runs.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

import msgspec
from litestar.di import NamedDependency

from adapters import DEFAULT_GPU_CATALOG, AdapterContext, GpuCatalog
from adapters.vendors_file import load_vendors_file
from schemas.api import VendorRefresh
from schemas.quote import QuoteRequest, QuoteResponse
from schemas.vendor import PriceChange, VendorConfig
from service import metrics
from service.background import BackgroundThread
from service.errors import RefreshBusy, StoreUnreachable
from service.heap import HeapTrimmer, no_huge_page_advice
from service.quote import Snapshot, build_quote
from service.refresh import RefreshService
from service.services._upkeep import Restorer, quote_options, read_history, snapshot_check
from service.services.quote_cache import QuoteCache
from service.services.snapshots import SnapshotCache
from service.settings import Settings
from service.store.base import HistoryBounds, PriceStore, StoreCorrupt, StoreUnavailable
from service.store.breaker import StoreBreaker
from service.store.memory import MemoryPriceStore
from service.store.redis import RedisPriceStore, connect_redis, is_cluster

__all__ = ["AppServices", "Services", "StoreKind", "build_services"]

StoreKind = Literal["memory", "redis", "redis-cluster"]

logger = logging.getLogger("gpuquote.services")
_STARTUP_LOCK_WAIT_S = 30.0
# How long start-up waits for the initial load before serving (the startup probe allows 60 s).
STARTUP_LOAD_WAIT_S = 2.0
# The unused heap worth giving back (``service.heap``): a steady stream of default quotes at 96,000 offers
# keeps 15 to 40 MB unused between requests, which the next ones reuse; varied requests leave 90 to 180.
HEAP_TRIM_MIN_FREE_BYTES = 64_000_000


@dataclass
class AppServices:
    settings: Settings
    store: PriceStore
    store_kind: StoreKind
    snapshots: SnapshotCache
    refresher: RefreshService
    vendors: list[VendorConfig]
    catalog: GpuCatalog
    quote_cache: QuoteCache = field(default_factory=QuoteCache)
    restorer: Restorer = field(default_factory=Restorer)
    heap: HeapTrimmer = field(default_factory=lambda: HeapTrimmer(min_free_bytes=HEAP_TRIM_MIN_FREE_BYTES))
    # Quotes answered by this process: whether any ran since the heap was last looked at
    quotes_answered: int = 0

    async def quote(self, request: QuoteRequest, *, body: bytes | None = None) -> QuoteResponse:
        """Quote on the current snapshot: one store round trip (its version), then pure maths, or the
        answer this process gave the same question on the same snapshot within the minute.

        ``body`` is the JSON the request was decoded from, when there is one (``POST /quote``): it is the
        cache key as it came, so the request is not encoded again to make one."""
        snapshot = await self.snapshots.current()
        self.quotes_answered += 1
        now = datetime.now(UTC)
        reachable = self.snapshots.store_reachable and self.snapshots.store_fault is None
        empty = self.snapshots.store_empty
        request_key = body if body is not None else _request_encoder.encode(request)
        key = QuoteCache.key(request_key, snapshot.version, (reachable, empty), now.timestamp())
        if (cached := self.quote_cache.get(key)) is not None:
            metrics.QUOTES_SERVED.labels("quoted" if cached.quotes else "nothing_fits").inc()
            return cached
        options = quote_options(
            self.settings, self.catalog, self.vendors, now, store_reachable=reachable, store_empty=empty
        )
        response = build_quote(snapshot, request, options=options)
        self.quote_cache.put(key, response)
        metrics.QUOTES_SERVED.labels("quoted" if response.quotes else "nothing_fits").inc()
        return response

    async def history(self, offer_id: str, *, limit: int) -> list[PriceChange]:
        """An offer's price history, within the store deadline (``StoreUnreachable`` past it)."""
        return await read_history(self.store, self.snapshots.breaker, self.settings, offer_id, limit=limit)

    async def load_if_empty(self) -> None:
        """Fill an empty store from the configured vendors (the bundled reference catalog by default)."""
        try:
            try:
                if await self.store.version() > 0:
                    return
            except StoreCorrupt as error:
                logger.warning("price store holds a bad version, reloading it: %s", error)
            report = await self.refresher.refresh(wait_s=_STARTUP_LOCK_WAIT_S)
        except RefreshBusy:
            logger.info("another process is loading the store; serving what it writes")
            return
        except StoreUnavailable as error:
            logger.warning("price store unreachable at startup: %s", error)
            return
        failed = [outcome.vendor for outcome in report.vendors if not outcome.ok]
        if failed:
            logger.warning("initial load: vendors failed: %s", ", ".join(failed))

    async def refresh_periodically(self, interval_s: float) -> None:
        """Refresh every ``interval_s``, ±20 % jitter so replicas do not line up; a held lock is fine."""
        while True:
            await asyncio.sleep(interval_s * random.uniform(0.8, 1.2))  # noqa: S311 - jitter only
            try:
                report = await self.refresher.refresh()
                logger.info("periodic refresh: %d vendors, ok=%s", len(report.vendors), report.ok)
            except RefreshBusy:
                logger.info("periodic refresh skipped: another refresher holds the lock")
            except StoreUnavailable as error:
                logger.warning("periodic refresh failed: %s", error)

    async def trim_heap_periodically(self, interval_s: float) -> None:
        """Every ``interval_s`` in which quotes were answered or a snapshot was built, give the memory they
        freed back to the system when the heap holds much of it unused (``service.heap``), on a thread of
        its own at the process's priority (a trim at the lowest could hold an arena the loop waits for)."""
        thread = BackgroundThread("gpuquote-heap-trim", nice=0)
        looked_at: tuple[int, int | None] | None = None
        try:
            while True:
                await asyncio.sleep(interval_s)
                held = self.snapshots.held
                activity = (self.quotes_answered, None if held is None else held.version)
                if activity == looked_at:
                    continue
                looked_at = activity
                trimmed = await thread.run(self.heap.trim)
                if trimmed.trimmed:
                    metrics.HEAP_TRIMS.inc()
                    logger.debug("heap trimmed: it held %d MB unused", trimmed.free_bytes // 1_000_000)
        finally:
            thread.close()

    @asynccontextmanager
    async def running(self) -> AsyncIterator[AppServices]:
        """Load an empty store, take the first snapshot (so a replica holds prices before a store outage,
        not only after its first quote), run the periodic refresher when configured, close everything after.

        Start-up waits for the load at most ``STARTUP_LOAD_WAIT_S``: a slow vendor (a feed that answers
        429 with a long ``Retry-After``) finishes loading in the background, so liveness never waits on
        a vendor. Until prices arrive the service answers 503 where it needs them; each vendor that
        finishes is served from the next request on.
        """
        no_huge_page_advice()  # before the first snapshot's arrays (``service.heap``)
        loading = asyncio.create_task(self.load_if_empty())
        await asyncio.wait({loading}, timeout=STARTUP_LOAD_WAIT_S)
        if not loading.done():
            logger.warning("initial load still running after %g s; serving meanwhile", STARTUP_LOAD_WAIT_S)
        with suppress(StoreUnavailable, StoreUnreachable):
            await self.snapshots.current()
        background = [loading]
        if self.settings.refresh_interval_s > 0:
            background.append(
                asyncio.create_task(self.refresh_periodically(self.settings.refresh_interval_s))
            )
        if self.settings.heap_trim_interval_s > 0 and self.heap.available:
            background.append(
                asyncio.create_task(self.trim_heap_periodically(self.settings.heap_trim_interval_s))
            )
        try:
            yield self
        finally:
            for task in background:
                if not task.done():
                    task.cancel()
                    with suppress(asyncio.CancelledError):
                        await task
            await self.restorer.aclose()
            await self.aclose()

    async def aclose(self) -> None:
        await self.snapshots.aclose()
        await self.store.aclose()


_request_encoder = msgspec.json.Encoder()

# Route handlers declare ``services: Services`` to receive the app's ``AppServices``.
Services = NamedDependency[AppServices]


def history_bounds(settings: Settings) -> HistoryBounds:
    return HistoryBounds(
        max_entries=settings.history_max_entries,
        max_age_s=settings.history_max_age_s,
        memory_limit_ratio=settings.history_memory_limit_ratio,
    )


def build_store(settings: Settings) -> tuple[PriceStore, StoreKind]:
    if settings.redis_url is None:
        return MemoryPriceStore(
            history=history_bounds(settings), decode_nice=settings.snapshot_build_nice
        ), "memory"
    # Socket timeouts bound the refresh job's calls; request paths add their own, shorter, deadline. A
    # request never waits longer than that deadline for a pooled connection either.
    client = connect_redis(
        settings.redis_url,
        cluster=settings.redis_cluster,
        timeout_s=max(2.0, 4 * settings.store_deadline_s),
        max_connections=settings.redis_max_connections,
        pool_timeout_s=settings.store_deadline_s,
    )
    store = RedisPriceStore(
        client,
        namespace=settings.redis_namespace,
        history=history_bounds(settings),
        on_fault=lambda kind: metrics.STORE_FAULTS.labels(kind).inc(),
        decode_nice=settings.snapshot_build_nice,
    )
    return store, "redis-cluster" if is_cluster(client) else "redis"


def store_write_slots(settings: Settings) -> int:
    """Vendors a refresh writes to Redis at once: half the connection pool, so the writes never wait for
    a connection (which fails past the store deadline) and the rest of the pool serves requests."""
    return max(1, settings.redis_max_connections // 2)


def _report_snapshot(snapshot: Snapshot) -> None:
    offers_by_vendor: dict[str, int] = {}
    for offer in snapshot.offers:
        offers_by_vendor[offer.vendor] = offers_by_vendor.get(offer.vendor, 0) + 1
    oldest = snapshot.oldest_fetched_at.timestamp() if snapshot.oldest_fetched_at else None
    metrics.record_snapshot(snapshot.version, snapshot.built_at.timestamp(), oldest, offers_by_vendor)


def build_services(settings: Settings, *, store: PriceStore | None = None) -> AppServices:
    """Everything a request or a CLI command needs; raises ``VendorsFileError`` on a bad vendors file."""
    vendors, base_dir = load_vendors_file(settings.vendors_file)
    store_kind: StoreKind = "memory"
    if store is None:
        store, store_kind = build_store(settings)
    elif isinstance(store, RedisPriceStore):
        store_kind = "redis"
    catalog = DEFAULT_GPU_CATALOG
    breaker = StoreBreaker()
    restorer = Restorer()
    snapshots = SnapshotCache(
        store,
        deadline_s=settings.store_deadline_s,
        breaker=breaker,
        on_rebuild=_report_snapshot,
        on_store_error=lambda operation: metrics.STORE_ERRORS.labels(operation).inc(),
        vendors=[vendor.id for vendor in vendors],
        check=snapshot_check(settings, catalog, vendors),
        on_kept=restorer.schedule,
        build_nice=settings.snapshot_build_nice,
    )

    def store_written(outcome: VendorRefresh) -> None:
        if outcome.ok:
            breaker.succeeded()  # a refresh wrote to the store: readers need not wait for a probe

    refresher = RefreshService(
        store=store,
        vendors=vendors,
        context=AdapterContext(
            base_dir=base_dir,
            catalog=catalog,
            environ=dict(os.environ),
            max_feed_bytes=settings.feed_max_bytes,
        ),
        max_change_ratio=settings.quarantine_change_ratio,
        lock_ttl_s=settings.refresh_lock_ttl_s,
        observers=[metrics.record_refresh, store_written],
        held_contents=snapshots.held_contents,
        after_write=snapshots.catch_up,
        max_store_writes=store_write_slots(settings),
    )
    restorer.refresher = refresher
    return AppServices(
        settings=settings,
        store=store,
        store_kind=store_kind,
        snapshots=snapshots,
        refresher=refresher,
        vendors=vendors,
        catalog=catalog,
        restorer=restorer,
    )
