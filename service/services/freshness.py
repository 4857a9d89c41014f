"""Vendor freshness as the read routes show it: the stored status, with staleness judged from the prices.

One rule for "stale" on every surface, the quote engine's: a price is stale when it was fetched (for a
static feed, observed: its ``observed_at``) longer ago than ``PRICE_MAX_AGE_S``. A vendor is stale when
it never succeeded, its last success is past the max age, or any price it serves is; so the bundled
reference catalog, observed long ago, is stale on ``/vendors`` as in every quote that uses it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import msgspec

from schemas.api import VendorList
from schemas.offer import Offer
from schemas.vendor import VendorConfig, VendorStatus
from service.ages import age_text
from service.quote import Snapshot

__all__ = ["is_stale", "vendor_freshness"]


def is_stale(fetched_at: datetime, now: datetime, max_age_s: float) -> bool:
    """The quote engine's rule: older than the max age, strictly."""
    return (now - fetched_at).total_seconds() > max_age_s


@dataclass
class _VendorPrices:
    """What a vendor's offers in the snapshot say about it."""

    oldest_at: datetime | None = None
    stale: int = 0
    cities: set[str] = field(default_factory=set)
    city_assumed: int = 0


def _by_vendor(offers: Iterable[Offer], now: datetime, max_age_s: float) -> dict[str, _VendorPrices]:
    found: dict[str, _VendorPrices] = {}
    for offer in offers:
        prices = found.setdefault(offer.vendor, _VendorPrices())
        if prices.oldest_at is None or offer.fetched_at < prices.oldest_at:
            prices.oldest_at = offer.fetched_at
        prices.stale += is_stale(offer.fetched_at, now, max_age_s)
        prices.cities.add(offer.city)
        prices.city_assumed += offer.city_assumed
    return found


def _judged(
    status: VendorStatus, prices: _VendorPrices, now: datetime, max_age_s: float, *, error_detail: bool
) -> VendorStatus:
    stale = (
        status.last_success_at is None or is_stale(status.last_success_at, now, max_age_s) or prices.stale > 0
    )
    oldest = prices.oldest_at
    return msgspec.structs.replace(
        status,
        stale=stale,
        last_error=status.last_error if error_detail else None,
        last_error_category=status.last_error_category or ("other" if status.last_error else None),
        oldest_price_at=oldest,
        oldest_price_age=None if oldest is None else age_text((now - oldest).total_seconds()),
        stale_offers=prices.stale,
        cities=sorted(prices.cities),
        offers_city_assumed=prices.city_assumed,
    )


def vendor_freshness(
    snapshot: Snapshot,
    vendors: Sequence[VendorConfig],
    *,
    now: datetime,
    max_age_s: float,
    only: frozenset[str] | None = None,
    error_detail: bool = False,
) -> VendorList:
    """Every configured or stored vendor's status (or those in ``only``, canonical ids), judged stale by
    the module's rule. The error's detail is left out unless ``error_detail`` (admin view): the public
    view shows its category and time."""
    statuses = dict(snapshot.statuses)
    for vendor in vendors:
        statuses.setdefault(
            vendor.id,
            VendorStatus(vendor=vendor.id, name=vendor.name, region=vendor.region, city=vendor.city),
        )
    prices = _by_vendor(snapshot.offers, now, max_age_s)
    listed = [
        _judged(status, prices.get(vendor_id, _VendorPrices()), now, max_age_s, error_detail=error_detail)
        for vendor_id, status in sorted(statuses.items())
        if only is None or vendor_id in only
    ]
    return VendorList(vendors=listed, price_max_age_s=max_age_s)
