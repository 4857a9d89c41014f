"""The engine's input: one version of the store's offers, decoded, with the quote tables prepared.

``Snapshot.of(offers, statuses, version=..., built_at=...)`` builds one (once per store version: the
tables take milliseconds per thousand offers); the store-facing service builds it from what the store
holds (``service.services.snapshots``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from schemas.offer import Offer
from schemas.vendor import VendorConfig, VendorStatus
from service.names import KnownNames
from service.quote.model.tables import OfferTables, build_offer_tables

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
    def of(
        cls,
        offers: Iterable[Offer],
        statuses: Mapping[str, VendorStatus],
        *,
        version: int,
        built_at: datetime,
    ) -> Snapshot:
        """The snapshot of ``offers`` (in the order given) and the vendors' ``statuses``."""
        offers = tuple(offers)
        return cls(
            version=version,
            offers=offers,
            offers_by_id={offer.id: offer for offer in offers},
            statuses=dict(statuses),
            tables=build_offer_tables(offers),
            built_at=built_at,
            oldest_fetched_at=min((offer.fetched_at for offer in offers), default=None),
        )
