"""The price store: where normalized offers, vendor freshness and price history live.

Two implementations share one contract (tests run against both): ``MemoryPriceStore`` (embedded default,
one process) and ``RedisPriceStore`` (shared by every replica and the refresh job).

Guarantees every implementation keeps:
- ``write_vendor`` replaces one vendor's offers and status atomically and bumps the version; readers see
  the old set or the new one, never a mix; other vendors are untouched. ``remove_vendor`` takes a vendor
  out the same way (one that left the vendors file).
- History gets an entry for a new, changed (price or stock) or removed offer, never for a repeat; an entry
  is dated when its price was observed (the offer's ``fetched_at``), a removal when it was seen. It is
  bounded: at most ``HistoryBounds.max_entries`` per offer, entries recorded more than ``max_age_s`` ago
  dropped (an offer's newest kept while its history lives), and an offer's history goes ``max_age_s``
  after its last entry, so an offer gone that long leaves nothing behind. A price write never fails
  because its history could not be written.
- ``version`` is one cheap read; it moves on every successful write, so a reader rebuilds only then.
- Decoding is strict: a value the store holds but cannot decode (a version that is not a sane integer, a
  truncated or wrong-schema payload, a time without its offset, an implausible price, a key of the wrong
  type) is a fault naming the key, and so is data that is missing (a vendor whose status counts offers
  but whose offers are gone, offers without their status). ``read`` decodes each vendor and status on
  its own and lists what it skipped in ``StoreContents.faults``; a write overwrites what it cannot
  decode, so a refresh repairs the store.

Exceptions::

    StoreUnavailable          the store could not be reached or answered with an error
    └── StoreCorrupt          the store answered with a value that does not decode (names the key)
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import repeat
from operator import attrgetter
from typing import Literal, Protocol

import msgspec

from schemas.offer import Offer, Pricing, Timestamp, implausible_offer, offer_id
from schemas.vendor import PriceChange, VendorStatus

__all__ = [
    "DECODE_ERRORS",
    "MAX_VERSION",
    "VERSION_READ_BYTES",
    "HistoryBounds",
    "PriceStore",
    "StoreContents",
    "StoreCorrupt",
    "StoreUnavailable",
    "decode_history_entry",
    "decode_offers",
    "encode_history_entry",
    "offers_problem",
    "parse_version",
    "price_changes",
    "visible_history",
]

# Versions start from the clock in milliseconds and count up; anything beyond a JSON-safe integer is junk.
MAX_VERSION = 2**53 - 1
# A reader fetches at most this many bytes of the version: a junk value may be megabytes long.
VERSION_READ_BYTES = 32
_VERSION_DIGITS = len(str(MAX_VERSION))


class StoreUnavailable(Exception):
    """The store could not be reached or answered with an error."""


class StoreCorrupt(StoreUnavailable):
    """The store answered, but ``key`` holds a value that does not decode."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"undecodable value at {key}: {reason}")
        self.key = key
        self.reason = reason


def parse_version(raw: bytes | str | None, key: str) -> int:
    """The stored version as an integer in ``[0, MAX_VERSION]``; absent is 0; anything else is corrupt."""
    if raw is None or raw in {b"", ""}:
        return 0
    text = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
    if len(text) > _VERSION_DIGITS or not text.isascii() or not text.isdigit():
        raise StoreCorrupt(key, f"version is not a non-negative integer ({text[:40]!r})")
    version = int(text)
    if version > MAX_VERSION:
        raise StoreCorrupt(key, f"version {version} is out of range")
    return version


@dataclass(frozen=True, slots=True)
class HistoryBounds:
    """How much price history a store keeps (``Settings.history_*``)."""

    max_entries: int = 100
    # Entries recorded longer ago are dropped (an offer's newest excepted), and an offer's history goes
    # this long after its last entry (an offer removed, or whose price has not moved since).
    max_age_s: float = 30 * 86_400.0
    # Redis only: history is written only while the server's used memory is below this share of its
    # ``maxmemory``, so prices always have room (0: no check).
    memory_limit_ratio: float = 0.5


@dataclass(frozen=True, slots=True)
class StoreContents:
    """Everything a snapshot is built from, read consistently at one ``version``."""

    version: int
    offers_by_vendor: Mapping[str, Sequence[Offer]]
    statuses: Mapping[str, VendorStatus]
    # Keys whose value could not be decoded or is missing, each with the reason; their vendors are left
    # out above.
    faults: Mapping[str, str] = field(default_factory=dict)
    # Vendors whose offers are stored but could not be decoded, or are missing while the store says they
    # should be there: a reader keeps what it holds for them, a refresher writes that back.
    unreadable_vendors: frozenset[str] = frozenset()

    @property
    def empty(self) -> bool:
        """Nothing stored at all: a fresh store, or one that restarted without its data."""
        return self.version == 0 and not self.offers_by_vendor and not self.statuses and not self.faults


