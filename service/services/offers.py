"""Read-side queries over the snapshot: offer filtering and paging, vendor freshness, the GPU list."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import msgspec

from adapters import GpuCatalog, UnknownGpuName
from schemas.api import OfferPage, VendorList
from schemas.offer import Offer, PricingKind, pricing_kind
from schemas.vendor import VendorConfig, VendorStatus
from service.errors import InvalidRequest, NotFound
from service.quote import Snapshot

__all__ = ["OfferFilter", "find_offer", "list_offers", "vendor_freshness"]


@dataclass(frozen=True, slots=True)
class OfferFilter:
    gpus: Sequence[str] = ()
    regions: Sequence[str] = ()
    vendors: Sequence[str] = ()
    pricing: Sequence[PricingKind] = ()


def _canonical_gpus(names: Sequence[str], catalog: GpuCatalog) -> set[str]:
    canonical: set[str] = set()
    for name in names:
        try:
            canonical.add(catalog.normalize(name))
        except UnknownGpuName as error:
            valid = ", ".join(sorted(catalog.models))
            raise InvalidRequest("gpu", f"{error.reason}; valid: {valid}") from None
    return canonical


def _checked(field: str, values: Sequence[str], known: Callable[[], set[str]]) -> set[str]:
    """The values asked for, each of which must be known; ``known`` is only worked out when needed."""
    if not values:
        return set()
    valid = sorted(known())
    unknown = sorted(set(values) - set(valid))
    if unknown:
        raise InvalidRequest(
            field, f"unknown {field} {', '.join(map(repr, unknown))}; valid: {', '.join(valid)}"
        )
    return set(values)


def list_offers(
    snapshot: Snapshot,
    query: OfferFilter,
    *,
    catalog: GpuCatalog,
    vendors: Sequence[VendorConfig],
    limit: int,
    offset: int,
) -> OfferPage:
    """One page of the snapshot's offers matching every given filter (each filter is an any-of list)."""
    gpus = _canonical_gpus(query.gpus, catalog)
    regions = _checked(
        "region", query.regions, lambda: {v.region for v in vendors} | {o.region for o in snapshot.offers}
    )
    vendor_ids = _checked(
        "vendor", query.vendors, lambda: {v.id for v in vendors} | {o.vendor for o in snapshot.offers}
    )
    kinds = set(query.pricing)

    def matches(offer: Offer) -> bool:
        return (
            (not gpus or offer.gpu in gpus)
            and (not regions or offer.region in regions)
            and (not vendor_ids or offer.vendor in vendor_ids)
            and (not kinds or pricing_kind(offer.pricing) in kinds)
        )

    selected = [offer for offer in snapshot.offers if matches(offer)]
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
    snapshot: Snapshot, vendors: Sequence[VendorConfig], *, now: datetime, max_age_s: float
) -> VendorList:
    """Every configured or stored vendor's status, with ``stale`` derived from the price max age."""
    statuses = dict(snapshot.statuses)
    for vendor in vendors:
        statuses.setdefault(
            vendor.id,
            VendorStatus(vendor=vendor.id, name=vendor.name, region=vendor.region, city=vendor.city),
        )
    listed = [
        msgspec.structs.replace(status, stale=_is_stale(status, now, max_age_s))
        for _, status in sorted(statuses.items())
    ]
    return VendorList(vendors=listed, price_max_age_s=max_age_s)
