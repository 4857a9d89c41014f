"""This process's Prometheus metrics, exposed at ``GET /metrics``.

Defined once per process (the client library's registry is global); the app and the refresh pipeline
report into them through the small functions below.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from schemas.api import VendorRefresh

__all__ = [
    "HEAP_TRIMS",
    "QUOTES_SERVED",
    "REQUESTS",
    "REQUEST_DURATION",
    "STORE_ERRORS",
    "record_refresh",
    "record_snapshot",
]

# Recorded by service.http.requests.RequestMiddleware; ``path`` is the route template, never the raw path.
_REQUEST_LABELS = ("method", "path", "status_code")
REQUESTS = Counter("gpuquote_requests_total", "HTTP requests answered", _REQUEST_LABELS)
REQUEST_DURATION = Histogram(
    "gpuquote_request_duration_seconds", "Time to answer an HTTP request", _REQUEST_LABELS
)
QUOTES_SERVED = Counter("gpuquote_quotes_total", "Quotes answered by POST /quote", ["outcome"])
HEAP_TRIMS = Counter("gpuquote_heap_trims_total", "Times freed memory was given back to the system")
REFRESH_DURATION = Histogram(
    "gpuquote_refresh_duration_seconds",
    "Time to fetch, screen and store one vendor's prices",
    ["vendor", "outcome"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
REFRESHES = Counter("gpuquote_refresh_total", "Vendor refreshes by outcome", ["vendor", "outcome"])
ROWS_DROPPED = Counter("gpuquote_rows_dropped_total", "Vendor rows dropped by validation", ["vendor"])
PRICES_HELD = Gauge("gpuquote_prices_quarantined", "Prices held back after a jump, per vendor", ["vendor"])
OFFERS = Gauge("gpuquote_offers", "Offers in the current snapshot, per vendor", ["vendor"])
SNAPSHOT_VERSION = Gauge("gpuquote_snapshot_version", "Store version of the snapshot being served")
SNAPSHOT_BUILT = Gauge("gpuquote_snapshot_built_timestamp_seconds", "When the served snapshot was built")
OLDEST_PRICE = Gauge(
    "gpuquote_snapshot_oldest_price_timestamp_seconds", "Fetch time of the oldest price in the snapshot"
)
STORE_ERRORS = Counter("gpuquote_store_errors_total", "Price store calls that failed", ["operation"])
STORE_FAULTS = Counter(
    "gpuquote_store_faults_total", "Store values skipped because they did not decode, by key kind", ["kind"]
)
RATE_LIMIT_FALLBACKS = Counter(
    "gpuquote_rate_limit_local_total", "Rate-limit checks counted in-process because the store failed"
)


def record_refresh(outcome: VendorRefresh) -> None:
    label = "ok" if outcome.ok else "failed"
    REFRESH_DURATION.labels(outcome.vendor, label).observe(outcome.duration_s)
    REFRESHES.labels(outcome.vendor, label).inc()
    if outcome.ok:
        ROWS_DROPPED.labels(outcome.vendor).inc(outcome.rows_dropped)
        PRICES_HELD.labels(outcome.vendor).set(outcome.quarantined)


def record_snapshot(
    version: int, built_at_s: float, oldest_price_s: float | None, offers: dict[str, int]
) -> None:
    SNAPSHOT_VERSION.set(version)
    SNAPSHOT_BUILT.set(built_at_s)
    if oldest_price_s is not None:
        OLDEST_PRICE.set(oldest_price_s)
    for vendor, count in offers.items():
        OFFERS.labels(vendor).set(count)
