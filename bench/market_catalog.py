"""Synthetic market catalogs for ``bench/market.py``: 40 vendors' static feeds, every pricing kind.

A catalog is a list of ``MarketVendor`` (id, region, city) with its feed rows in the static format
(``adapters/static.py``): card-hour offers (some spot, some with minimum billed hours), node-hour clusters
(minimum and most nodes, network and storage premiums, a day's lead time on some), bundles, and term
packages by the day, week and month, per card and per machine; stock figures on most rows and data fees
on some. GPU models and their typical prices are ``bench/quote.py``'s ``GPUS``. Everything is drawn from
one seeded ``random.Random``, so a catalog is the same on every run; ``price_factor`` scales every price
(a refresh in which every price moved).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from quote import GPUS  # bench/quote.py (the benchmarks' folder is on sys.path)

from adapters.base import AdapterContext
from adapters.static import parse_static
from schemas.offer import Offer
from schemas.vendor import VendorConfig

__all__ = [
    "VENDOR_COUNT",
    "MarketVendor",
    "cluster_catalog",
    "market_catalog",
    "parse_catalog",
    "write_feeds",
]

VENDOR_COUNT = 40
# A third of the vendors in Shenzhen, the rest over Jiangsu's cities.
JIANGSU_CITIES = ("suzhou", "nanjing", "wuxi", "changzhou", "kunshan", "nantong")
PERIOD_HOURS = {"day": 24, "week": 168, "month": 720}

Row = dict[str, object]


@dataclass(frozen=True)
class MarketVendor:
    id: str
    region: str
    city: str
    rows: tuple[Row, ...]


def _place(index: int) -> tuple[str, str]:
    if index % 3 == 0:
        return "shenzhen", "shenzhen"
    jiangsu_index = index - index // 3 - 1  # 0, 1, 2, ... over the vendors not in Shenzhen
    return "jiangsu", JIANGSU_CITIES[jiangsu_index % len(JIANGSU_CITIES)]


def _card_hour(rng: random.Random, cny: float) -> Row:
    return {"kind": "card_hour", "price_cny": round(cny, 2), "max_cards": rng.choice((1, 2, 4, 8, 8, 10)),
            "granularity_s": rng.choice((1, 60, 3600)), "min_billed_hours": rng.choice((0.0, 0.0, 1.0, 24.0))}  # fmt: skip


def _node_hour(rng: random.Random, cny: float, max_nodes: Sequence[int | None]) -> Row:
    cards = rng.choice((8, 8, 4))
    return {"kind": "node_hour", "price_cny": round(cny * cards * 0.95, 2), "cards_per_node": cards,
            "min_nodes": rng.choice((1, 1, 2, 4)), "max_nodes": rng.choice(max_nodes),
            "network_premium_cny": rng.choice((0.0, 8.0, 24.0, 40.0)),
            "storage_cny": rng.choice((0.0, 0.0, 6.0))}  # fmt: skip


def _bundle(rng: random.Random, cny: float) -> Row:
    cards = rng.choice((2, 4, 8))
    return {"kind": "bundle", "cards": cards, "price_cny": round(cny * cards * 0.92, 2),
            "max_bundles": rng.choice((1, 1, 2, 4))}  # fmt: skip


def _term(rng: random.Random, cny: float) -> Row:
    period = rng.choice(("day", "week", "month"))
    cards = rng.choice((1, 1, 8))  # per card, or per 8-card machine
    price = cny * PERIOD_HOURS[period] * cards * rng.uniform(0.6, 0.85)
    return {"kind": "term", "period": period, "price_cny": round(price, 2), "cards": cards,
            "max_units": rng.choice((1, 4, 8)) if cards == 1 else 1}  # fmt: skip


def _row(rng: random.Random, sku: str, clusters_only: bool) -> Row:
    gpu, _memory_gb, card_hour_cny = GPUS[rng.randrange(len(GPUS))]
    cny = card_hour_cny * rng.uniform(0.7, 1.5)
    roll = 0.45 if clusters_only else rng.random()
    row: Row = {"sku": sku, "gpu": gpu, "interconnect": rng.choice(("pcie", "pcie", "nvlink"))}
    if roll < 0.4:
        row["spot"] = rng.random() < 0.25
        row["pricing"] = _card_hour(rng, cny * (0.6 if row["spot"] else 1.0))
    elif roll < 0.55:
        max_nodes = (16, 64, 128, 256, 512, 1024) if clusters_only else (2, 4, 16, 64, None)
        row["pricing"] = _node_hour(rng, cny, max_nodes)
        row["interconnect"] = rng.choice(("infiniband", "roce", "ethernet"))
        row["lead_time_h"] = rng.choice((0.0, 0.0, 24.0))
    elif roll < 0.7:
        row["pricing"] = _bundle(rng, cny)
    else:
        row["pricing"] = _term(rng, cny)
    row["available_cards"] = rng.choice((None, 0, 8, 16, 64, 256, 2048))
    if rng.random() < 0.3:
        row["storage_cny_per_gb_day"] = round(rng.uniform(0.005, 0.05), 4)
        row["traffic_cny_per_gb"] = round(rng.uniform(0.0, 0.8), 3)
    return row


def _catalog(offer_count: int, vendor_count: int, seed: int, clusters_only: bool) -> list[MarketVendor]:
    rng = random.Random(seed)
    vendors = []
    for index in range(vendor_count):
        region, city = _place(index)
        share = offer_count // vendor_count + (index < offer_count % vendor_count)
        rows = tuple(_row(rng, f"sku-{index:02d}-{number}", clusters_only) for number in range(share))
        vendors.append(MarketVendor(id=f"mkt-{city}-{index:02d}", region=region, city=city, rows=rows))
    return vendors


def market_catalog(offer_count: int, seed: int = 7) -> list[MarketVendor]:
    """``offer_count`` rows over ``VENDOR_COUNT`` vendors, every pricing kind (deterministic per seed)."""
    return _catalog(offer_count, VENDOR_COUNT, seed, clusters_only=False)


def cluster_catalog(offer_count: int = 300, vendor_count: int = 10, seed: int = 11) -> list[MarketVendor]:
    """Node-hour clusters only, each selling at most 16 to 1,024 nodes."""
    return _catalog(offer_count, vendor_count, seed, clusters_only=True)


def _moved(row: Row, price_factor: float) -> Row:
    if price_factor == 1.0:
        return row
    pricing = dict(row["pricing"])  # type: ignore[call-overload]
    pricing["price_cny"] = round(pricing["price_cny"] * price_factor, 2)
    return {**row, "pricing": pricing}


def write_feeds(folder: Path, vendors: Sequence[MarketVendor], *, price_factor: float = 1.0) -> Path:
    """One static feed per vendor and the vendors file naming them, in ``folder``; the file's path.
    Rewriting with another ``price_factor`` moves every price (the feeds are replaced whole)."""
    entries = []
    for vendor in vendors:
        feed = folder / f"{vendor.id}.json"
        rows = [_moved(row, price_factor) for row in vendor.rows]
        partial = feed.with_suffix(".partial")
        partial.write_text(json.dumps({"offers": rows}), encoding="utf-8")
        partial.replace(feed)  # a refresh reading meanwhile sees the old feed or the new, never half
        entries.append(
            f'[[vendors]]\nid = "{vendor.id}"\nname = "{vendor.id}"\nregion = "{vendor.region}"\n'
            f'city = "{vendor.city}"\nformat = "static"\npath = "{feed.name}"\n'
        )
    path = folder / "vendors.toml"
    path.write_text("\n".join(entries), encoding="utf-8")
    return path


def parse_catalog(vendors: Sequence[MarketVendor]) -> list[Offer]:
    """The offers the service would hold: every feed through the static adapter's normalization."""
    offers: list[Offer] = []
    for vendor in vendors:
        config = VendorConfig(
            id=vendor.id, name=vendor.id, region=vendor.region, city=vendor.city, format="static"
        )
        body = json.dumps({"offers": list(vendor.rows)}).encode()
        result = parse_static(body, config, AdapterContext(), source="bench")
        offers.extend(result.offers)
    return offers
