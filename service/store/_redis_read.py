"""Reading the Redis store's contents: which keys, one consistent MULTI, and a strict decode.

Whatever the keys hold, a read never raises on it. Each vendor and status decodes on its own, strictly
(``schemas``: a time without its offset, a wrong schema, an implausible price fail), and what fails is a
fault naming its key. Missing data is a fault too, found from three lists of vendors that must agree: the
vendor index (a set every write adds to), the status hash, and the vendors the caller expects (the
configured ones)::

    offers missing    the status counts offers, or the index lists the vendor with no status either
    status missing    offers are stored without their status
    nothing at all    the version says data was written, and neither index nor status lists a vendor

A vendor whose offers are missing or do not decode is listed in ``StoreContents.unreadable_vendors``:
a reader keeps what it holds for it, a refresher writes that back.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from schemas.offer import Offer
from schemas.vendor import VendorStatus
from service.background import BackgroundThread
from service.store.base import (
    DECODE_ERRORS,
    VERSION_READ_BYTES,
    StoreContents,
    StoreCorrupt,
    StoreUnavailable,
    decode_offers,
    offers_problem,
    parse_version,
    status_decoder,
)

__all__ = ["DecodedVendors", "Keys", "read_contents"]

# Each vendor's offers as last decoded, by the digest of the bytes they were decoded from: a read decodes
# and checks only the vendors whose stored bytes changed since (a refresh writes vendor by vendor, and
# each write is a version the replicas read in full). Replaced by every read, so it holds the vendors
# the store holds, each once; the offers are the ones the snapshot holds anyway.
DecodedVendors = dict[str, tuple[bytes, tuple[Offer, ...]]]

logger = logging.getLogger("gpuquote.store")

_READ_ATTEMPTS = 5
FaultCallback = Callable[[str, str, str], None]


@dataclass(frozen=True, slots=True)
class Keys:
    """The store's key names under one namespace (``<ns>:{prices}:...``)."""

    version: str
    status: str
    index: str
    lock: str
    layout: str
    vendor_prefix: str
    history_prefix: str

    @classmethod
    def under(cls, namespace: str) -> Keys:
        prefix = f"{namespace}:{{prices}}"
        return cls(
            version=f"{prefix}:version",
            status=f"{prefix}:status",
            index=f"{prefix}:vendors",
            lock=f"{prefix}:refresh-lock",
            layout=f"{prefix}:history-layout",
            vendor_prefix=f"{prefix}:vendor:",
            history_prefix=f"{prefix}:history:",
        )


def _text(value: bytes | str) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def _raw(value: bytes | str) -> bytes:
    return value.encode() if isinstance(value, str) else value


def _names(value: Any) -> set[str]:
    """Vendor ids from an ``HKEYS``/``HGETALL`` reply; none from an error or nothing."""
    if isinstance(value, dict | set | list | tuple):
        return {_text(item) for item in value}
    return set()


async def read_contents(
    client: Any,
    keys: Keys,
    expected: Collection[str],
    fault: FaultCallback,
    decoder: BackgroundThread,
    decoded: DecodedVendors,
) -> StoreContents:
    """One consistent read: the vendor lists first, then version, status, index and every vendor's offers
    in one MULTI, again if a vendor appeared between the two round trips; decoded on ``decoder``."""
    pipe = client.pipeline(transaction=False)
    pipe.hkeys(keys.index)
    pipe.hkeys(keys.status)
    vendors = set(expected).union(*map(_names, await pipe.execute(raise_on_error=False)))
    for _ in range(_READ_ATTEMPTS):
        ordered = sorted(vendors)
        pipe = client.pipeline(transaction=True)
        pipe.getrange(keys.version, 0, VERSION_READ_BYTES - 1)
        pipe.hgetall(keys.status)
        pipe.hgetall(keys.index)
        for vendor in ordered:
            pipe.get(keys.vendor_prefix + vendor)
        version_raw, statuses_raw, index_raw, *offers_raw = await pipe.execute(raise_on_error=False)
        listed = _names(statuses_raw) | _names(index_raw)
        if not listed <= vendors:  # a vendor appeared between the two round trips
            vendors |= listed
            continue
        # Decoding a large catalog is CPU work: a thread at the lowest priority keeps the event loop
        # answering meanwhile (``service.background``).
        return await decoder.run(
            _Decoder(keys, fault, decoded).contents,
            version_raw,
            statuses_raw,
            index_raw,
            dict(zip(ordered, offers_raw, strict=True)),
        )
    raise StoreUnavailable("vendor list kept changing while reading; try again")


