"""The ``node_hour_html`` feed: a cluster vendor's HTML pricing page, one table row per node type.

Recorded sample (the table only; the page around it changes whenever the vendor redesigns)::

    <table class="price-list">
      <thead><tr><th>GPU型号</th><th>每节点卡数</th><th>节点单价（元/节点·小时）</th><th>最少节点数</th>
                 <th>最多节点数</th><th>高速网络</th><th>网络附加费（元/节点·小时）</th><th>并行存储（元/节点·小时）</th></tr></thead>
      <tbody>
        <tr><td>H800 80G</td><td>8卡</td><td>¥300.00</td><td>2</td><td>16</td>
            <td>InfiniBand 400G</td><td>24.00</td><td>6.00</td></tr>
        <tr><td>RTX 4090</td><td>8卡</td><td>¥56.00</td><td>2台起</td><td>不限</td>
            <td>RoCE 200G</td><td>8.00</td><td>—</td></tr>
      </tbody>
    </table>

The table is found by its header cells (Chinese or English), wherever it sits in the page and in whatever
column order; a page without one fails the feed and names the columns it could not find. Normalized: one
``node_hour`` offer per row, sku ``<gpu>-<cards>x-<interconnect>`` slugged; prices are CNY per node-hour.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Literal

from adapters._source import DocumentAdapter, decode_text, slug
from adapters.base import AdapterContext, FetchResult, OfferBuilder, VendorFetchError
from schemas.offer import Interconnect, NodeHourPricing
from schemas.vendor import VendorConfig

__all__ = ["NodeHourHtmlAdapter", "parse_node_hour_html"]

Column = Literal["gpu", "cards", "price", "min_nodes", "max_nodes", "network", "premium", "storage"]

# Ordered: the first rule whose keyword a header contains names the column, so "网络附加费" is the
# premium (not the network) and "GPUs per node" is the card count (not the GPU model).
_COLUMN_RULES: tuple[tuple[Column, tuple[str, ...]], ...] = (
    ("premium", ("附加", "溢价", "premium")),
    ("storage", ("存储", "storage")),
    ("min_nodes", ("最少", "最低", "起租", "min")),
    ("max_nodes", ("最多", "最大", "上限", "max")),
    ("cards", ("卡数", "gpus per node", "cards per node", "gpus/node", "cards/node")),
    ("price", ("单价", "价格", "price")),
    ("network", ("网络", "互联", "network", "interconnect")),
    ("gpu", ("型号", "显卡", "gpu")),
)
_REQUIRED: dict[Column, str] = {
    "gpu": "GPU model (GPU型号)",
    "cards": "cards per node (每节点卡数)",
    "price": "price per node-hour (节点单价)",
    "min_nodes": "minimum nodes (最少节点数)",
    "network": "network (网络)",
    "premium": "network premium (网络附加费)",
}
_NONE_WORDS = frozenset({"", "-", "—", "–", "无", "免费", "不限", "n/a", "none", "free", "included", "含"})
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_NETWORKS: tuple[tuple[re.Pattern[str], Interconnect], ...] = (
    (re.compile(r"infiniband|(?<![a-z])ib(?![a-z])"), "infiniband"),
    (re.compile(r"roce"), "roce"),
    (re.compile(r"nvlink"), "nvlink"),
)


@dataclass
class _OpenTable:
    rows: list[list[str]] = field(default_factory=list)
    row: list[str] = field(default_factory=list)
    cell: list[str] | None = None  # text pieces of the open cell, None between cells

    def end_cell(self) -> None:
        if self.cell is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None

    def end_row(self) -> None:
        self.end_cell()
        if self.row:
            self.rows.append(self.row)
            self.row = []


class _TableReader(HTMLParser):
    """Every ``<table>`` of a page as rows of cell texts; nested tables are read as tables of their own."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self._open: list[_OpenTable] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._open.append(_OpenTable())
        elif not self._open:
            return
        elif tag == "tr":
            self._open[-1].end_row()
        elif tag in ("td", "th"):
            self._open[-1].end_cell()
            self._open[-1].cell = []
        elif tag == "br":
            self.handle_data(" ")

    def handle_endtag(self, tag: str) -> None:
        if not self._open:
            return
        if tag == "table":
            table = self._open.pop()
            table.end_row()
            self.tables.append(table.rows)
        elif tag == "tr":
            self._open[-1].end_row()
        elif tag in ("td", "th"):
            self._open[-1].end_cell()

    def handle_data(self, data: str) -> None:
        if self._open and self._open[-1].cell is not None:
            self._open[-1].cell.append(data)


def _read_tables(text: str) -> list[list[list[str]]]:
    reader = _TableReader()
    reader.feed(text)
    reader.close()
    return reader.tables


