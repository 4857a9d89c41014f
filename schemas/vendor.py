"""Vendors: their configuration (the vendors file), their freshness and their price history."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from schemas.offer import Pricing, Timestamp

__all__ = [
    "ILLUSTRATIVE_LABEL",
    "FeedFormat",
    "PriceChange",
    "QuarantinedPrice",
    "VendorConfig",
    "VendorStatus",
    "VendorsFile",
]

ILLUSTRATIVE_LABEL = "illustrative reference price"
"""The ``label`` of prices copied from public articles (the bundled reference catalog), not live quotes:
a quote that uses one says so in its summary and in the CLI's table."""

FeedFormat = Literal["static", "card_hour_json", "per_second_json", "node_hour_html", "sheet_csv"]
VendorId = Annotated[str, msgspec.Meta(pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")]
Slug = Annotated[str, msgspec.Meta(pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")]


class VendorConfig(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    """One ``[[vendors]]`` entry. Secrets are never here: ``token_env`` names the variable holding one."""

    id: VendorId
    name: str
    name_zh: str = ""  # the name in Chinese prose (summaries in zh); left out, ``name`` is used
    region: Slug
    city: Slug
    format: FeedFormat
    path: str | None = None
    url: str | None = None
    token_env: str | None = None
    timeout_s: Annotated[float, msgspec.Meta(gt=0, le=300)] = 10.0
    retries: Annotated[int, msgspec.Meta(ge=0, le=10)] = 2
    enabled: bool = True
    label: str = ""


class VendorsFile(msgspec.Struct, kw_only=True, frozen=True, forbid_unknown_fields=True):
    vendors: list[VendorConfig]


class QuarantinedPrice(msgspec.Struct, kw_only=True, frozen=True):
    """A price that jumped past the threshold; served only once a second refresh sees it again."""

    offer_id: str
    pricing: Pricing
    previous: Pricing
    change_ratio: float
    seen_at: Timestamp


class VendorStatus(msgspec.Struct, kw_only=True, frozen=True, omit_defaults=True):
    """A vendor's freshness as stored; ``stale`` and the fields after it are derived when read: stale when
    its last success or any of its prices is older than the price max age.

    ``last_error_category`` (``timeout``, ``http_status``, ``malformed``, ...) and ``last_error_at`` are
    public; ``last_error``, the detail, is shown only on the admin view (``GET /admin/vendors``) and in the
    logs, since it can name hosts and paths of the vendor's feed.
    """

    vendor: str
    name: str = ""
    region: str = ""
    city: str = ""
    last_attempt_at: Timestamp | None = None
    last_success_at: Timestamp | None = None
    last_error: str | None = None
    last_error_category: str | None = None
    last_error_at: Timestamp | None = None
    offer_count: int = 0
    rows_dropped: int = 0
    drop_reasons: dict[str, int] = {}
    quarantined: list[QuarantinedPrice] = []
    stale: bool = False
    # Derived when read, from the vendor's offers in the snapshot (never stored):
    # when its oldest price was fetched or observed, how long ago that is in words ("3 h", "700 days"),
    # how many of its prices are past the max age, the cities its offers are in, and how many offers
    # keep the vendor's city because their zone names none the service knows.
    oldest_price_at: Timestamp | None = None
    oldest_price_age: str | None = None
    stale_offers: int = 0
    cities: list[str] = []
    offers_city_assumed: int = 0


class PriceChange(msgspec.Struct, kw_only=True, frozen=True):
    """One entry of an offer's history: the pricing it had from ``at`` on."""

    offer_id: str
    at: Timestamp
    pricing: Pricing
    available_cards: int | None = None
    change: Literal["new", "changed", "removed"] = "changed"
