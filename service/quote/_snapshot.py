"""The engine's input: one version of the store's offers, decoded, with the quote tables prepared."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from schemas.offer import Offer
from schemas.vendor import VendorStatus
from service.quote._tables import OfferTables, build_offer_tables
from service.store.base import StoreContents

__all__ = ["Snapshot"]


@dataclass(frozen=True, slots=True)
class Snapshot:
    version: int
    offers: tuple[Offer, ...]
    offers_by_id: Mapping[str, Offer]
    statuses: Mapping[str, VendorStatus]
    tables: OfferTables
    built_at: datetime
    oldest_fetched_at: datetime | None

    @classmethod
    def build(cls, contents: StoreContents, *, built_at: datetime) -> Snapshot:
        offers = tuple(
            offer
            for vendor in sorted(contents.offers_by_vendor)
            for offer in contents.offers_by_vendor[vendor]
        )
        return cls(
            version=contents.version,
            offers=offers,
            offers_by_id={offer.id: offer for offer in offers},
            statuses=dict(contents.statuses),
            tables=build_offer_tables(offers),
            built_at=built_at,
            oldest_fetched_at=min((offer.fetched_at for offer in offers), default=None),
        )
