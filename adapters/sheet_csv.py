"""The ``sheet_csv`` feed: a vendor's price sheet as CSV, UTF-8 or GBK, with Chinese headers.

Recorded sample (GBK on disk; 单价 is CNY per the unit 计费方式 names)::

    规格编号,型号,卡数,单价(元),计费方式,库存,互联
    4090-h,RTX 4090,8,1.98,按卡时,24,PCIe
    ,RTX 4090,4,22.00,多卡打包,3,
    ,4090 24G,1,"1,052",包月,,
    ,RTX 4090,8,8312,包月,,
    a800-d,A800 80G,8,150,包日,2,NVLink

Rules (headers are matched by what they contain, so ``单价(元)`` is the price column):
- 按卡时 / 按小时 / 按量计费: ``card_hour``; 单价 per card-hour, 卡数 the most cards one machine rents.
- 多卡打包: ``bundle``; 单价 per bundle-hour, 卡数 the cards in the bundle.
- 包日 / 包周 / 包月: ``term``; 单价 per period for 卡数 cards (1 = per card, 8 = a whole machine).
- sku is 规格编号 when given, else ``<型号>-<卡数>x-<hour|bundle|day|week|month>`` slugged.
- 库存 (optional) is available cards; 互联 (optional) PCIe / NVLink / InfiniBand / RoCE / Ethernet,
  default PCIe.

Parsing and validation are vectorized in polars (a sheet can hold 100k rows); a bad row is dropped with
its reason and line number, never the sheet. Only a missing column or an unreadable file fails the feed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import polars as pl

from adapters._source import SLUG_SEPARATOR_PATTERN, DocumentAdapter, decode_text
from adapters.base import AdapterContext, FetchResult, OfferBuilder, VendorFetchError
from schemas.offer import BundlePricing, CardHourPricing, Interconnect, Pricing, TermPeriod, TermPricing
from schemas.vendor import VendorConfig

__all__ = ["SheetCsvAdapter", "parse_sheet_csv"]

# (canonical column, header keywords, required); the first rule a header matches names it.
_COLUMNS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("sku", ("编号", "sku"), False),
    ("billing", ("计费", "billing"), True),
    ("gpu", ("型号", "gpu", "model"), True),
    ("cards", ("卡数", "cards"), True),
    ("price", ("单价", "价格", "price"), True),
    ("stock", ("库存", "stock"), False),
    ("interconnect", ("互联", "interconnect"), False),
)
_HEADER_NAMES = {"gpu": "型号", "cards": "卡数", "price": "单价", "billing": "计费方式"}

# 计费方式 → pricing kind, or the term period; the sku suffix is the same word.
_BILLING: dict[str, str] = {
    **dict.fromkeys(("按卡时", "按小时", "按时", "按量", "按量计费"), "hour"),
    **dict.fromkeys(("多卡打包", "打包", "整机打包"), "bundle"),
    **dict.fromkeys(("包日", "包天", "日租"), "day"),
    **dict.fromkeys(("包周", "周租"), "week"),
    **dict.fromkeys(("包月", "月租"), "month"),
}
_TERM_PERIODS: dict[str, TermPeriod] = {"day": "day", "week": "week", "month": "month"}
_INTERCONNECTS: dict[str, Interconnect] = {
    "pcie": "pcie",
    "nvlink": "nvlink",
    "sxm": "nvlink",
    "ib": "infiniband",
    "infiniband": "infiniband",
    "roce": "roce",
    "ethernet": "ethernet",
}
_MAX_CARDS = 1024
_DETAILS = {
    "unknown_gpu": "型号 is empty",
    "invalid_price": "单价 {price!r} is not a positive amount",
    "invalid_count": "卡数 {cards!r} is not a whole number from 1 to 1024",
    "unknown_billing": "计费方式 {billing!r} is not one of " + "/".join(_BILLING),
    "invalid_stock": "库存 {stock!r} is not a whole number >= 0",
    "unknown_interconnect": "互联 {interconnect!r} is not PCIe, NVLink, InfiniBand, RoCE or Ethernet",
}


def _column_names(headers: list[str], vendor: str) -> dict[str, str]:
    """Sheet header → canonical column name; a missing required column fails the sheet."""
    renames: dict[str, str] = {}
    for header in headers:
        lowered = header.strip().lower()
        for column, keywords, _ in _COLUMNS:
            if column not in renames.values() and any(keyword in lowered for keyword in keywords):
                renames[header] = column
                break
    found = set(renames.values())
    missing = [_HEADER_NAMES[column] for column, _, required in _COLUMNS if required and column not in found]
    if missing:
        # The header line is not quoted back: a "sheet" may be any file, secrets included.
        message = f"price sheet has no {'/'.join(missing)} column (its first line has {len(headers)} cells)"
        raise VendorFetchError(vendor, message, category="malformed")
    return renames


def _read_sheet(body: bytes, config: VendorConfig, source: str) -> pl.DataFrame:
    text = decode_text(body, config, what=f"price sheet {source}")
    try:
        # Every cell as text: a malformed cell must cost its row, not the sheet, so casting happens below.
        # A ragged line (an unquoted "1,052") shifts its own cells and fails its own checks.
        sheet = pl.read_csv(
            text.encode(), infer_schema=False, raise_if_empty=False, truncate_ragged_lines=True
        )
    except pl.exceptions.PolarsError as error:
        # Polars quotes the offending line; name the kind of error only.
        message = f"unreadable price sheet {source}: {type(error).__name__}"
        raise VendorFetchError(config.id, message, category="malformed") from error
    sheet = sheet.rename(_column_names(sheet.columns, config.id))
    absent = pl.lit(None, pl.String)
    columns = [
        (pl.col(column) if column in sheet.columns else absent.alias(column)).str.strip_chars()
        for column, *_ in _COLUMNS
    ]
    # Line numbers as a spreadsheet shows them: the header is line 1.
    return sheet.select(columns).with_row_index("line", offset=2)


def _checked(sheet: pl.DataFrame) -> pl.DataFrame:
    """Typed columns, a sku per row, and ``reason``: why a row is rejected, null when it is kept."""
    price = pl.col("price").str.replace_all(r"[¥￥元,\s]", "").cast(pl.Float64, strict=False)
    cards = pl.col("cards").str.strip_suffix("卡").cast(pl.Int64, strict=False)
    stock = pl.col("stock").cast(pl.Int64, strict=False)
    billing = pl.col("billing").replace_strict(_BILLING, default=None, return_dtype=pl.String)
    interconnect = (
        pl.col("interconnect")
        .str.to_lowercase()
        .replace_strict(_INTERCONNECTS, default=None, return_dtype=pl.String)
    )
    derived_sku = (
        pl.concat_str(
            pl.col("gpu"), cards.cast(pl.String) + "x", billing.fill_null(pl.col("billing")), separator="-"
        )
        .str.to_lowercase()
        .str.replace_all(SLUG_SEPARATOR_PATTERN, "-")
        .str.strip_chars("-")
    )
    reason = (
        pl.when(pl.col("gpu").is_null())
        .then(pl.lit("unknown_gpu"))
        .when(price.is_null() | ~price.is_finite() | (price <= 0))
        .then(pl.lit("invalid_price"))
        .when(cards.is_null() | (cards < 1) | (cards > _MAX_CARDS))
        .then(pl.lit("invalid_count"))
        .when(billing.is_null())
        .then(pl.lit("unknown_billing"))
        .when(pl.col("stock").is_not_null() & (stock.is_null() | (stock < 0)))
        .then(pl.lit("invalid_stock"))
        .when(pl.col("interconnect").is_not_null() & interconnect.is_null())
        .then(pl.lit("unknown_interconnect"))
    )
    return sheet.select(
        "line",
        pl.coalesce(pl.col("sku"), derived_sku).alias("sku"),
        pl.col("gpu"),
        billing.alias("billing_kind"),
        price.alias("price_cny"),
        cards.alias("cards_count"),
        stock.alias("stock_cards"),
        interconnect.fill_null("pcie").alias("interconnect_kind"),
        reason.alias("reason"),
        pl.col("price", "cards", "billing", "stock", "interconnect"),
    )


def _pricing(billing_kind: str, price_cny: float, cards: int) -> Pricing:
    """The one place a sheet row's unit becomes a pricing model."""
    if billing_kind == "hour":
        return CardHourPricing(cny_per_card_hour=price_cny, max_cards=cards)
    if billing_kind == "bundle":
        return BundlePricing(cards=cards, cny_per_bundle_hour=price_cny)
    return TermPricing(period=_TERM_PERIODS[billing_kind], cny_per_period=price_cny, cards=cards)


