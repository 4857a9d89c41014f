"""Recorded payloads and vendor configs for the adapter tests."""

from __future__ import annotations

from pathlib import Path

from schemas.vendor import FeedFormat, VendorConfig
from tests.builders import FETCHED_AT

__all__ = ["FETCHED_AT", "PAYLOADS", "payload", "vendor"]

PAYLOADS = Path(__file__).parent / "payloads"


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
