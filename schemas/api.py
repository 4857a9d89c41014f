"""Bodies of the read-side and admin endpoints (the quote bodies live in ``schemas.quote``)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, get_args

import msgspec

from schemas.gpu import GpuModel
from schemas.offer import Offer
from schemas.vendor import PriceChange, VendorStatus

__all__ = [
    "OFFER_SORTS",
    "GpuList",
    "Health",
    "ListedOffer",
    "OfferHistory",
    "OfferPage",
    "OfferSort",
    "Problem",
    "ProblemField",
    "Readiness",
    "RefreshReport",
    "VendorList",
    "VendorRefresh",
]


# ``GET /offers?sort=``: a key, ascending; ``-key`` descending. price: ``cny_per_card_hour``; memory:
# ``gpu_memory_gb``; cards: ``max_cards``; stock: ``available_cards``.
OfferSort = Literal["price", "-price", "memory", "-memory", "cards", "-cards", "stock", "-stock"]
OFFER_SORTS: tuple[OfferSort, ...] = get_args(OfferSort)


class ListedOffer(Offer, kw_only=True, frozen=True, gc=False):
    """An offer as the read routes list it: the stored offer plus what is derived when it is read."""

    # One price per card-hour whatever the pricing model, rounded half-up to the fen: a node-hour with
    # its premiums over its cards, a bundle-hour over its cards, a period over its hours and cards.
    cny_per_card_hour: float
    # The most cards one rental holds (every node, bundle or unit); null when the vendor sets no limit.
    max_cards: int | None = None
    # Fetched (or, for a static feed, observed) longer ago than ``PRICE_MAX_AGE_S``: quotes warn about it.
    stale: bool = False


class OfferPage(msgspec.Struct, kw_only=True):
    items: list[ListedOffer]
    total: int
    limit: int
    offset: int
    snapshot_version: int
    price_max_age_s: float = 0.0


class OfferHistory(msgspec.Struct, kw_only=True):
    offer_id: str
    changes: list[PriceChange]


class VendorList(msgspec.Struct, kw_only=True):
    vendors: list[VendorStatus]
    price_max_age_s: float


class GpuList(msgspec.Struct, kw_only=True):
    gpus: list[GpuModel]
    reference_gpu: str = "rtx4090"


class Health(msgspec.Struct, kw_only=True):
    status: Literal["ok"] = "ok"


class Readiness(msgspec.Struct, kw_only=True, omit_defaults=True):
    status: Literal["ready", "degraded", "unavailable"]
    store: Literal["memory", "redis", "redis-cluster"]
    store_reachable: bool
    snapshot_version: int | None = None
    snapshot_built_at: datetime | None = None
    reason: str | None = None


class VendorRefresh(msgspec.Struct, kw_only=True, omit_defaults=True):
    vendor: str
    ok: bool
    offers: int = 0
    rows_dropped: int = 0
    quarantined: int = 0
    released: int = 0
    duration_s: float = 0.0
    error: str | None = None


class RefreshReport(msgspec.Struct, kw_only=True):
    ok: bool
    vendors: list[VendorRefresh]
    version: int
    skipped: str | None = None
    # Vendors taken out of the store because the vendors file no longer lists them.
    removed: list[str] = []


class ProblemField(msgspec.Struct, kw_only=True, omit_defaults=True):
    field: str | None
    reason: str
    # ``in`` names where a parameter came from (query, path, header, body); a Python keyword, so aliased.
    location: str | None = msgspec.field(default=None, name="in")


class Problem(msgspec.Struct, kw_only=True, omit_defaults=True):
    """RFC 9457 problem details, the one error shape of every route."""

    status: int
    title: str
    detail: str | None = None
    type: str | None = None
    errors: list[ProblemField] = []