class _BadCellError(ValueError):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def _column_of(header: str) -> Column | None:
    lowered = header.lower()
    for column, keywords in _COLUMN_RULES:
        if any(keyword in lowered for keyword in keywords):
            return column
    return None


def _header_columns(cells: Sequence[str]) -> dict[Column, int]:
    columns: dict[Column, int] = {}
    for index, cell in enumerate(cells):
        column = _column_of(cell)
        if column is not None:
            columns.setdefault(column, index)
    return columns


def _find_price_table(
    tables: list[list[list[str]]], source: str, vendor: str
) -> tuple[dict[Column, int], list[list[str]]]:
    """The header's column positions and the data rows of the first table with every required column."""
    best_missing: list[str] = list(_REQUIRED.values())
    for rows in tables:
        # The header is one of the first rows (a caption row may come before it).
        for header_index, cells in enumerate(rows[:3]):
            columns = _header_columns(cells)
            missing = [label for column, label in _REQUIRED.items() if column not in columns]
            if not missing:
                return columns, rows[header_index + 1 :]
            if len(missing) < len(best_missing):
                best_missing = missing
    raise VendorFetchError(
        vendor,
        f"no pricing table on {source} ({len(tables)} tables on the page); the closest has no column for "
        + ", ".join(best_missing),
        category="malformed",
    )


def _money(cell: str, what: str, *, none_is_zero: bool = False) -> float:
    if none_is_zero and cell.strip().lower() in _NONE_WORDS:
        return 0.0
    match = _NUMBER.search(cell)
    if match is None:
        raise _BadCellError("invalid_price", f"{what} {cell!r} is not an amount")
    # A minus sign before the digits means a negative amount, which the pricing bounds then reject.
    sign = -1.0 if cell[: match.start()].rstrip().endswith("-") else 1.0
    return sign * float(match.group().replace(",", ""))


def _count(cell: str, what: str) -> int:
    match = re.search(r"-?\d+", cell)
    if match is None:
        raise _BadCellError("invalid_count", f"{what} {cell!r} is not a whole number")
    return int(match.group())


def _count_or_unlimited(cell: str, what: str) -> int | None:
    return None if cell.strip().lower() in _NONE_WORDS else _count(cell, what)


def _interconnect(cell: str) -> Interconnect:
    lowered = cell.lower()
    for pattern, interconnect in _NETWORKS:
        if pattern.search(lowered):
            return interconnect
    raise _BadCellError("unknown_interconnect", f"network {cell!r} is not InfiniBand, RoCE or NVLink")


def _add_row(builder: OfferBuilder, columns: Mapping[Column, int], cells: Sequence[str]) -> None:
    if len(cells) <= max(columns.values()):
        detail = f"{len(cells)} cells in a table whose header has {max(columns.values()) + 1}"
        builder.reject(slug(cells[0]), "malformed_row", detail)
        return

    def cell(column: Column) -> str:
        index = columns.get(column)
        return "" if index is None else cells[index]

    gpu_name = cell("gpu")
    try:
        cards_per_node = _count(cell("cards"), "cards per node")
        interconnect = _interconnect(cell("network"))
        pricing = NodeHourPricing(
            cny_per_node_hour=_money(cell("price"), "price"),
            cards_per_node=cards_per_node,
            min_nodes=_count(cell("min_nodes"), "minimum nodes"),
            max_nodes=_count_or_unlimited(cell("max_nodes"), "maximum nodes"),
            network_premium_cny_per_node_hour=_money(cell("premium"), "network premium", none_is_zero=True),
            storage_cny_per_node_hour=_money(cell("storage"), "storage fee", none_is_zero=True),
        )
    except _BadCellError as error:
        builder.reject(slug(gpu_name, cell("cards"), cell("network")), error.reason, error.detail)
        return
    builder.add(
        sku=slug(gpu_name, f"{cards_per_node}x", interconnect),
        gpu_name=gpu_name,
        pricing=pricing,
        interconnect=interconnect,
    )


def parse_node_hour_html(
    body: bytes, config: VendorConfig, context: AdapterContext, *, source: str
) -> FetchResult:
    """Find the pricing table in the page and normalize each of its rows."""
    tables = _read_tables(decode_text(body, config, what=f"pricing page {source}"))
    columns, rows = _find_price_table(tables, source, config.id)
    builder = OfferBuilder(config, context, source=source)
    for cells in rows:
        # A one-cell row is a note spanning the table ("prices include VAT"), an empty one a spacer.
        if len(cells) > 1 and any(cells):
            _add_row(builder, columns, cells)
    return builder.result()


class NodeHourHtmlAdapter(DocumentAdapter):
    """A cluster vendor's pricing page: node types priced per node-hour, with minimums and premiums."""

    def parse(self, body: bytes, *, source: str) -> FetchResult:
        return parse_node_hour_html(body, self.config, self.context, source=source)
