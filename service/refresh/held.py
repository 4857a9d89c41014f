"""The offers a process holds, standing in for what the store lost: which vendors, and with what status.

A vendor counts as lost when the store has no offers for it that decode, and either the whole store came
back empty, its offers are unreadable or missing, or its stored status says its last refresh failed (a
store refilled while its feed was down). A vendor whose refresh succeeded is never padded with held
offers, and one that left the vendors file is never written back.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterator, Sequence

import msgspec

from schemas.offer import Offer
from schemas.vendor import VendorStatus
from service.store.base import StoreContents

__all__ = ["failed_last", "lost_vendors", "restorable", "with_held"]

logger = logging.getLogger("gpuquote.refresh")


def failed_last(status: VendorStatus | None) -> bool:
    """The vendor's last refresh failed (an error after its last success), or it has no status at all."""
    if status is None:
        return True
    if status.last_error_at is None:
        return False
    return status.last_success_at is None or status.last_success_at < status.last_error_at


def lost_vendors(stored: StoreContents) -> set[str]:
    """Every vendor the store knows of: with offers, a status, or offers it could not read."""
    return set(stored.offers_by_vendor) | set(stored.statuses) | set(stored.unreadable_vendors)


def _missing(stored: StoreContents, held: StoreContents) -> set[str]:
    if stored.empty:
        return set(held.offers_by_vendor)
    missing = set(stored.unreadable_vendors)
    for vendor in held.offers_by_vendor:
        if vendor not in stored.offers_by_vendor and failed_last(stored.statuses.get(vendor)):
            missing.add(vendor)
    return missing & set(held.offers_by_vendor)


def with_held(stored: StoreContents, held: StoreContents | None) -> StoreContents:
    """What the store holds, with ``held`` standing in for the vendors it lost.

    Those vendors are listed in ``unreadable_vendors``: a failed fetch writes their held offers back
    rather than only a status.
    """
    if held is None:
        return stored
    missing = _missing(stored, held)
    if not missing and not stored.faults:
        return stored
    if missing:
        logger.warning(
            "price store lost or cannot decode vendors %s; refilling them from the held snapshot",
            ", ".join(sorted(missing)),
        )
    offers = dict(stored.offers_by_vendor)
    offers.update({vendor: held.offers_by_vendor[vendor] for vendor in missing})
    return StoreContents(
        version=stored.version,
        offers_by_vendor=offers,
        statuses={**held.statuses, **stored.statuses},
        faults=stored.faults,
        unreadable_vendors=frozenset(missing),
    )


def restorable(
    stored: StoreContents, kept: StoreContents, configured: Collection[str]
) -> Iterator[tuple[str, Sequence[Offer], VendorStatus]]:
    """Each configured vendor of ``kept`` that the store still lacks after a failed refresh, with its
    offers and the status to write: the stored one (its error kept), counting those offers."""
    for vendor, offers in sorted(kept.offers_by_vendor.items()):
        status = stored.statuses.get(vendor)
        if vendor not in configured or vendor in stored.offers_by_vendor or not offers:
            continue
        if status is None or not failed_last(status):
            continue
        yield vendor, offers, msgspec.structs.replace(status, offer_count=len(offers))