def _rows(frame: pl.DataFrame, *columns: str) -> Iterator[tuple[Any, ...]]:
    return zip(*(frame.get_column(column).to_list() for column in columns), strict=True)


def parse_sheet_csv(
    body: bytes, config: VendorConfig, context: AdapterContext, *, source: str
) -> FetchResult:
    """Normalize a price sheet: every valid row becomes an offer, every other row a counted rejection."""
    checked = _checked(_read_sheet(body, config, source))
    builder = OfferBuilder(config, context, source=source)
    kept = checked.filter(pl.col("reason").is_null())
    columns = ("sku", "gpu", "billing_kind", "price_cny", "cards_count", "stock_cards", "interconnect_kind")
    for sku, gpu, billing_kind, price_cny, cards, stock_cards, interconnect in _rows(kept, *columns):
        builder.add(
            sku=sku,
            gpu_name=gpu,
            pricing=_pricing(billing_kind, price_cny, cards),
            interconnect=interconnect,
            available_cards=stock_cards,
        )
    for row in checked.filter(pl.col("reason").is_not_null()).iter_rows(named=True):
        detail = f"line {row['line']}: " + _DETAILS[row["reason"]].format_map(row)
        builder.reject(row["sku"] or f"line-{row['line']}", row["reason"], detail)
    return builder.result()


class SheetCsvAdapter(DocumentAdapter):
    """A vendor price sheet (CSV, UTF-8 or GBK) with card-hour, bundle and day/week/month rows."""

    def parse(self, body: bytes, *, source: str) -> FetchResult:
        return parse_sheet_csv(body, self.config, self.context, source=source)
