"""The in-process snapshot cache: the engine's input rebuilt only when the store's version moved.

Each request costs one ``GET version`` round trip, bounded by ``deadline_s`` in total; the catalog is
decoded and the tables are prepared once per version. Whatever the store does, a held snapshot keeps
serving and the cache remembers why (the store's state for ``/ready`` and the quotes' warnings):

- unreachable or slower than the deadline: the shared breaker opens, and until it closes only one
  request per probe interval asks the store again;
- a version or a payload that does not decode (``StoreCorrupt``): the version that failed is remembered
  and not read again until it moves; a vendor that does not decode keeps its offers from the held
  snapshot while the others are rebuilt;
- empty (a restart without data): the held snapshot keeps serving until a refresh refills the store.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import suppress
from datetime import UTC, datetime

from schemas.offer import Offer
from service.errors import StoreUnreachable
from service.quote import Snapshot
from service.store.base import PriceStore, StoreContents, StoreCorrupt, StoreUnavailable
from service.store.breaker import StoreBreaker

__all__ = ["SnapshotCache"]

logger = logging.getLogger("gpuquote.snapshots")


def _utc_now() -> datetime:
    return datetime.now(UTC)


def snapshot_of(contents: StoreContents, *, built_at: datetime) -> Snapshot:
    """The engine's snapshot of what the store holds: offers in vendor order, as stored."""
    offers = (
        offer for vendor in sorted(contents.offers_by_vendor) for offer in contents.offers_by_vendor[vendor]
    )
    return Snapshot.of(offers, contents.statuses, version=contents.version, built_at=built_at)


def held_contents(snapshot: Snapshot) -> StoreContents:
    """A snapshot's offers and statuses, grouped by vendor the way the store holds them."""
    offers: dict[str, list[Offer]] = {}
    for offer in snapshot.offers:
        offers.setdefault(offer.vendor, []).append(offer)
    return StoreContents(version=snapshot.version, offers_by_vendor=offers, statuses=dict(snapshot.statuses))


