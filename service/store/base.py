"""The price store: where normalized offers, vendor freshness and price history live.

Two implementations share one contract (tests run against both): ``MemoryPriceStore`` (embedded default,
one process) and ``RedisPriceStore`` (shared by every replica and the refresh job).

Guarantees every implementation keeps:
- ``write_vendor`` replaces one vendor's offers and status atomically and bumps the version; readers see
  the old set or the new one, never a mix; other vendors are untouched.
- History gets an entry for a new, changed or removed price, never for a repeat of the same price.
- ``version`` is one cheap read; it moves on every successful write, so a reader rebuilds only then.
- A value the store holds but cannot decode (a version that is not a sane integer, a truncated or
  wrong-schema payload, a key of the wrong type) is a ``StoreCorrupt`` fault naming the key. ``read``
  decodes each vendor and status on its own and lists what it skipped in ``StoreContents.faults``; a
  write overwrites what it cannot decode, so a refresh repairs the store.

Exceptions::

    StoreUnavailable          the store could not be reached or answered with an error
    └── StoreCorrupt          the store answered with a value that does not decode (names the key)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import msgspec

from schemas.offer import Offer
from schemas.vendor import PriceChange, VendorStatus

__all__ = [
    "MAX_VERSION",
    "VERSION_READ_BYTES",
    "PriceStore",
    "StoreContents",
    "StoreCorrupt",
    "StoreUnavailable",
    "parse_version",
    "price_changes",
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
class StoreContents:
    """Everything a snapshot is built from, read consistently at one ``version``."""

    version: int
    offers_by_vendor: Mapping[str, Sequence[Offer]]
    statuses: Mapping[str, VendorStatus]
    # Keys whose value could not be decoded, each with the reason; their vendors are left out above.
    faults: Mapping[str, str] = field(default_factory=dict)
    # Vendors whose offers are stored but could not be decoded.
    unreadable_vendors: frozenset[str] = frozenset()

    @property
    def empty(self) -> bool:
        """Nothing stored at all: a fresh store, or one that restarted without its data."""
        return self.version == 0 and not self.offers_by_vendor and not self.statuses and not self.faults


class PriceStore(Protocol):
    async def version(self) -> int: ...

    async def read(self) -> StoreContents: ...

    async def write_vendor(self, vendor: str, offers: Sequence[Offer], status: VendorStatus) -> int:
        """Replace ``vendor``'s offers and status in one step; returns the new version."""
        ...

    async def write_status(self, status: VendorStatus) -> int:
        """Record a vendor's status only (a failed refresh keeps its offers); returns the new version."""
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
    """The history entries a vendor rewrite produces: new, changed and removed offers only."""
    before = {offer.id: offer for offer in previous}
    changes: list[PriceChange] = []
    for offer in current:
        old = before.pop(offer.id, None)
        if old is not None and old.pricing == offer.pricing:
            continue
        changes.append(
            PriceChange(
                offer_id=offer.id,
                at=at,
                pricing=offer.pricing,
                available_cards=offer.available_cards,
                change="new" if old is None else "changed",
            )
        )
    changes.extend(
        PriceChange(offer_id=old.id, at=at, pricing=old.pricing, change="removed") for old in before.values()
    )
    return changes


offers_encoder = msgspec.msgpack.Encoder()
offers_decoder = msgspec.msgpack.Decoder(list[Offer])
status_decoder = msgspec.msgpack.Decoder(VendorStatus)
change_decoder = msgspec.msgpack.Decoder(PriceChange)
