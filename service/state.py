"""The service's long-lived parts, built once per app (or CLI run) from ``Settings``."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

import msgspec
from litestar.di import NamedDependency

from adapters import DEFAULT_GPU_CATALOG, AdapterContext, GpuCatalog
from adapters.vendors_file import load_vendors_file
from schemas.quote import QuoteRequest, QuoteResponse
from schemas.vendor import VendorConfig
from service import metrics
from service.quote.engine import QuoteOptions, build_quote
from service.quote_cache import QuoteCache
from service.refresh import RefreshService
from service.settings import Settings
from service.snapshot import Snapshot, SnapshotCache
from service.store.base import PriceStore
from service.store.memory import MemoryPriceStore
from service.store.redis import RedisPriceStore, connect_redis

__all__ = ["AppServices", "Services", "StoreKind", "build_services"]

StoreKind = Literal["memory", "redis", "redis-cluster"]


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

    async def quote(self, request: QuoteRequest) -> QuoteResponse:
        """Quote on the current snapshot: one store round trip (its version), then pure maths, or the
        answer this process gave the same question on the same snapshot within the minute."""
        snapshot = await self.snapshots.current()
        now = datetime.now(UTC)
        reachable = self.snapshots.store_reachable
        key = QuoteCache.key(_request_encoder.encode(request), snapshot.version, reachable, now.timestamp())
        if (cached := self.quote_cache.get(key)) is not None:
            metrics.QUOTES_SERVED.labels("quoted" if cached.quotes else "nothing_fits").inc()
            return cached
        options = QuoteOptions(
            now=now,
            price_max_age_s=self.settings.price_max_age_s,
            catalog=self.catalog,
            cross_node_factor=self.settings.cross_node_factor,
            store_reachable=reachable,
        )
        response = build_quote(snapshot, request, options=options)
        self.quote_cache.put(key, response)
        metrics.QUOTES_SERVED.labels("quoted" if response.quotes else "nothing_fits").inc()
        return response

    async def aclose(self) -> None:
        await self.store.aclose()


_request_encoder = msgspec.json.Encoder()

# Route handlers declare ``services: Services`` to receive the app's ``AppServices``.
Services = NamedDependency[AppServices]


def build_store(settings: Settings) -> tuple[PriceStore, StoreKind]:
    if settings.redis_url is None:
        return MemoryPriceStore(history_max_entries=settings.history_max_entries), "memory"
    cluster = settings.redis_cluster or settings.redis_url.startswith("redis+cluster://")
    client = connect_redis(settings.redis_url, cluster=cluster)
    store = RedisPriceStore(
        client, namespace=settings.redis_namespace, history_max_entries=settings.history_max_entries
    )
    return store, "redis-cluster" if cluster else "redis"


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
    refresher = RefreshService(
        store=store,
        vendors=vendors,
        context=AdapterContext(base_dir=base_dir, catalog=catalog, environ=dict(os.environ)),
        max_change_ratio=settings.quarantine_change_ratio,
        lock_ttl_s=settings.refresh_lock_ttl_s,
        observers=[metrics.record_refresh],
    )
    return AppServices(
        settings=settings,
        store=store,
        store_kind=store_kind,
        snapshots=SnapshotCache(
            store,
            on_rebuild=_report_snapshot,
            on_store_error=lambda operation: metrics.STORE_ERRORS.labels(operation).inc(),
        ),
        refresher=refresher,
        vendors=vendors,
        catalog=catalog,
    )
