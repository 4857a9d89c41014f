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
from schemas.vendor import QuarantinedPrice, VendorConfig, VendorStatus
from service.names import KnownNames
from service.quote.base.memo import Memos, MemoSlot
from service.quote.model.tables import OfferTables, build_offer_tables

__all__ = ["Snapshot"]

# The names a request's filters may use, per configured vendor list seen lately (the app passes one).
_KNOWN_NAMES: MemoSlot[tuple[VendorConfig, ...], KnownNames] = MemoSlot("known names", size=8)


@dataclass(frozen=True, slots=True)
class Snapshot:
    version: int
    offers: tuple[Offer, ...]
    offers_by_id: Mapping[str, Offer]
    statuses: Mapping[str, VendorStatus]
    tables: OfferTables
    built_at: datetime
    oldest_fetched_at: datetime | None
    # Each held-back price by its offer id: what the vendors' statuses hold (``VendorStatus.quarantined``).
    held: Mapping[str, QuarantinedPrice] = field(default_factory=dict)
    memos: Memos = field(default_factory=Memos, init=False, compare=False, repr=False)

    def known(self, vendors: Sequence[VendorConfig]) -> KnownNames:
        """The regions, cities and vendors known from ``vendors``, the statuses and the offers."""
        configured = tuple(vendors)
        return _KNOWN_NAMES.of(self.memos).get(
            configured,
            lambda: KnownNames(vendors=configured, statuses=self.statuses.values(), offers=self.offers),
        )

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
            held={held.offer_id: held for status in statuses.values() for held in status.quarantined},
        )
