"""The ``per_second_json`` feed: GPU prices in micro-yuan per second, one price per region, paginated.

Recorded sample (page 1 of 2; ``price`` and ``discount_price`` are 1e-6 CNY per card-second, ``gpu_count``
is how many cards one machine of that type has, ``inventory`` how many of them are idle)::

    {"data": [
      {"gpu_name": "RTX 4090", "gpu_count": 8, "regions": [
        {"region_name": "suzhou-1", "inventory": 42, "price": 550, "discount_price": 500},
        {"region_name": "wuxi-2", "inventory": 0, "price": 550, "discount_price": null}]},
      {"gpu_name": "H20 96G", "gpu_count": 8, "regions": [
        {"region_name": "suzhou-1", "inventory": 16, "price": 1945, "discount_price": 2100}]}
     ],
     "page": 1, "next": "/v1/gpu-prices?page=2"}

Normalized: one ``card_hour`` offer per (GPU, machine size, region), sku
``<gpu_name>-<gpu_count>x-<region_name>`` slugged, billed per second, ``max_cards`` = ``gpu_count``.
¥/h = raw × 3600 / 1e6, so 550 is ¥1.98 per card-hour. The discount price is what a renter pays, so it
is used when present, positive and below the list price (0 or null means no discount). Each region is a
data-centre zone placed in its own city by its name (``suzhou-1`` → Suzhou, ``wuxi-2`` → Wuxi;
``adapters.places``); a name that places it nowhere keeps the vendor's city, marked ``city_assumed``. ``next`` is
followed (relative to the page) until null, within the first page's origin only; see
``adapters._source.read_pages`` for that and the loop guard.
"""

from __future__ import annotations

from functools import partial

import msgspec

from adapters._source import DocumentAdapter, decode_problem, read_pages, slug
from adapters.base import AdapterContext, FetchResult, OfferBuilder, VendorFetchError
from schemas.offer import CardHourPricing
from schemas.vendor import VendorConfig

__all__ = ["PerSecondJsonAdapter", "cny_per_hour"]

_SECONDS_PER_HOUR = 3600
_MICRO_YUAN_PER_CNY = 1_000_000


class _RawRegionPrice(msgspec.Struct):
    region_name: str
    inventory: int
    price: float | None
    discount_price: float | None = None


class _RawGpu(msgspec.Struct):
    gpu_name: str
    gpu_count: int
    regions: list[_RawRegionPrice]


class _RawPage(msgspec.Struct):
    data: list[_RawGpu]
    next: str | None = None
    page: int | None = None


_decoder = msgspec.json.Decoder(_RawPage)


def cny_per_hour(micro_yuan_per_second: float) -> float:
    """Micro-yuan per second → CNY per hour (multiply first: 550 × 3600 is exact, then one rounding)."""
    return micro_yuan_per_second * _SECONDS_PER_HOUR / _MICRO_YUAN_PER_CNY


def _payable_micro_yuan(region: _RawRegionPrice) -> float | None:
    discount = region.discount_price
    if region.price is None:
        return discount if discount else None
    if discount is not None and 0 < discount < region.price:
        return discount
    return region.price


def _add_gpu(builder: OfferBuilder, raw: _RawGpu) -> None:
    for region in raw.regions:
        sku = slug(raw.gpu_name, f"{raw.gpu_count}x", region.region_name)
        micro_yuan_per_second = _payable_micro_yuan(region)
        if micro_yuan_per_second is None:
            builder.reject(sku, "invalid_price", "neither price nor discount_price is set")
            continue
        builder.add(
            sku=sku,
            gpu_name=raw.gpu_name,
            pricing=CardHourPricing(
                cny_per_card_hour=cny_per_hour(micro_yuan_per_second),
                max_cards=raw.gpu_count,
                granularity_s=1,
            ),
            available_cards=region.inventory,
            zone=(region.region_name,),
        )


def _decode_page(vendor: str, body: bytes, where: str) -> _RawPage:
    try:
        return _decoder.decode(body)
    except msgspec.DecodeError as error:
        message = f"malformed per_second_json page {where}: {decode_problem(error)}"
        raise VendorFetchError(vendor, message, category="malformed") from error


def _normalize(
    pages: list[_RawPage], config: VendorConfig, context: AdapterContext, *, source: str
) -> FetchResult:
    builder = OfferBuilder(config, context, source=source)
    for page in pages:
        for raw in page.data:
            _add_gpu(builder, raw)
    return builder.result()


class PerSecondJsonAdapter(DocumentAdapter):
    """A paginated vendor API priced per card-second in micro-yuan, with a discount price per region."""

    async def fetch(self) -> FetchResult:
        pages, source = await read_pages(
            self.config,
            client=self.client,
            context=self.context,
            decode=partial(_decode_page, self.config.id),
            next_link=lambda page: page.next,
        )
        return _normalize(pages, self.config, self.context, source=source)
