"""The in-process snapshot cache: the engine's input rebuilt only when the store's version moved.

Each request costs one ``GET version`` round trip; the catalog is decoded and the tables are prepared once
per version. When the store cannot be reached, the last snapshot keeps serving and ``store_reachable`` says
so, so quoting carries on from known prices while the store is down.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime

from service.errors import StoreUnreachable
from service.quote import Snapshot
from service.store.base import PriceStore, StoreUnavailable

__all__ = ["SnapshotCache"]


def _utc_now() -> datetime:
    return datetime.now(UTC)


class SnapshotCache:
    """Hands out the current snapshot, checking the store's version once per call."""

    def __init__(
        self,
        store: PriceStore,
        *,
        clock: Callable[[], datetime] = _utc_now,
        on_rebuild: Callable[[Snapshot], None] | None = None,
        on_store_error: Callable[[str], None] | None = None,
    ) -> None:
        self._store = store
        self._clock = clock
        self._on_rebuild = on_rebuild
        self._on_store_error = on_store_error
        self._snapshot: Snapshot | None = None
        self._rebuild_lock = asyncio.Lock()
        self.store_reachable = True
        self.last_store_error: str | None = None

    @property
    def held(self) -> Snapshot | None:
        """The snapshot in memory, without asking the store."""
        return self._snapshot

    async def current(self) -> Snapshot:
        try:
            version = await self._store.version()
        except StoreUnavailable as error:
            return self._fallback("version", error)
        snapshot = self._snapshot
        if snapshot is not None and version in {snapshot.version, 0}:
            # Version 0 means the store lost its data (a restart without persistence): keep serving
            # the prices held here until a refresh fills the store again.
            self._mark_reachable()
            return snapshot
        async with self._rebuild_lock:
            snapshot = self._snapshot
            if snapshot is not None and snapshot.version == version:
                self._mark_reachable()
                return snapshot
            try:
                contents = await self._store.read()
            except StoreUnavailable as error:
                return self._fallback("read", error)
            # Building the tables is CPU work; a thread keeps the event loop answering meanwhile.
            snapshot = await asyncio.to_thread(Snapshot.build, contents, built_at=self._clock())
            self._snapshot = snapshot
            self._mark_reachable()
            if self._on_rebuild is not None:
                self._on_rebuild(snapshot)
            return snapshot

    def _mark_reachable(self) -> None:
        self.store_reachable = True
        self.last_store_error = None

    def _fallback(self, operation: str, error: StoreUnavailable) -> Snapshot:
        if self._on_store_error is not None:
            self._on_store_error(operation)
        self.store_reachable = False
        self.last_store_error = str(error)
        if self._snapshot is None:
            raise StoreUnreachable(f"price store unreachable and no snapshot held: {error}") from error
        return self._snapshot