class SnapshotCache:
    """Hands out the current snapshot, checking the store's version once per call."""

    def __init__(
        self,
        store: PriceStore,
        *,
        deadline_s: float = 0.5,
        breaker: StoreBreaker | None = None,
        clock: Callable[[], datetime] = _utc_now,
        on_rebuild: Callable[[Snapshot], None] | None = None,
        on_store_error: Callable[[str], None] | None = None,
    ) -> None:
        self._store = store
        self._deadline_s = deadline_s
        self.breaker = breaker or StoreBreaker()
        self._clock = clock
        self._on_rebuild = on_rebuild
        self._on_store_error = on_store_error
        self._snapshot: Snapshot | None = None
        self._rebuild: asyncio.Task[Snapshot] | None = None
        # The version whose contents did not decode, and what was wrong (kept until the version moves).
        self._fault_version: int | None = None
        self.store_fault: str | None = None
        self.store_reachable = True
        self.store_empty = False
        self.last_store_error: str | None = None

    @property
    def held(self) -> Snapshot | None:
        """The snapshot in memory, without asking the store."""
        return self._snapshot

    def held_contents(self) -> StoreContents | None:
        """The held snapshot as store contents (to seed a store that came back empty)."""
        return held_contents(self._snapshot) if self._snapshot is not None else None

    async def current(self) -> Snapshot:
        held = self._snapshot
        if held is not None and not self.breaker.allow():
            self.store_reachable = False
            return held
        try:
            async with asyncio.timeout(self._deadline_s if held is not None else None):
                return await self._checked(held)
        except TimeoutError:
            if held is not None and self._rebuild is not None:
                return held  # the store answered; the new snapshot is still being built
            return self._fallback("version", StoreUnavailable(f"store slower than {self._deadline_s} s"))

    async def _checked(self, held: Snapshot | None) -> Snapshot:
        try:
            # With a snapshot held, ``current`` bounds this whole check already: one timer per request.
            async with asyncio.timeout(None if held is not None else self._deadline_s):
                version = await self._store.version()
        except TimeoutError:
            return self._fallback("version", StoreUnavailable(f"store slower than {self._deadline_s} s"))
        except StoreCorrupt as error:
            return self._corrupt(error)
        except StoreUnavailable as error:
            return self._fallback("version", error)
        self._store_answered()
        if held is not None and version == 0:
            # The store lost its data (a restart without persistence): keep serving the prices held
            # here until a refresh fills the store again.
            self.store_empty = True
            self.store_fault = None
            return held
        self.store_empty = False
        if held is not None and version in {held.version, self._fault_version}:
            if version != self._fault_version:
                self.store_fault = None
            return held
        if self._rebuild is None:
            self._rebuild = asyncio.create_task(self._rebuild_at(version))
            self._rebuild.add_done_callback(_retrieve)
        # Shielded: a request out of time leaves the rebuild running for the next one.
        return await asyncio.shield(self._rebuild)

    async def _rebuild_at(self, version: int) -> Snapshot:
        try:
            try:
                contents = await self._store.read()
            except StoreUnavailable as error:
                return self._fallback("read", error)
            if contents.faults:
                self._report_faults(version, contents)
                if contents.version == 0 and self._snapshot is not None:
                    return self._snapshot  # the version itself went bad between the two reads
                contents = self._patched(contents)
            else:
                self._fault_version, self.store_fault = None, None
            contents = self._kept_failed_vendors(contents)
            # Building the tables is CPU work; a thread keeps the event loop answering meanwhile.
            snapshot = await asyncio.to_thread(snapshot_of, contents, built_at=self._clock())
            self._snapshot = snapshot
            self.store_empty = contents.empty
            if self._on_rebuild is not None:
                self._on_rebuild(snapshot)
            return snapshot
        finally:
            self._rebuild = None

    def _patched(self, contents: StoreContents) -> StoreContents:
        """Vendors that did not decode keep their offers (and statuses) from the held snapshot."""
        held = self.held_contents()
        if held is None:
            return contents
        offers = dict(contents.offers_by_vendor)
        for vendor in contents.unreadable_vendors:
            if vendor in held.offers_by_vendor:
                offers[vendor] = held.offers_by_vendor[vendor]
        return StoreContents(
            version=contents.version,
            offers_by_vendor=offers,
            statuses={**held.statuses, **contents.statuses},
            faults=contents.faults,
            unreadable_vendors=contents.unreadable_vendors,
        )

    def _kept_failed_vendors(self, contents: StoreContents) -> StoreContents:
        """A vendor the store holds no offers for, whose stored status says its last refresh failed, keeps
        the offers held here (with their old ``fetched_at``, so they age toward stale).

        That is a store that came back empty and was refilled by a refresher holding no snapshot (the
        ``gpuquote refresh`` CronJob) while this vendor's feed was down: its offers are missing, not
        withdrawn. A vendor whose feed succeeds with no offers, or that leaves the vendors file (no status),
        is dropped as before.
        """
        held = self._snapshot
        if held is None:
            return contents
        kept: dict[str, list[Offer]] = {}
        for offer in held.offers:
            status = contents.statuses.get(offer.vendor)
            if offer.vendor in contents.offers_by_vendor or status is None or status.last_error_at is None:
                continue
            if status.last_success_at is not None and status.last_success_at >= status.last_error_at:
                continue
            kept.setdefault(offer.vendor, []).append(offer)
        if not kept:
            return contents
        logger.warning(
            "store holds no offers for %s after a failed refresh; keeping the held offers",
            ", ".join(sorted(kept)),
        )
        return StoreContents(
            version=contents.version,
            offers_by_vendor={**contents.offers_by_vendor, **kept},
            statuses=contents.statuses,
            faults=contents.faults,
            unreadable_vendors=contents.unreadable_vendors,
        )

    def _report_faults(self, version: int, contents: StoreContents) -> None:
        keys = ", ".join(sorted(contents.faults))
        self._fault_version = version
        self.store_fault = f"undecodable values in the price store ({keys}); serving held prices for them"
        logger.warning("price store version %d: %s", version, self.store_fault)
        if self._on_store_error is not None:
            self._on_store_error("decode")

    def _corrupt(self, error: StoreCorrupt) -> Snapshot:
        # The store answers, so the breaker stays closed; the bad version is at most a few bytes read.
        self._store_answered()
        if self.store_fault != str(error):
            logger.warning("price store fault, serving the held snapshot: %s", error)
        self.store_fault = str(error)
        if self._on_store_error is not None:
            self._on_store_error("decode")
        if self._snapshot is None:
            raise StoreUnreachable(f"price store unreadable and no snapshot held: {error}") from error
        return self._snapshot

    def _store_answered(self) -> None:
        if self.breaker.succeeded():
            logger.info("price store reachable again")
        self.store_reachable = True
        self.last_store_error = None

    def _fallback(self, operation: str, error: StoreUnavailable) -> Snapshot:
        if self._on_store_error is not None:
            self._on_store_error(operation)
        if self.breaker.failed(str(error)):
            logger.warning("price store unreachable, serving the held snapshot: %s", error)
        self.store_reachable = False
        self.last_store_error = str(error)
        if self._snapshot is None:
            raise StoreUnreachable(f"price store unreachable and no snapshot held: {error}") from error
        return self._snapshot

    async def aclose(self) -> None:
        if self._rebuild is not None:
            self._rebuild.cancel()
            with suppress(asyncio.CancelledError, StoreUnreachable):
                await self._rebuild


def _retrieve(task: asyncio.Task[Snapshot]) -> None:
    """A rebuild nobody waited for to the end still has its error looked at (and not logged as lost)."""
    if not task.cancelled():
        task.exception()
