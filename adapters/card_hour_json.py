"""The ``card_hour_json`` feed: a JSON API listing GPU SKUs priced per card-hour in milli-yuan.

Recorded sample (``price`` is 1/1000 CNY per card-hour; stock is per data-centre region)::

    {"code": 0, "msg": "success", "data": {"gpu_skus": [
      {"sku_id": "4090-pcie", "gpu_type": "NVIDIA GeForce RTX 4090", "price": 1980, "max_gpu_num": 8,
       "charge_unit": "second", "nvlink": false,
       "regions": [
         {"region_id": "suzhou-a", "region_name": "苏州A区", "idle_gpu_num": 37, "total_gpu_num": 128},
         {"region_id": "wuxi-b", "region_name": "无锡B区", "idle_gpu_num": 0, "total_gpu_num": 64}]},
      {"sku_id": "a100-sxm-80g", "gpu_type": "A100-SXM4-80GB", "price": 6700, "max_gpu_num": 8,
       "charge_unit": "minute", "nvlink": true,
       "regions": [
         {"region_id": "suzhou-a", "region_name": "苏州A区", "idle_gpu_num": 5, "total_gpu_num": 32}]}
    ]}}

Normalized: one ``card_hour`` offer per (SKU, region), sku ``<sku_id>-<region_id>``; 1980 milli-yuan is
¥1.98 per card-hour; ``idle_gpu_num`` is the offer's available cards; ``charge_unit`` is the billing
granularity. Each region entry is a data-centre zone with its own city: ``region_name`` (苏州A区) then
``region_id`` (wuxi-b) place it (``adapters.places``), so 无锡B区's stock is in Wuxi whatever city the
vendor is configured in; the offer's ``zone`` is the region's name. A zone that names no known city keeps
the vendor's city and is marked ``city_assumed``. A non-zero ``code`` is the API refusing the request and fails the feed (category
``api_error``; the vendor's ``msg`` is not repeated in the error).
"""

from __future__ import annotations

import msgspec

from adapters._source import DocumentAdapter, decode_problem
from adapters.base import AdapterContext, FetchResult, OfferBuilder, VendorFetchError
from schemas.offer import CardHourPricing
from schemas.vendor import VendorConfig

__all__ = ["CardHourJsonAdapter", "parse_card_hour_json"]

_MILLI_YUAN_PER_CNY = 1000
_GRANULARITY_S = {"second": 1, "minute": 60, "hour": 3600}


class _RawRegion(msgspec.Struct):
    region_id: str
    idle_gpu_num: int
    total_gpu_num: int
    region_name: str = ""


class _RawSku(msgspec.Struct):
    sku_id: str
    gpu_type: str
    # A sold-out or unpriced SKU comes with a null price: that row is dropped, not the feed.
    price: float | None
    max_gpu_num: int
    regions: list[_RawRegion]
    charge_unit: str = "hour"
    nvlink: bool = False


class _RawData(msgspec.Struct):
    gpu_skus: list[_RawSku]


class _RawResponse(msgspec.Struct):
    code: int
    msg: str = ""
    data: _RawData | None = None


_decoder = msgspec.json.Decoder(_RawResponse)


def _add_sku(builder: OfferBuilder, raw: _RawSku) -> None:
    """Unit conversion lives here: milli-yuan per card-hour → CNY per card-hour."""
    for region in raw.regions:
        sku = f"{raw.sku_id}-{region.region_id}"
        granularity_s = _GRANULARITY_S.get(raw.charge_unit)
        if granularity_s is None:
            builder.reject(sku, "unknown_billing", f"charge_unit {raw.charge_unit!r}")
            continue
        if raw.price is None:
            builder.reject(sku, "invalid_price", "price is null")
            continue
        if region.idle_gpu_num > region.total_gpu_num:
            detail = f"idle_gpu_num {region.idle_gpu_num} > total_gpu_num {region.total_gpu_num}"
            builder.reject(sku, "invalid_stock", detail)
            continue
        builder.add(
            sku=sku,
            gpu_name=raw.gpu_type,
            pricing=CardHourPricing(
                cny_per_card_hour=raw.price / _MILLI_YUAN_PER_CNY,
                max_cards=raw.max_gpu_num,
                granularity_s=granularity_s,
            ),
            interconnect="nvlink" if raw.nvlink else "pcie",
            available_cards=region.idle_gpu_num,
            zone=(region.region_name, region.region_id),
        )


def parse_card_hour_json(
    body: bytes, config: VendorConfig, context: AdapterContext, *, source: str
) -> FetchResult:
    """Decode one API response and normalize every (SKU, region); a body that does not decode fails."""
    try:
        response = _decoder.decode(body)
    except msgspec.DecodeError as error:
        message = f"malformed card_hour_json response from {source}: {decode_problem(error)}"
        raise VendorFetchError(config.id, message, category="malformed") from error
    if response.code != 0:
        # The code is a number; ``msg`` is vendor text and is not repeated.
        raise VendorFetchError(config.id, f"API error {response.code} from {source}", category="api_error")
    if response.data is None:
        raise VendorFetchError(config.id, f"API response from {source} has no data", category="malformed")
    builder = OfferBuilder(config, context, source=source)
    for raw in response.data.gpu_skus:
        _add_sku(builder, raw)
    return builder.result()


class CardHourJsonAdapter(DocumentAdapter):
    """A vendor API priced per card-hour in milli-yuan, with stock per data-centre region."""

    def parse(self, body: bytes, *, source: str) -> FetchResult:
        return parse_card_hour_json(body, self.config, self.context, source=source)
