"""The engine's input: one version of the store's offers, decoded, with the quote tables prepared."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from schemas.offer import Offer
from schemas.vendor import VendorConfig, VendorStatus
from service.names import KnownNames
from service.quote._tables import OfferTables, build_offer_tables
from service.store.base import StoreContents

__all__ = ["Snapshot"]

_KNOWN_NAMES_KEPT = 8


@dataclass(frozen=True, slots=True)
class Snapshot:
    version: int
    offers: tuple[Offer, ...]
    offers_by_id: Mapping[str, Offer]
    statuses: Mapping[str, VendorStatus]
    tables: OfferTables
    built_at: datetime
    oldest_fetched_at: datetime | None
    # The names a request's filters may use (``service.names.KnownNames``), per configured vendor list
    # seen lately: the list is held, so its id stays its own, with a copy to tell a changed list.
    known_names: dict[int, tuple[Sequence[VendorConfig], tuple[VendorConfig, ...], KnownNames]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    def known(self, vendors: Sequence[VendorConfig]) -> KnownNames:
        """The regions, cities and vendors known from ``vendors``, the statuses and the offers."""
        cached = self.known_names.get(id(vendors))
        if cached is not None and cached[1] == tuple(vendors):
            return cached[2]
        if len(self.known_names) >= _KNOWN_NAMES_KEPT:
            self.known_names.clear()
        known = KnownNames(vendors=vendors, statuses=self.statuses.values(), offers=self.offers)
        self.known_names[id(vendors)] = (vendors, tuple(vendors), known)
        return known

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
