"""The embedded price store: one process, no Redis; the default when ``GPUQUOTE_REDIS_URL`` is unset.

It stores the same msgpack payloads the Redis store does and decodes them as strictly, so both stores hand
out equal, independent copies (a caller mutating what it read cannot corrupt the store), and its history
keeps the same bounds (entries, age, and an offer's history gone ``max_age_s`` after its last entry). A
vendor's offers are kept compressed: msgpack repeats every field's name in every offer, so 100,000 offers
take 42 MB as written and 3.5 MB compressed (all decompressed in 66 ms, compressed in 110 ms).
"""

from __future__ import annotations

import struct
import time
import zlib
from collections.abc import Callable, Collection, Iterator, Sequence
from datetime import UTC, datetime

from schemas.offer import Offer
from schemas.vendor import PriceChange, VendorStatus
from service.background import BACKGROUND_NICE, BackgroundThread
from service.store.base import (
    DECODE_ERRORS,
    HistoryBounds,
    StoreContents,
    decode_history_entry,
    decode_offers,
    encode_history_entry,
    offers_encoder,
    offers_problem,
    price_changes,
    status_decoder,
    visible_history,
)

__all__ = ["MemoryPriceStore"]

# A history record: when it was recorded (Unix seconds), its entry's length, then the entry.
_RECORD_HEAD = struct.Struct("<dI")
# zlib's fastest: 3.5 MB of 42 for 100,000 offers; level 9 takes 2.4 MB, in four times as long.
_COMPRESSION_LEVEL = 1


class MemoryPriceStore:
    def __init__(
        self,
        *,
        history_max_entries: int | None = None,
        history: HistoryBounds | None = None,
        clock: Callable[[], float] = time.time,
        decode_nice: int = BACKGROUND_NICE,
    ) -> None:
        bounds = history or HistoryBounds()
        if history_max_entries is not None:
            bounds = HistoryBounds(history_max_entries, bounds.max_age_s, bounds.memory_limit_ratio)
        self._bounds = bounds
        self._clock = clock
        self._version = 0
        self._offers: dict[str, bytes] = {}
        self._statuses: dict[str, bytes] = {}
        # offer id -> its records (``_RECORD_HEAD`` and the entry, ``encode_history_entry``), oldest first,
        # in one bytes object. Most offers hold one entry: at 96,000 offers a list of (time, entry) pairs
        # per offer took 54 MB, one bytes object each 32. The offers are in the order their history was
        # last written, so the histories that expired (``max_age_s`` after their last entry) lead the
        # dict: a write looks at those alone, where a dict of each one's expiry (6 MB more at 96,000
        # offers) was read whole, 2.2 ms on the event loop per vendor written.
        self._history: dict[str, bytes] = {}
        # Reads decompress and decode on a thread of their own, as Redis's do: at 96,000 offers a read
        # takes 0.3 s, which would otherwise hold the event loop. Started on the first read after the
        # store was made or closed: the embedded store outlives an app that closes it (its contents stay).
        self._decode_nice = decode_nice
        self._decoder: BackgroundThread | None = None
        self._lock_token: str | None = None
        self._lock_expires_at = 0.0

    async def version(self) -> int:
        return self._version

    async def read(self, *, expected_vendors: Collection[str] = ()) -> StoreContents:
        # What is read is taken whole on the loop (no await between: a writer cannot interleave), then
        # decoded on the thread; the stored bytes are never changed, only replaced.
        if self._decoder is None:
            self._decoder = BackgroundThread("gpuquote-store-decode", nice=self._decode_nice)
        return await self._decoder.run(_contents, self._version, dict(self._offers), dict(self._statuses))

    async def write_vendor(self, vendor: str, offers: Sequence[Offer], status: VendorStatus) -> int:
        previous = _decoded(self._offers[vendor]) if vendor in self._offers else []
        self._record(price_changes(previous, offers, datetime.now(UTC)))
        self._offers[vendor] = zlib.compress(offers_encoder.encode(list(offers)), _COMPRESSION_LEVEL)
        self._statuses[vendor] = offers_encoder.encode(status)
        self._version += 1
        return self._version

    async def write_status(self, status: VendorStatus) -> int:
        self._statuses[status.vendor] = offers_encoder.encode(status)
        self._version += 1
        return self._version

    async def remove_vendor(self, vendor: str) -> int:
        previous = _decoded(self._offers.pop(vendor)) if vendor in self._offers else []
        self._statuses.pop(vendor, None)
        self._record(price_changes(previous, [], datetime.now(UTC)))
        self._version += 1
        return self._version

    def _record(self, changes: Sequence[PriceChange]) -> None:
        now = self._clock()
        self._expire(now)
        most = self._bounds.max_entries
        for change in changes:
            entry = encode_history_entry(change)
            record = _RECORD_HEAD.pack(now, len(entry)) + entry
            # Taken out and put back: the offer moves to the end, its history written last.
            held = self._history.pop(change.offer_id, None)
            if held is not None and not self._expired(held, now):  # expired: one a clock set back left
                starts = [start for start, _, _ in _records(held)]
                record = held[starts[len(starts) + 1 - most] if len(starts) >= most else 0 :] + record
            self._history[change.offer_id] = record

    def _expired(self, held: bytes, now: float) -> bool:
        """Whether a history is gone at ``now``: ``max_age_s`` after its last entry."""
        *_, (_, last_recorded_s, _) = _records(held)
        return last_recorded_s + self._bounds.max_age_s <= now

    def _expire(self, now: float) -> None:
        """Drop the histories gone at ``now``, from the one written longest ago up to the first that is
        not (a clock set back can leave a later one gone: ``history`` and ``_record`` pass over it)."""
        history = self._history
        gone = []
        # One pass of one iterator: a new iterator per deletion would scan every slot deleted before it
        # (a dict frees its front only when it grows), quadratic when many histories end at once.
        for offer_id, held in history.items():
            if not self._expired(held, now):
                break
            gone.append(offer_id)
        for offer_id in gone:
            del history[offer_id]

    async def history(self, offer_id: str, *, limit: int = 100) -> list[PriceChange]:
        now = self._clock()
        self._expire(now)
        held = self._history.get(offer_id, b"")
        if held and self._expired(held, now):  # gone, behind one that is not (a clock set back)
            held = b""
        records = list(_records(held))[-limit:]
        entries = [(recorded_s, decode_history_entry(offer_id, entry)) for _, recorded_s, entry in records]
        return visible_history(entries, now - self._bounds.max_age_s)

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
        if self._decoder is not None:
            self._decoder.close()
            self._decoder = None


