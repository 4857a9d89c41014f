"""The adapter protocol, its error, and the one place a vendor row becomes an ``Offer``.

Exceptions::

    VendorFetchError            a vendor's feed could not be fetched or decoded
                                (carries ``vendor``, ``category`` and ``message``)

``VendorFetchError.category`` is a short, stable word that is safe to show anyone; ``message`` is the
detail for logs and admin views. Messages never quote what a vendor sent (no body text, no header
values, no redirect targets), only numbers such as status codes and byte counts, and every URL in them
goes through ``redact_url``. The categories:

    config            the vendor's configuration cannot work: no adapter for its format, neither path
                      nor url, its token variable unset, or a path outside the vendors file's folder
    file              the configured file cannot be read
    connect           no connection: refused, unresolvable host, TLS failure
    timeout           no complete answer within the vendor's ``timeout_s``
    protocol          a broken HTTP exchange: a body cut short, an unparsable response
    http_status       an unsuccessful HTTP status other than 401 and 403
    unauthorized      HTTP 401 or 403: the vendor refused the credentials
    redirect_refused  a redirect or a pagination link to another origin, or too many redirects
    too_large         a body over ``AdapterContext.max_feed_bytes``, or more pages than allowed
    malformed         the body does not decode or lacks what the format needs (columns, a table)
    api_error         the vendor's API answered with an error code in a successful response
    other             the raiser did not pick one

Row-level problems (an unknown GPU, a price that fails validation) are not exceptions to the caller:
``OfferBuilder`` turns them into ``RejectedRow`` entries so one bad row never costs a vendor its feed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal, Protocol, get_args

import httpx
import msgspec

from adapters.gpus import DEFAULT_GPU_CATALOG, GpuCatalog, UnknownGpuName
from adapters.places import city_region, zone_city
from schemas.offer import Interconnect, Offer, Pricing, implausible_offer, offer_id
from schemas.vendor import VendorConfig

__all__ = [
    "DEFAULT_MAX_FEED_BYTES",
    "FETCH_ERROR_CATEGORIES",
    "Adapter",
    "AdapterContext",
    "FetchErrorCategory",
    "FetchResult",
    "OfferBuilder",
    "RejectedRow",
    "VendorFetchError",
]


FetchErrorCategory = Literal[
    "config",
    "file",
    "connect",
    "timeout",
    "protocol",
    "http_status",
    "unauthorized",
    "redirect_refused",
    "too_large",
    "malformed",
    "api_error",
    "other",
]
FETCH_ERROR_CATEGORIES: Final[frozenset[str]] = frozenset(get_args(FetchErrorCategory))

DEFAULT_MAX_FEED_BYTES: Final = 8 * 1024 * 1024


class VendorFetchError(Exception):
    """A vendor's feed failed as a whole: network, HTTP status, or a body that does not decode.

    ``category`` (one of ``FETCH_ERROR_CATEGORIES``) is for public views, ``message`` for logs and admins.
    """

    def __init__(self, vendor: str, message: str, *, category: FetchErrorCategory = "other") -> None:
        super().__init__(f"{vendor}: {message}")
        self.vendor = vendor
        self.message = message
        self.category: FetchErrorCategory = category


@dataclass(frozen=True, slots=True)
class RejectedRow:
    sku: str
    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class FetchResult:
    offers: list[Offer]
    rejected: list[RejectedRow] = field(default_factory=list)

    def rejected_by_reason(self) -> dict[str, int]:
        return dict(Counter(row.reason for row in self.rejected))


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class AdapterContext:
    """What every adapter is handed: where relative paths start, the GPU catalog, a clock, secrets."""

    base_dir: Path = Path()
    catalog: GpuCatalog = DEFAULT_GPU_CATALOG
    clock: Callable[[], datetime] = _utc_now
    environ: Mapping[str, str] = field(default_factory=dict)
    # First retry waits about this long, doubling per attempt (with jitter); tests shrink it.
    retry_backoff_s: float = 0.2
    # A feed (an HTTP body after decompression, all pages of a paginated one together, or a file) above
    # this many bytes fails with category "too_large" before it can exhaust the process's memory.
    max_feed_bytes: int = DEFAULT_MAX_FEED_BYTES


class Adapter(Protocol):
    """One vendor feed format. Implementations take their ``httpx.AsyncClient`` injected."""

    config: VendorConfig

    async def fetch(self) -> FetchResult: ...


_pricing_decoder = msgspec.json.Decoder(Pricing)


class OfferBuilder:
    """Maps normalized vendor rows to ``Offer``s, collecting rows it must reject instead of raising."""

    def __init__(
        self,
        config: VendorConfig,
        context: AdapterContext,
        *,
        source: str,
        observed_at: datetime | None = None,
    ) -> None:
        self._config = config
        self._catalog = context.catalog
        # A feed that states when its prices were observed (a static file of prices copied from somewhere)
        # is as old as that, not as new as this read: staleness then applies to the prices themselves. A
        # time in the future is taken as now, so a feed cannot make its prices look fresh for longer.
        now = context.clock()
        self._fetched_at = now if observed_at is None else min(observed_at, now)
        self._source = source
        # Feeds repeat a handful of GPU names over many rows: normalize each spelling once.
        self._gpu_ids: dict[str, str | UnknownGpuName] = {}
        self._skus: set[str] = set()
        self._zones: dict[tuple[str, ...], tuple[str, str, bool]] = {}
        self.offers: list[Offer] = []
        self.rejected: list[RejectedRow] = []

    def reject(self, sku: str, reason: str, detail: str) -> None:
        self.rejected.append(RejectedRow(sku=sku, reason=reason, detail=detail))

    def add(
        self,
        *,
        sku: str,
        gpu_name: str,
        pricing: Pricing,
        interconnect: Interconnect = "pcie",
        available_cards: int | None = None,
        spot: bool = False,
        zone: Sequence[str] = (),
        storage_cny_per_gb_day: float | None = None,
        traffic_cny_per_gb: float | None = None,
        lead_time_h: float | None = None,
        spot_interruptions_per_month: float | None = None,
    ) -> None:
        """Validate one row (known GPU, amounts within bounds and within what a real price can be, a new
        SKU) and keep it, or record why not.

        ``zone`` is the data-centre zone the row's stock is in, by every name the feed gives it (display
        name first, then its id): the offer is placed in the zone's city (``adapters.places``), or, when
        no name places it, in the vendor's city and marked ``city_assumed``.

        The sanity bounds (``schemas.offer.implausible_offer``) apply to every row, new or known: the
        quarantine only compares a price with the one stored, so a new offer at ``1e308`` or ``1e-300`` would
        otherwise be served (and become every quote's cheapest option at ¥0.00, or overflow its sums)."""
        gpu_id = self._gpu_id(gpu_name)
        if isinstance(gpu_id, UnknownGpuName):
            self.reject(sku, "unknown_gpu", gpu_id.reason)
            return
        if sku in self._skus:
            # Two rows with one offer id would silently overwrite each other in the store and its history.
            self.reject(sku, "duplicate_sku", f"SKU {sku!r} appears more than once in the feed")
            return
        try:
            # Round-trip through the decoder: msgspec enforces the Meta bounds (price > 0, counts >= 1)
            # only when decoding, and ``inf``/``nan`` do not survive JSON encoding.
            checked = _pricing_decoder.decode(msgspec.json.encode(pricing))
        except (msgspec.ValidationError, msgspec.EncodeError) as error:
            self.reject(sku, "invalid_price", str(error))
            return
        if available_cards is not None and available_cards < 0:
            self.reject(sku, "invalid_stock", f"available_cards={available_cards}")
            return
        city, region, assumed = self._place(zone)
        offer = Offer(
            id=offer_id(self._config.id, sku),
            vendor=self._config.id,
            sku=sku,
            region=region,
            city=city,
            gpu=gpu_id,
            gpu_memory_gb=self._catalog.get(gpu_id).memory_gb,
            interconnect=interconnect,
            pricing=checked,
            fetched_at=self._fetched_at,
            source=self._source,
            available_cards=available_cards,
            spot=spot,
            label=self._config.label,
            zone=_zone_label(zone),
            city_assumed=assumed,
            storage_cny_per_gb_day=storage_cny_per_gb_day,
            traffic_cny_per_gb=traffic_cny_per_gb,
            lead_time_h=lead_time_h,
            spot_interruptions_per_month=spot_interruptions_per_month,
        )
        if (problem := implausible_offer(offer)) is not None:
            self.reject(sku, "implausible_price", problem)
            return
        self._skus.add(sku)
        self.offers.append(offer)

    def _place(self, zone: Sequence[str]) -> tuple[str, str, bool]:
        """(city, region, whether the city is assumed) for a row in ``zone``."""
        config = self._config
        if not any(zone):
            return config.city, config.region, False
        key = tuple(zone)
        placed = self._zones.get(key)
        if placed is None:
            city = zone_city(zone, vendor_city=config.city)
            if city is None:
                placed = (config.city, config.region, True)
            else:
                placed = (city, city_region(city, config.region), False)
            self._zones[key] = placed
        return placed

    def _gpu_id(self, gpu_name: str) -> str | UnknownGpuName:
        known = self._gpu_ids.get(gpu_name)
        if known is None:
            try:
                known = self._catalog.normalize(gpu_name)
            except UnknownGpuName as error:
                known = error
            self._gpu_ids[gpu_name] = known
        return known

    def result(self) -> FetchResult:
        return FetchResult(offers=self.offers, rejected=self.rejected)


# A zone's name is vendor text shown on public routes: printable characters only, and bounded.
_ZONE_LABEL_MAX_CHARS = 64


def _zone_label(zone: Sequence[str]) -> str:
    """The zone's first non-empty name, as shown: printable, spaces collapsed, at most 64 characters."""
    for name in zone:
        shown = " ".join("".join(ch if ch.isprintable() else " " for ch in name).split())
        if shown:
            return shown[:_ZONE_LABEL_MAX_CHARS]
    return ""


def build_client(timeout_s: float = 10.0) -> httpx.AsyncClient:
    """The one client shape used for vendor I/O: explicit timeouts and connection limits."""
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 5.0)),
        limits=httpx.Limits(max_connections=20, max_keepalive_connections=10),
        # Redirects are followed by ``adapters._http`` only within the vendor's own origin.
        follow_redirects=False,
        headers={"User-Agent": "gpuquote/0.1"},
    )
