"""Vendor feed adapters: one module per feed format, chosen through an explicit registry."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from adapters._urls import redact_url
from adapters.base import (
    DEFAULT_MAX_FEED_BYTES,
    FETCH_ERROR_CATEGORIES,
    Adapter,
    AdapterContext,
    FetchErrorCategory,
    FetchResult,
    RejectedRow,
    VendorFetchError,
)
from adapters.card_hour_json import CardHourJsonAdapter
from adapters.gpus import DEFAULT_GPU_CATALOG, GpuCatalog, UnknownGpuName
from adapters.node_hour_html import NodeHourHtmlAdapter
from adapters.per_second_json import PerSecondJsonAdapter
from adapters.static import StaticAdapter
from schemas.vendor import FeedFormat, VendorConfig

__all__ = [
    "ADAPTERS",
    "DEFAULT_GPU_CATALOG",
    "DEFAULT_MAX_FEED_BYTES",
    "FETCH_ERROR_CATEGORIES",
    "Adapter",
    "AdapterContext",
    "FetchErrorCategory",
    "FetchResult",
    "GpuCatalog",
    "RejectedRow",
    "UnknownGpuName",
    "VendorFetchError",
    "build_adapter",
    "redact_url",
]

AdapterFactory = Callable[..., Adapter]


def _sheet_csv(config: VendorConfig, *, client: httpx.AsyncClient, context: AdapterContext) -> Adapter:
    """``sheet_csv``'s adapter, its module imported on first use: it parses with polars, which takes 37 MB
    of a process that configures no price sheet."""
    from adapters.sheet_csv import SheetCsvAdapter  # noqa: PLC0415 - loaded only where a sheet is configured

    return SheetCsvAdapter(config, client=client, context=context)


ADAPTERS: dict[FeedFormat, AdapterFactory] = {
    "static": StaticAdapter,
    "card_hour_json": CardHourJsonAdapter,
    "per_second_json": PerSecondJsonAdapter,
    "node_hour_html": NodeHourHtmlAdapter,
    "sheet_csv": _sheet_csv,
}


def build_adapter(config: VendorConfig, *, client: httpx.AsyncClient, context: AdapterContext) -> Adapter:
    """The adapter for a vendor's configured feed format."""
    try:
        factory = ADAPTERS[config.format]
    except KeyError:
        message = f"feed format {config.format!r} has no adapter"
        raise VendorFetchError(config.id, message, category="config") from None
    return factory(config, client=client, context=context)
