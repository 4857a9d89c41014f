"""Read-side queries over the snapshot: offer filtering and paging, vendor freshness, the GPU list."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import msgspec

from adapters import GpuCatalog
from schemas.api import OfferPage, VendorList
from schemas.offer import Offer, PricingKind, pricing_kind
from schemas.vendor import VendorConfig, VendorStatus
from service.errors import NotFound
from service.names import FieldNames, KnownNames, NameQuery, resolve_names
from service.quote import Snapshot

__all__ = [
    "OFFER_PAGE_DEFAULT",
    "OFFER_PAGE_MAX",
    "OfferFilter",
    "find_offer",
    "known_names",
    "list_offers",
    "vendor_freshness",
]


# One page size for every surface that lists offers (``GET /offers``, the ``list_offers`` tool).
OFFER_PAGE_DEFAULT = 100
OFFER_PAGE_MAX = 1000


@dataclass(frozen=True, slots=True)
class OfferFilter:
    """Which offers to list; each filter is an any-of list of names as the caller wrote them."""

    gpus: Sequence[str] = ()
    regions: Sequence[str] = ()
    cities: Sequence[str] = ()
    vendors: Sequence[str] = ()
    pricing: Sequence[PricingKind] = ()


def known_names(snapshot: Snapshot, vendors: Sequence[VendorConfig]) -> KnownNames:
    """The names filters may use: the configured vendors, the stored statuses, the snapshot's offers."""
    return KnownNames(vendors=vendors, statuses=snapshot.statuses.values(), offers=snapshot.offers)


def list_offers(
    snapshot: Snapshot,
    query: OfferFilter,
    *,
    catalog: GpuCatalog,
    vendors: Sequence[VendorConfig],
    fields: FieldNames,
    limit: int,
    offset: int,
) -> OfferPage:
    """One page of the snapshot's offers matching every given filter (each filter is an any-of list).

    Names resolve by ``service.names``; ``fields`` are the caller's names for the filters, for errors.
    """
    names = resolve_names(
        NameQuery(gpus=query.gpus, regions=query.regions, cities=query.cities, vendors=query.vendors),
        known=known_names(snapshot, vendors),
        catalog=catalog,
        fields=fields,
    )
    kinds = set(query.pricing)
    selected = [
        offer
        for offer in snapshot.offers
        if names.admits(offer) and (not kinds or pricing_kind(offer.pricing) in kinds)
    ]
    return OfferPage(
        items=selected[offset : offset + limit],
        total=len(selected),
        limit=limit,
        offset=offset,
        snapshot_version=snapshot.version,
    )


def find_offer(snapshot: Snapshot, offer_id: str) -> Offer:
    try:
        return snapshot.offers_by_id[offer_id]
    except KeyError:
        raise NotFound(f"no offer {offer_id!r}", field="offer_id") from None


def _is_stale(status: VendorStatus, now: datetime, max_age_s: float) -> bool:
    if status.last_success_at is None:
        return True
    return (now - status.last_success_at).total_seconds() > max_age_s


def vendor_freshness(
    snapshot: Snapshot,
    vendors: Sequence[VendorConfig],
    *,
    now: datetime,
    max_age_s: float,
    only: frozenset[str] | None = None,
    error_detail: bool = False,
) -> VendorList:
    """Every configured or stored vendor's status (or those in ``only``, canonical ids), with ``stale``
    derived from the price max age. The error's detail is left out unless ``error_detail`` (admin view):
    the public view shows its category and time."""
    statuses = dict(snapshot.statuses)
    for vendor in vendors:
        statuses.setdefault(
            vendor.id,
            VendorStatus(vendor=vendor.id, name=vendor.name, region=vendor.region, city=vendor.city),
        )
    listed = [
        msgspec.structs.replace(
            status,
            stale=_is_stale(status, now, max_age_s),
            last_error=status.last_error if error_detail else None,
            last_error_category=status.last_error_category or ("other" if status.last_error else None),
        )
        for vendor_id, status in sorted(statuses.items())
        if only is None or vendor_id in only
    ]
    return VendorList(vendors=listed, price_max_age_s=max_age_s)
