"""What keeps a replica's answers sound around the store: the check every new snapshot passes, the
write-back of offers the store lost, and history reads held to the store deadline."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from contextlib import suppress
from datetime import UTC, datetime

from adapters import GpuCatalog
from schemas.quote import QuoteRequest, Workload
from schemas.vendor import PriceChange, VendorConfig
from service import metrics
from service.errors import StoreUnreachable
from service.quote import QuoteOptions, Snapshot, build_quote, prepare_snapshot
from service.refresh import RefreshService
from service.services.offers import vendor_freshness
from service.settings import Settings
from service.store.base import PriceStore, StoreContents, StoreUnavailable
from service.store.breaker import StoreBreaker
from service.store.deadline import StoreSlow, wait_for_store

__all__ = ["Restorer", "quote_options", "read_history", "snapshot_check"]

logger = logging.getLogger("gpuquote.services")

# The request every new snapshot must answer before it is served: every offer at every count it sells.
_CHECK_REQUEST = QuoteRequest(workload=Workload(gpu_hours=1.0))


def quote_options(
    settings: Settings,
    catalog: GpuCatalog,
    vendors: Sequence[VendorConfig],
    now: datetime,
    *,
    store_reachable: bool = True,
    store_empty: bool = False,
) -> QuoteOptions:
    return QuoteOptions(
        now=now,
        price_max_age_s=settings.price_max_age_s,
        catalog=catalog,
        cross_node_factor=settings.cross_node_factor,
        cross_city_mbps=settings.cross_city_mbps,
        gpu_hours_between_failures=settings.gpu_hours_between_failures,
        max_plan_cards=settings.max_plan_cards,
        store_reachable=store_reachable,
        store_empty=store_empty,
        vendors=vendors,
    )


def snapshot_check(
    settings: Settings, catalog: GpuCatalog, vendors: Sequence[VendorConfig]
) -> Callable[[Snapshot], None]:
    """Raises what a request on a snapshot would hit: the vendor list and a default quote over every
    offer (``SnapshotCache`` does not serve a snapshot that fails it). Then makes what requests of some
    kinds share (``prepare_snapshot``), on the rebuild's thread rather than on the first such request."""

    def check(snapshot: Snapshot) -> None:
        now = datetime.now(UTC)
        vendor_freshness(snapshot, vendors, now=now, max_age_s=settings.price_max_age_s)
        options = quote_options(settings, catalog, vendors, now)
        build_quote(snapshot, _CHECK_REQUEST, options=options)
        prepare_snapshot(snapshot, options)

    return check


async def read_history(
    store: PriceStore, breaker: StoreBreaker, settings: Settings, offer_id: str, *, limit: int
) -> list[PriceChange]:
    """An offer's price history within the store deadline, like every request's store call (the shared
    breaker open: no wait at all); ``StoreUnreachable`` when the store cannot answer in time."""
    if not breaker.allow():
        raise StoreUnreachable(f"price store unavailable: {breaker.last_error or 'no answer'}")
    read = asyncio.ensure_future(store.history(offer_id, limit=limit))
    deadline_s = settings.store_deadline_s
    try:
        changes = await wait_for_store(read, deadline_s, hard_limit_s=max(2.0, 4 * deadline_s))
    except StoreSlow:
        read.cancel()
        reason = f"store slower than {deadline_s} s"
    except StoreUnavailable as error:
        reason = str(error)
    else:
        breaker.succeeded()
        return changes
    metrics.STORE_ERRORS.labels("history").inc()
    if breaker.failed(reason):
        logger.warning("price store unreachable: %s", reason)
    raise StoreUnreachable(f"price store unavailable: {reason}")


class Restorer:
    """Writes back, in the background, offers this replica holds that the store lost (a store refilled
    by a refresher that held no snapshot while those vendors' feeds failed), so every replica, a new one
    included, serves the same catalog."""

    def __init__(self) -> None:
        self.refresher: RefreshService | None = None
        self._task: asyncio.Task[None] | None = None

    def schedule(self, kept: StoreContents) -> None:
        if self.refresher is None or (self._task is not None and not self._task.done()):
            return
        self._task = asyncio.get_running_loop().create_task(self._restore(self.refresher, kept))

    async def _restore(self, refresher: RefreshService, kept: StoreContents) -> None:
        try:
            restored = await refresher.restore(kept)
        except StoreUnavailable as error:
            logger.warning("could not write the held offers back to the store: %s", error)
            return
        if restored:
            logger.warning("wrote the held offers of %s back to the store", ", ".join(restored))

    async def aclose(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with suppress(asyncio.CancelledError):
                await self._task
