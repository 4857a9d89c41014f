"""Bodies of the read-side and admin endpoints (the quote bodies live in ``schemas.quote``)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

import msgspec

from schemas.gpu import GpuModel
from schemas.offer import Offer
from schemas.vendor import PriceChange, VendorStatus

__all__ = [
    "GpuList",
    "Health",
    "OfferHistory",
    "OfferPage",
    "Problem",
    "ProblemField",
    "Readiness",
    "RefreshReport",
    "VendorList",
    "VendorRefresh",
]


class OfferPage(msgspec.Struct, kw_only=True):
    items: list[Offer]
    total: int
    limit: int
    offset: int
    snapshot_version: int


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
