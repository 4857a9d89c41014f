"""A small catalog of its own for the offer-listing tests: one vendor per pricing model's corner case.

``js-changzhou-t`` (fresh: its file states no ``observed_at``) sells, per card-hour across models:

=================  ==========================================  =================  =========  =====
sku                pricing                                     ¥ per card-hour    max cards  stock
=================  ==========================================  =================  =========  =====
l20                card-hour ¥3.30, 4 cards a machine          3.30               4          6
a800-node          node-hour ¥90 + ¥6 premium + ¥2 storage, 8  12.25              32         —
                   cards a node, at most 4 nodes
4090x2             bundle of 2 at ¥7.10, up to 3 bundles       3.55               6          4
4090-week          ¥420 a week per card, up to 4 cards         2.50               4          —
h20-spot           card-hour ¥4.40, spot                       4.40               8          10
=================  ==========================================  =================  =========  =====

``js-yangzhou-old`` was observed on 2024-06-01 (its ``observed_at``), so its one price, a 4090 at ¥2.20 per
card-hour, is stale.
"""

from __future__ import annotations

import json
from pathlib import Path

from service.settings import Settings

FRESH_OFFERS = {
    "offers": [
        {"sku": "l20", "gpu": "L20", "available_cards": 6,
         "pricing": {"kind": "card_hour", "price_cny": 3.3, "max_cards": 4}},
        {"sku": "a800-node", "gpu": "A800 80G", "interconnect": "infiniband",
         "pricing": {"kind": "node_hour", "price_cny": 90.0, "cards_per_node": 8, "max_nodes": 4,
                     "network_premium_cny": 6.0, "storage_cny": 2.0}},
        {"sku": "4090x2", "gpu": "RTX 4090", "available_cards": 4,
         "pricing": {"kind": "bundle", "cards": 2, "price_cny": 7.1, "max_bundles": 3}},
        {"sku": "4090-week", "gpu": "RTX 4090",
         "pricing": {"kind": "term", "period": "week", "price_cny": 420.0, "cards": 1, "max_units": 4}},
        {"sku": "h20-spot", "gpu": "H20", "spot": True, "available_cards": 10,
         "pricing": {"kind": "card_hour", "price_cny": 4.4}},
    ]
}  # fmt: skip
OLD_OFFERS = {
    "observed_at": "2024-06-01T00:00:00+08:00",
    "offers": [{"sku": "4090", "gpu": "RTX 4090", "pricing": {"kind": "card_hour", "price_cny": 2.2}}],
}

PRICES = {
    "js-changzhou-t:l20": 3.3,
    "js-changzhou-t:a800-node": 12.25,
    "js-changzhou-t:4090x2": 3.55,
    "js-changzhou-t:4090-week": 2.5,
    "js-changzhou-t:h20-spot": 4.4,
    "js-yangzhou-old:4090": 2.2,
}

_VENDORS = """
[[vendors]]
id = "js-changzhou-t"
name = "Changzhou test cloud"
region = "jiangsu"
city = "changzhou"
format = "static"
path = "changzhou.json"

[[vendors]]
id = "js-yangzhou-old"
name = "Yangzhou old prices"
region = "jiangsu"
city = "yangzhou"
format = "static"
path = "yangzhou.json"
"""


def write_listing_catalog(folder: Path) -> Path:
    """The two vendors' files in ``folder``; returns the vendors file."""
    (folder / "changzhou.json").write_text(json.dumps(FRESH_OFFERS), encoding="utf-8")
    (folder / "yangzhou.json").write_text(json.dumps(OLD_OFFERS), encoding="utf-8")
    vendors = folder / "vendors.toml"
    vendors.write_text(_VENDORS, encoding="utf-8")
    return vendors


def listing_settings(folder: Path, **overrides: object) -> Settings:
    return Settings(vendors_file=write_listing_catalog(folder), **overrides)  # type: ignore[arg-type]
