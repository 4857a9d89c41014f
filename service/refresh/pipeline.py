"""The refresh pipeline: every vendor fetched concurrently, screened, and written atomically per vendor.

Fetches run all at once, store writes ``max_store_writes`` at a time: a vendor's write holds a pooled
Redis connection for several round trips, and a caller waits at most the store deadline for one, so
forty vendors writing at once on a pool of 32 failed the last ones ("no free connection in the pool").

One vendor's failure never touches another's offers; a failed vendor keeps its last-known-good offers and
its status records what went wrong. A lock in the store lets one refresher run at a time across
processes and replicas; a second one waits up to ``wait_s`` and then gives up with ``RefreshBusy``.

A store that lost its data (a restart without persistence), holds a vendor that does not decode, or lacks
a vendor whose last refresh failed is refilled from the caller's held snapshot (``held_contents``,
``service.refresh.held``): a vendor whose fetch fails then keeps the offers it had (with their old fetch
times) instead of vanishing from every replica at the next version; ``restore`` writes such offers back
without a fetch. A refresh of every vendor also takes out of the store the vendors the vendors file no
longer lists (``RefreshReport.removed``).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import httpx
import msgspec

from adapters import AdapterContext, FetchResult, VendorFetchError, build_adapter
from adapters.base import build_client
from schemas.api import RefreshReport, VendorRefresh
from schemas.offer import Offer
from schemas.vendor import VendorConfig, VendorStatus
from service.errors import InvalidRequest, RefreshBusy
from service.refresh.held import lost_vendors, restorable, with_held
from service.refresh.quarantine import screen_prices
from service.store.base import PriceStore, StoreContents, StoreUnavailable

__all__ = ["RefreshService"]

logger = logging.getLogger("gpuquote.refresh")

ProgressCallback = Callable[[VendorRefresh], None]
_LOCK_POLL_S = 0.2


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class RefreshService:
    store: PriceStore
    vendors: Sequence[VendorConfig]
    context: AdapterContext
    max_change_ratio: float = 0.6
    lock_ttl_s: float = 300.0
    client_factory: Callable[[], httpx.AsyncClient] = build_client
    clock: Callable[[], datetime] = _utc_now
    observers: list[ProgressCallback] = field(default_factory=list)
    # The offers and statuses this process serves, to refill a store that lost them.
    held_contents: Callable[[], StoreContents | None] | None = None
    # Awaited after a refresh or a restore wrote the store, before it returns: the process's own snapshot
    # catches up (``SnapshotCache.catch_up``), so whoever asked is answered from what was written.
    after_write: Callable[[], Awaitable[None]] | None = None
    # Vendors written to the store at once (None: no bound); below the Redis pool's size (build_services).
    max_store_writes: int | None = None

    def select(self, vendor_id: str | None) -> list[VendorConfig]:
        if vendor_id is None:
            return [vendor for vendor in self.vendors if vendor.enabled]
        chosen = [vendor for vendor in self.vendors if vendor.id == vendor_id]
        if not chosen:
            known = ", ".join(vendor.id for vendor in self.vendors)
            raise InvalidRequest("vendor", f"unknown vendor {vendor_id!r}; configured: {known}")
        return chosen

    async def refresh(
        self,
        vendor_id: str | None = None,
        *,
        wait_s: float = 0.0,
        on_progress: ProgressCallback | None = None,
    ) -> RefreshReport:
        """Refresh all enabled vendors (or one); raises ``RefreshBusy`` if the lock stays taken."""
        chosen = self.select(vendor_id)
        token = uuid.uuid4().hex
        await self._acquire(token, wait_s)
        removed: list[str] = []
        try:
            stored = await self.store.read(expected_vendors=self._configured)
            contents = with_held(stored, self._held())
            writes = asyncio.Semaphore(self.max_store_writes or max(1, len(chosen)))
            async with self.client_factory() as client:
                outcomes = await asyncio.gather(
                    *(
                        self._refresh_vendor(
                            vendor,
                            client,
                            writes,
                            contents.offers_by_vendor.get(vendor.id, ()),
                            contents.statuses,
                            on_progress,
                            seed=vendor.id in contents.unreadable_vendors,
                        )
                        for vendor in chosen
                    )
                )
            if vendor_id is None:
                removed = await self._remove_unlisted(stored)
            version = await self.store.version()
        finally:
            await self.store.unlock(token)
        await self._written()
        return RefreshReport(
            ok=all(outcome.ok for outcome in outcomes),
            vendors=list(outcomes),
            version=version,
            removed=removed,
        )

    @property
    def _configured(self) -> frozenset[str]:
        return frozenset(vendor.id for vendor in self.vendors)

    def _held(self) -> StoreContents | None:
        return self.held_contents() if self.held_contents is not None else None

    async def _remove_unlisted(self, stored: StoreContents) -> list[str]:
        """Vendors the store holds that the vendors file no longer lists, taken out of the store."""
        gone = sorted(lost_vendors(stored) - self._configured)
        for vendor in gone:
            await self.store.remove_vendor(vendor)
            logger.warning("vendor %s is not in the vendors file any more: removed its offers", vendor)
        return gone

    async def restore(self, kept: StoreContents) -> list[str]:
        """Write ``kept`` (offers a reader holds) back for each vendor the store still lacks after a failed
        refresh; skipped while another refresher holds the lock. Returns the vendors written back."""
        token = uuid.uuid4().hex
        if not await self.store.try_lock(token, self.lock_ttl_s):
            return []
        restored: list[str] = []
        try:
            stored = await self.store.read(expected_vendors=self._configured)
            for vendor, offers, status in restorable(stored, kept, self._configured):
                await self.store.write_vendor(vendor, offers, status)
                restored.append(vendor)
        finally:
            await self.store.unlock(token)
        if restored:
            await self._written()
        return restored

    async def _written(self) -> None:
        if self.after_write is not None:
            await self.after_write()

    async def _acquire(self, token: str, wait_s: float) -> None:
        deadline = time.monotonic() + wait_s
        while not await self.store.try_lock(token, self.lock_ttl_s):
            if time.monotonic() >= deadline:
                raise RefreshBusy("another refresh holds the lock; try again when it finishes")
            await asyncio.sleep(_LOCK_POLL_S)

    async def _fetch(self, vendor: VendorConfig, client: httpx.AsyncClient) -> FetchResult:
        # The adapter bounds each request; this bounds the whole feed (pages, retries, backoff) too.
        budget_s = vendor.timeout_s * (vendor.retries + 1) * 2 + 5
        async with asyncio.timeout(budget_s):
            result = await build_adapter(vendor, client=client, context=self.context).fetch()
        if not result.offers:
            reasons = ", ".join(f"{reason}×{count}" for reason, count in result.rejected_by_reason().items())
            raise VendorFetchError(
                vendor.id, f"feed yielded no valid offers ({reasons or 'empty feed'})", category="malformed"
            )
        return result

    async def _refresh_vendor(
        self,
        vendor: VendorConfig,
        client: httpx.AsyncClient,
        writes: asyncio.Semaphore,
        previous: Sequence[Offer],
        statuses: Mapping[str, VendorStatus],
        on_progress: ProgressCallback | None,
        *,
        seed: bool = False,
    ) -> VendorRefresh:
        started = time.monotonic()
        attempted_at = self.clock()
        status = statuses.get(vendor.id) or VendorStatus(vendor=vendor.id)
        status = msgspec.structs.replace(
            status, name=vendor.name, region=vendor.region, city=vendor.city, last_attempt_at=attempted_at
        )
        try:
            result = await self._fetch(vendor, client)
            async with writes:
                outcome = await self._store_result(vendor, result, previous, status, attempted_at)
        except (VendorFetchError, TimeoutError, StoreUnavailable) as error:
            category, message = _describe(error)
            async with writes:
                outcome = await self._record_failure(
                    vendor, status, attempted_at, category, message, previous if seed else None
                )
        except Exception as error:  # an adapter bug must not cost the other vendors their refresh
            logger.exception("vendor %s: unexpected error during refresh", vendor.id)
            async with writes:
                outcome = await self._record_failure(
                    vendor,
                    status,
                    attempted_at,
                    "internal",
                    f"internal error: {error!r}",
                    previous if seed else None,
                )
        outcome = msgspec.structs.replace(outcome, duration_s=round(time.monotonic() - started, 3))
        for callback in (*self.observers, *((on_progress,) if on_progress else ())):
            callback(outcome)
        return outcome

    async def _store_result(
        self,
        vendor: VendorConfig,
        result: FetchResult,
        previous: Sequence[Offer],
        status: VendorStatus,
        attempted_at: datetime,
    ) -> VendorRefresh:
        screened = screen_prices(
            previous,
            result.offers,
            status.quarantined,
            max_change_ratio=self.max_change_ratio,
            now=attempted_at,
        )
        new_status = msgspec.structs.replace(
            status,
            last_success_at=attempted_at,
            offer_count=len(screened.served),
            rows_dropped=len(result.rejected),
            drop_reasons=result.rejected_by_reason(),
            quarantined=screened.quarantined,
        )
        await self.store.write_vendor(vendor.id, screened.served, new_status)
        for row in result.rejected:
            logger.warning("vendor %s: dropped row %s (%s: %s)", vendor.id, row.sku, row.reason, row.detail)
        return VendorRefresh(
            vendor=vendor.id,
            ok=True,
            offers=len(screened.served),
            rows_dropped=len(result.rejected),
            quarantined=len(screened.quarantined),
            released=screened.released,
        )

    async def _record_failure(
        self,
        vendor: VendorConfig,
        status: VendorStatus,
        attempted_at: datetime,
        category: str,
        message: str,
        seed: Sequence[Offer] | None = None,
    ) -> VendorRefresh:
        """Keep the vendor's offers and record the error; ``seed`` writes the held offers back as well,
        for a store that lost them."""
        logger.warning("vendor %s: refresh failed, keeping previous offers: %s", vendor.id, message)
        failed = msgspec.structs.replace(
            status, last_error=message, last_error_category=category, last_error_at=attempted_at
        )
        try:
            if seed:
                await self.store.write_vendor(vendor.id, seed, failed)
            else:
                await self.store.write_status(failed)
        except StoreUnavailable as error:
            message = f"{message}; status not recorded: {error}"
        return VendorRefresh(vendor=vendor.id, ok=False, offers=status.offer_count, error=message)


def _describe(error: Exception) -> tuple[str, str]:
    """The error's public category and its detail (admin view and logs only)."""
    if isinstance(error, VendorFetchError):
        return error.category, error.message
    if isinstance(error, TimeoutError):
        return "timeout", "feed took longer than its whole-refresh budget"
    return "store", str(error)