def _decoded(stored: bytes) -> list[Offer]:
    return decode_offers(zlib.decompress(stored))


def _contents(
    version: int, offers_by_vendor: dict[str, bytes], statuses_by_vendor: dict[str, bytes]
) -> StoreContents:
    """The store's contents as written: what was written here was encoded from valid Structs; a value that
    still fails the strict decode (a time without its offset, an implausible price) is a fault, as it is
    in Redis."""
    faults: dict[str, str] = {}
    offers: dict[str, list[Offer]] = {}
    unreadable: set[str] = set()
    for vendor, raw in offers_by_vendor.items():
        try:
            decoded = _decoded(raw)
            problem = offers_problem(vendor, decoded)
        except DECODE_ERRORS as error:
            problem = str(error)
        if problem is not None:
            faults[f"vendor:{vendor}"] = problem
            unreadable.add(vendor)
        else:
            offers[vendor] = decoded
    statuses: dict[str, VendorStatus] = {}
    for vendor, raw in statuses_by_vendor.items():
        try:
            statuses[vendor] = status_decoder.decode(raw)
        except DECODE_ERRORS as error:
            faults[f"status[{vendor}]"] = str(error)
    return StoreContents(
        version=version,
        offers_by_vendor=offers,
        statuses=statuses,
        faults=faults,
        unreadable_vendors=frozenset(unreadable),
    )


def _records(held: bytes) -> Iterator[tuple[int, float, bytes]]:
    """Each record of an offer's history (``_RECORD_HEAD``): where it starts, when it was recorded, its
    entry."""
    start = 0
    while start < len(held):
        recorded_s, length = _RECORD_HEAD.unpack_from(held, start)
        entry_at = start + _RECORD_HEAD.size
        yield start, recorded_s, held[entry_at : entry_at + length]
        start = entry_at + length
