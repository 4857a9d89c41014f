"""The bundled reference catalog as an engine snapshot, read through the static adapter like a refresh."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

from adapters.base import AdapterContext
from adapters.static import parse_static
from adapters.vendors_file import load_vendors_file
from schemas.quote import QuoteRequest, QuoteResponse
from schemas.vendor import VendorStatus
from service.quote import QuoteOptions, Snapshot, build_quote
from service.settings import BUNDLED_VENDORS_FILE

__all__ = ["NOW", "quote_reference"]

# Well after the catalog's observed_at (2025-01-01), as every day since is: its prices are stale.
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
_VENDORS, _FOLDER = load_vendors_file(BUNDLED_VENDORS_FILE)


def _snapshot() -> Snapshot:
    offers = tuple(
        offer
        for vendor in _VENDORS
        for offer in parse_static(
            (_FOLDER / (vendor.path or "")).read_bytes(),
            vendor,
            AdapterContext(base_dir=_FOLDER, clock=lambda: NOW),
            source=f"file:{vendor.path}",
        ).offers
    )
    statuses = {
        vendor.id: VendorStatus(vendor=vendor.id, name=vendor.name, region=vendor.region, city=vendor.city)
        for vendor in _VENDORS
    }
    return Snapshot.of(offers, statuses, version=1, built_at=NOW)


_SNAPSHOT = _snapshot()


def quote_reference(body: dict[str, Any]) -> QuoteResponse:
    """``build_quote`` over the reference catalog for a ``POST /quote`` body, with the default max age."""
    options = QuoteOptions(now=NOW, price_max_age_s=86_400.0, vendors=_VENDORS)
    return build_quote(_SNAPSHOT, msgspec.convert(body, QuoteRequest), options=options)
