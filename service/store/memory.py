"""The embedded price store: one process, no Redis; the default when ``GPUQUOTE_REDIS_URL`` is unset.

It stores the same msgpack payloads the Redis store does, so both stores hand out equal, independent
copies (a caller mutating what it read cannot corrupt the store).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from datetime import UTC, datetime

from schemas.offer import Offer
from schemas.vendor import PriceChange, VendorStatus
from service.store.base import (
    StoreContents,
    change_decoder,
    offers_decoder,
    offers_encoder,
    price_changes,
    status_decoder,
)

__all__ = ["MemoryPriceStore"]


class MemoryPriceStore:
    def __init__(self, *, history_max_entries: int = 500) -> None:
        self._version = 0
        self._offers: dict[str, bytes] = {}
        self._statuses: dict[str, bytes] = {}
        self._history: dict[str, deque[bytes]] = {}
        self._history_max_entries = history_max_entries
        self._lock_token: str | None = None
        self._lock_expires_at = 0.0

    async def version(self) -> int:
        return self._version

    async def read(self) -> StoreContents:
        # No await between these reads: a concurrent writer cannot interleave on one event loop.
        return StoreContents(
            version=self._version,
            offers_by_vendor={vendor: offers_decoder.decode(raw) for vendor, raw in self._offers.items()},
            statuses={vendor: status_decoder.decode(raw) for vendor, raw in self._statuses.items()},
        )

    async def write_vendor(self, vendor: str, offers: Sequence[Offer], status: VendorStatus) -> int:
        previous = offers_decoder.decode(self._offers[vendor]) if vendor in self._offers else []
        for change in price_changes(previous, offers, datetime.now(UTC)):
            entries = self._history.setdefault(change.offer_id, deque(maxlen=self._history_max_entries))
            entries.append(offers_encoder.encode(change))
        self._offers[vendor] = offers_encoder.encode(list(offers))
        self._statuses[vendor] = offers_encoder.encode(status)
        self._version += 1
        return self._version

    async def write_status(self, status: VendorStatus) -> int:
        self._statuses[status.vendor] = offers_encoder.encode(status)
        self._version += 1
        return self._version

    async def history(self, offer_id: str, *, limit: int = 100) -> list[PriceChange]:
        entries = list(self._history.get(offer_id, ()))[-limit:]
        return [change_decoder.decode(raw) for raw in entries]

    async def try_lock(self, token: str, ttl_s: float) -> bool:
        now = time.monotonic()
        if self._lock_token is not None and now < self._lock_expires_at and self._lock_token != token:
            return False
        self._lock_token = token
        self._lock_expires_at = now + ttl_s
        return True

    async def unlock(self, token: str) -> None:
        if self._lock_token == token:
            self._lock_token = None

    async def ping(self) -> None:
        return None

    async def aclose(self) -> None:
        return None
