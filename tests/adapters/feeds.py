"""Recorded payloads and vendor configs for the adapter tests."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from schemas.vendor import FeedFormat, VendorConfig

PAYLOADS = Path(__file__).parent / "payloads"
FETCHED_AT = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def payload(name: str) -> bytes:
    """A recorded vendor payload, byte for byte (some are GBK)."""
    return (PAYLOADS / name).read_bytes()


def vendor(feed_format: FeedFormat, **fields: object) -> VendorConfig:
    """A vendor config as the vendors file would give it; short timeout, two retries."""
    values: dict[str, object] = {
        "id": "js-test",
        "name": "Test vendor",
        "region": "jiangsu",
        "city": "suzhou",
        "format": feed_format,
        "timeout_s": 2.0,
        "retries": 2,
    }
    return VendorConfig(**(values | fields))  # type: ignore[arg-type]