class PriceStore(Protocol):
    async def version(self) -> int: ...

    async def read(self, *, expected_vendors: Collection[str] = ()) -> StoreContents:
        """Everything stored, at one version. ``expected_vendors`` (the configured ones) are looked for
        even when nothing in the store lists them, so a deleted index or status is found missing."""
        ...

    async def write_vendor(self, vendor: str, offers: Sequence[Offer], status: VendorStatus) -> int:
        """Replace ``vendor``'s offers and status in one step; returns the new version."""
        ...

    async def write_status(self, status: VendorStatus) -> int:
        """Record a vendor's status only (a failed refresh keeps its offers); returns the new version."""
        ...

    async def remove_vendor(self, vendor: str) -> int:
        """Take the vendor's offers and status out in one step (its history records the removals)."""
        ...

    async def history(self, offer_id: str, *, limit: int = 100) -> list[PriceChange]:
        """The offer's price changes, oldest first, at most ``limit`` of the newest."""
        ...

    async def try_lock(self, token: str, ttl_s: float) -> bool:
        """Take the refresh lock for ``token`` unless someone else holds it."""
        ...

    async def unlock(self, token: str) -> None:
        """Release the refresh lock if ``token`` still holds it."""
        ...

    async def ping(self) -> None: ...

    async def aclose(self) -> None: ...


def price_changes(previous: Sequence[Offer], current: Sequence[Offer], at: datetime) -> list[PriceChange]:
    """The history entries a vendor rewrite produces: new offers, changed prices or stock, removed offers.

    A new or changed entry is dated when its price was observed (the offer's ``fetched_at``: a static
    feed's ``observed_at``, else the fetch), a removal ``at`` (when the refresh saw it gone).
    """
    before = {offer.id: offer for offer in previous}
    changes: list[PriceChange] = []
    for offer in current:
        old = before.pop(offer.id, None)
        if old is not None and old.pricing == offer.pricing and old.available_cards == offer.available_cards:
            continue
        changes.append(
            PriceChange(
                offer_id=offer.id,
                at=offer.fetched_at,
                pricing=offer.pricing,
                available_cards=offer.available_cards,
                change="new" if old is None else "changed",
            )
        )
    changes.extend(
        PriceChange(offer_id=old.id, at=at, pricing=old.pricing, change="removed") for old in before.values()
    )
    return changes


def visible_history(entries: Sequence[tuple[float, PriceChange]], cutoff_s: float) -> list[PriceChange]:
    """Entries (each with the Unix time it was recorded) recorded at or after ``cutoff_s``, and the newest
    one in any case: the history's age bound as both stores apply it when read."""
    kept = [change for recorded_s, change in entries[:-1] if recorded_s >= cutoff_s]
    return [*kept, entries[-1][1]] if entries else []


def offers_problem(vendor: str, offers: Sequence[Offer]) -> str | None:
    """Why a vendor's decoded offers cannot be served as they are (``None`` when they can): an offer of
    another vendor or with an id that is not ``<vendor>:<sku>``, an id given twice, an implausible price.
    The refresh never writes such a list; a store holding one was written by something else."""
    seen: set[str] = set()
    for offer in offers:
        if offer.vendor != vendor or offer.id != offer_id(vendor, offer.sku):
            return f"offer {offer.id!r} does not belong to vendor {vendor!r}"
        if offer.id in seen:
            return f"offer {offer.id!r} appears more than once"
        seen.add(offer.id)
        if (problem := implausible_offer(offer)) is not None:
            return f"offer {offer.id!r}: {problem}"
    return None


# What a strict decode of a stored value can raise (a wrong schema, a bad time or number).
DECODE_ERRORS = (msgspec.DecodeError, ValueError, TypeError, OverflowError)

offers_encoder = msgspec.msgpack.Encoder()
offers_decoder = msgspec.msgpack.Decoder(list[Offer])

# The offers' fields whose values repeat across a vendor's offers: its name, places, fetch time, GPU models.
_REPEATED_FIELDS = ("vendor", "region", "city", "gpu", "interconnect", "source", "currency", "fetched_at")


def decode_offers(data: bytes) -> list[Offer]:
    """A vendor's stored offers, strictly decoded (``DECODE_ERRORS`` otherwise), each repeated value held
    once (``_REPEATED_FIELDS``): the decoder makes a new string or time per offer, and at 100,000 offers
    those copies are 35 of the 80 MB the offers take. Shared as each vendor is decoded, so the next one's
    strings fill the room its copies leave."""
    offers = offers_decoder.decode(data)
    held: dict[object, object] = {}
    share = held.setdefault
    for name in _REPEATED_FIELDS:
        values = list(map(attrgetter(name), offers))
        kept = list(map(share, values, values))
        # map, not a loop: a third of the time at 100,000 offers
        list(map(msgspec.structs.force_setattr, offers, repeat(name), kept))
    return offers


status_decoder = msgspec.msgpack.Decoder(VendorStatus)
change_decoder = msgspec.msgpack.Decoder(PriceChange)


class _HistoryEntry(msgspec.Struct, array_like=True, frozen=True):
    """One stored history entry, an array without field names; its offer id is where it is kept."""

    at: Timestamp
    pricing: Pricing
    available_cards: int | None
    change: Literal["new", "changed", "removed"]


_entry_decoder = msgspec.msgpack.Decoder(_HistoryEntry)


def encode_history_entry(change: PriceChange) -> bytes:
    """``change`` as both stores keep it, without its offer id (a msgpack array)."""
    entry = _HistoryEntry(change.at, change.pricing, change.available_cards, change.change)
    return offers_encoder.encode(entry)


def decode_history_entry(offer_id: str, raw: bytes) -> PriceChange:
    """The change ``raw`` holds (``encode_history_entry``), for ``offer_id``; ``DECODE_ERRORS`` otherwise."""
    entry = _entry_decoder.decode(raw)
    return PriceChange(
        offer_id=offer_id,
        at=entry.at,
        pricing=entry.pricing,
        available_cards=entry.available_cards,
        change=entry.change,
    )
