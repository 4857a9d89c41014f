"""Store contents reshaped before a snapshot is built from them (configured vendors only, vendors taken
out, held offers standing in for vendors the store could not give), and the snapshot built from them
that passes its check."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from datetime import datetime

from schemas.offer import Offer
from service.quote import Snapshot
from service.store.base import StoreContents

__all__ = [
    "build_served",
    "held_contents",
    "keep_only",
    "missing_after_failure",
    "names_vendor",
    "patched",
    "with_kept",
    "without",
]

logger = logging.getLogger("gpuquote.snapshots")


def held_contents(snapshot: Snapshot) -> StoreContents:
    """A snapshot's offers and statuses, grouped by vendor the way the store holds them."""
    offers: dict[str, list[Offer]] = {}
    for offer in snapshot.offers:
        offers.setdefault(offer.vendor, []).append(offer)
    return StoreContents(version=snapshot.version, offers_by_vendor=offers, statuses=dict(snapshot.statuses))


def missing_after_failure(contents: StoreContents, held: Snapshot) -> dict[str, list[Offer]]:
    """``held``'s offers of each vendor the store holds no offers for whose stored status says its last
    refresh failed (with their old ``fetched_at``, so they age toward stale).

    That is a store that came back empty and was refilled by a refresher holding no snapshot (the
    ``gpuquote refresh`` CronJob) while this vendor's feed was down: its offers are missing, not
    withdrawn. A vendor whose feed succeeds with no offers, or that leaves the vendors file, is not kept.
    """
    failed = {
        vendor
        for vendor, status in contents.statuses.items()
        if vendor not in contents.offers_by_vendor
        and status.last_error_at is not None
        and (status.last_success_at is None or status.last_success_at < status.last_error_at)
    }
    kept: dict[str, list[Offer]] = {}
    if not failed:  # the usual case: no offer of the held snapshot is looked at (96,000 of them, 10 ms)
        return kept
    for offer in held.offers:
        if offer.vendor in failed:
            kept.setdefault(offer.vendor, []).append(offer)
    return kept


def with_kept(contents: StoreContents, kept: dict[str, list[Offer]]) -> StoreContents:
    """``contents`` with ``kept`` vendors' offers added."""
    return StoreContents(
        version=contents.version,
        offers_by_vendor={**contents.offers_by_vendor, **kept},
        statuses=contents.statuses,
        faults=contents.faults,
        unreadable_vendors=contents.unreadable_vendors,
    )


def names_vendor(key: str, vendor: str) -> bool:
    """Whether a fault's key is one of ``vendor``'s: its offers (``...vendor:<id>``) or its status
    (``...status[<id>]``), in either store's naming."""
    return key.endswith((f"vendor:{vendor}", f"[{vendor}]"))


def keep_only(contents: StoreContents, vendors: Collection[str] | None) -> StoreContents:
    """``contents`` limited to ``vendors`` (None: all): a vendor that left the vendors file is served
    nowhere, and its keys' faults say nothing about the service's health."""
    if vendors is None:
        return contents
    stored = set(contents.offers_by_vendor) | set(contents.statuses) | set(contents.unreadable_vendors)
    gone = stored - set(vendors)
    return without(contents, gone, unreadable=False) if gone else contents


def without(contents: StoreContents, vendors: Collection[str], *, unreadable: bool = True) -> StoreContents:
    """``contents`` with ``vendors`` taken out; ``unreadable`` lists them as unreadable (so held offers
    stand in for them), else they are gone with their statuses and faults."""
    gone = set(vendors)
    if not gone:
        return contents
    faults = dict(contents.faults)
    if not unreadable:
        faults = {
            key: reason for key, reason in faults.items() if not any(names_vendor(key, v) for v in gone)
        }
    return StoreContents(
        version=contents.version,
        offers_by_vendor={v: offers for v, offers in contents.offers_by_vendor.items() if v not in gone},
        statuses={v: s for v, s in contents.statuses.items() if unreadable or v not in gone},
        faults=faults,
        unreadable_vendors=frozenset(contents.unreadable_vendors | gone)
        if unreadable
        else contents.unreadable_vendors - gone,
    )


def patched(contents: StoreContents, held: StoreContents | None) -> StoreContents:
    """Vendors that did not decode or are missing keep their offers (and statuses) from ``held``."""
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


def snapshot_of(contents: StoreContents, *, built_at: datetime) -> Snapshot:
    """The engine's snapshot of what the store holds: offers in vendor order, as stored."""
    offers = (
        offer for vendor in sorted(contents.offers_by_vendor) for offer in contents.offers_by_vendor[vendor]
    )
    return Snapshot.of(offers, contents.statuses, version=contents.version, built_at=built_at)


def _checked(
    contents: StoreContents, built_at: datetime, check: Callable[[Snapshot], None] | None
) -> Snapshot:
    snapshot = snapshot_of(contents, built_at=built_at)
    if check is not None:
        check(snapshot)
    return snapshot


def build_served(
    contents: StoreContents,
    built_at: datetime,
    check: Callable[[Snapshot], None] | None,
    held: StoreContents | None,
) -> tuple[Snapshot | None, dict[str, str]]:
    """The snapshot of ``contents`` that builds and passes ``check``, and the vendors left out of it with
    why. A vendor whose offers fail alone keeps its ``held`` offers (or is left out); when even that
    fails, no snapshot (the caller keeps serving what it holds)."""
    try:
        return _checked(contents, built_at, check), {}
    except Exception as error:  # a shape no decode rule foresaw must not take the replica down
        logger.warning("snapshot at version %d cannot serve: %r", contents.version, error)
    unusable: dict[str, str] = {}
    for vendor, offers in contents.offers_by_vendor.items():
        try:
            _checked(StoreContents(contents.version, {vendor: offers}, {}), built_at, check)
        except Exception as error:
            unusable[f"vendor:{vendor}"] = f"its offers fail to serve: {error!r}"[:300]
    repaired = patched(without(contents, {key.removeprefix("vendor:") for key in unusable}), held)
    try:
        return _checked(repaired, built_at, check), unusable or {"snapshot": "fails to serve"}
    except Exception as error:
        return None, {**unusable, "snapshot": f"fails to serve: {error!r}"[:300]}