class _Decoder:
    def __init__(self, keys: Keys, fault: FaultCallback, decoded: DecodedVendors) -> None:
        self._keys = keys
        self._report = fault
        self._decoded = decoded
        self._before: DecodedVendors = {}
        self.faults: dict[str, str] = {}
        self.unreadable: set[str] = set()

    def skip(self, kind: str, key: str, reason: str, vendor: str | None = None) -> None:
        self.faults[key] = reason
        self._report(kind, key, reason)
        if vendor is not None:
            self.unreadable.add(vendor)

    def version(self, raw: Any) -> int:
        try:
            if isinstance(raw, Exception):
                raise StoreCorrupt(self._keys.version, str(raw))
            return parse_version(raw, self._keys.version)
        except StoreCorrupt as error:
            self.skip("version", self._keys.version, error.reason)
            return 0

    def statuses(self, raw: Any) -> dict[str, VendorStatus]:
        if isinstance(raw, Exception):
            self.skip("status", self._keys.status, str(raw))
            return {}
        statuses: dict[str, VendorStatus] = {}
        for key, value in raw.items():
            vendor = _text(key)
            try:
                statuses[vendor] = status_decoder.decode(_raw(value))
            except DECODE_ERRORS as error:
                self.skip("status", f"{self._keys.status}[{vendor}]", str(error))
        return statuses

    def offers(self, vendor: str, raw: Any) -> list[Offer] | None:
        key = self._keys.vendor_prefix + vendor
        if isinstance(raw, Exception):
            self.skip("vendor", key, str(raw), vendor)
            return None
        data = _raw(raw)
        digest = hashlib.blake2b(data, digest_size=16).digest()
        before = self._before.get(vendor)
        if before is not None and before[0] == digest:
            self._decoded[vendor] = before
            return list(before[1])
        try:
            offers = decode_offers(data)
            problem = offers_problem(vendor, offers)
        except DECODE_ERRORS as error:
            problem = f"{error} ({len(raw)} bytes)"
        if problem is not None:
            self.skip("vendor", key, problem, vendor)
            return None
        self._decoded[vendor] = (digest, tuple(offers))
        return offers

    def contents(
        self, version_raw: Any, statuses_raw: Any, index_raw: Any, offers_raw: dict[str, Any]
    ) -> StoreContents:
        # On the decoder's one thread, one read after another: this read's vendors replace the last's.
        self._before = dict(self._decoded)
        self._decoded.clear()
        version = self.version(version_raw)
        statuses = self.statuses(statuses_raw)
        status_readable = isinstance(statuses_raw, dict)
        if isinstance(index_raw, Exception):
            self.skip("index", self._keys.index, str(index_raw))
        indexed = _names(index_raw)
        offers: dict[str, list[Offer]] = {}
        for vendor, raw in offers_raw.items():
            status = statuses.get(vendor)
            if raw:
                decoded = self.offers(vendor, raw)
                if decoded is not None:
                    offers[vendor] = decoded
                if status is None and status_readable and f"{self._keys.status}[{vendor}]" not in self.faults:
                    self.skip(
                        "status", f"{self._keys.status}[{vendor}]", "missing: offers are stored without it"
                    )
            elif status is not None and status.offer_count > 0:
                reason = f"missing: the status counts {status.offer_count} offers"
                self.skip("vendor", self._keys.vendor_prefix + vendor, reason, vendor)
            elif status is None and vendor in indexed and status_readable:
                reason = "missing: the vendor index lists it with neither offers nor a status"
                self.skip("vendor", self._keys.vendor_prefix + vendor, reason, vendor)
        if version > 0 and not indexed and not statuses and not offers and not self.faults and offers_raw:
            reason = f"missing: version {version} was written, and no vendor's data is stored"
            self.skip("status", self._keys.status, reason)
            self.unreadable.update(offers_raw)
        return StoreContents(
            version=version,
            offers_by_vendor=offers,
            statuses=statuses,
            faults=self.faults,
            unreadable_vendors=frozenset(self.unreadable),
        )
