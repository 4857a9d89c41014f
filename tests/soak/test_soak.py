"""A bounded soak on loopback: steady /quote and /offers load while refreshes rewrite every vendor's prices.

Every refresh moves all of a vendor's prices to a new generation (sku base price + generation), so a torn
read — a response mixing two writes of one vendor — shows up as two generations of one vendor in one
response. The run must end with zero 5xx and zero torn reads. Length: ``GPUQUOTE_SOAK_S`` (default 30 s).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests.adapters.fake_vendor import FakeVendor
from tests.builders import card_hour_feed
from tests.servers import gpuquote_server, write_vendors_file

pytestmark = [pytest.mark.slow, pytest.mark.redis]

VENDORS = ["soak-a", "soak-b", "soak-c"]
SKU_BASE_CNY = {"s1": 100.0, "s2": 200.0, "s3": 300.0}
ADMIN_KEY = "soak-admin-key"
QUOTE = {"workload": {"gpu_hours": 10}, "card_counts": [1, 2, 4, 8], "limit": 30}
CONCURRENCY = 6


def _feed(generation: int) -> bytes:
    return card_hour_feed({sku: base + generation for sku, base in SKU_BASE_CNY.items()})


def _generation(sku: str, price_cny: float) -> int:
    return round(price_cny - SKU_BASE_CNY[sku])


class Tally:
    def __init__(self) -> None:
        self.statuses: Counter[tuple[str, int]] = Counter()
        self.torn: list[str] = []
        self.refreshes = 0


def _check_offers(body: dict[str, object], tally: Tally) -> None:
    generations: dict[str, set[int]] = {}
    for item in body["items"]:  # type: ignore[attr-defined]
        price = item["pricing"]["cny_per_card_hour"]
        generations.setdefault(item["vendor"], set()).add(_generation(item["sku"], price))
    tally.torn.extend(f"offers {vendor}: {sorted(g)}" for vendor, g in generations.items() if len(g) > 1)


def _check_quote(body: dict[str, object], tally: Tally) -> None:
    generations: dict[str, set[int]] = {}
    for quote in body["quotes"]:  # type: ignore[attr-defined]
        sku = quote["offer_id"].split(":", 1)[1]
        card_hour_cny = quote["hourly_rate_cny"] / quote["billed_cards"]
        generations.setdefault(quote["vendor"], set()).add(_generation(sku, card_hour_cny))
    tally.torn.extend(f"quote {vendor}: {sorted(g)}" for vendor, g in generations.items() if len(g) > 1)


async def _load(client: httpx.AsyncClient, stop_at: float, worker: int, tally: Tally) -> None:
    turn = worker
    while time.monotonic() < stop_at:
        turn += 1
        if turn % 3:
            response = await client.post("/quote", json=QUOTE)
            route = "/quote"
        else:
            response = await client.get("/offers", params={"limit": 1000})
            route = "/offers"
        tally.statuses[(route, response.status_code)] += 1
        if response.status_code == 200:
            (_check_quote if route == "/quote" else _check_offers)(response.json(), tally)


async def _refresh_loop(client: httpx.AsyncClient, feeds: FakeVendor, stop_at: float, tally: Tally) -> None:
    generation = 0
    while time.monotonic() < stop_at:
        generation += 1
        for vendor in VENDORS:
            feeds.publish(f"/{vendor}.json", _feed(generation))
        response = await client.post("/admin/refresh", headers={"X-API-Key": ADMIN_KEY}, timeout=30)
        tally.statuses[("/admin/refresh", response.status_code)] += 1
        tally.refreshes += response.status_code == 200
        await asyncio.sleep(0.3)


def test_steady_load_with_concurrent_refreshes(
    fake_vendor: FakeVendor, tmp_path: Path, redis_url: str, redis_namespace: str
) -> None:
    duration_s = float(os.environ.get("GPUQUOTE_SOAK_S", "30"))
    for vendor in VENDORS:
        fake_vendor.publish(f"/{vendor}.json", _feed(0))
    env = {
        "GPUQUOTE_REDIS_URL": redis_url,
        "GPUQUOTE_REDIS_NAMESPACE": redis_namespace,
        "GPUQUOTE_VENDORS_FILE": str(write_vendors_file(tmp_path, fake_vendor.base_url, VENDORS)),
        "GPUQUOTE_ADMIN_API_KEYS": ADMIN_KEY,
        "GPUQUOTE_QUARANTINE_CHANGE_RATIO": "100",
        "GPUQUOTE_LOG_LEVEL": "WARNING",
    }
    tally = Tally()

    async def run(base_url: str) -> float:
        limits = httpx.Limits(max_connections=CONCURRENCY + 2)
        async with httpx.AsyncClient(base_url=base_url, timeout=30, limits=limits) as client:
            started = time.monotonic()
            stop_at = started + duration_s
            await asyncio.gather(
                _refresh_loop(client, fake_vendor, stop_at, tally),
                *(_load(client, stop_at, worker, tally) for worker in range(CONCURRENCY)),
            )
            return time.monotonic() - started

    with gpuquote_server(env) as base_url:
        elapsed_s = asyncio.run(run(base_url))

    served = sum(count for (route, _), count in tally.statuses.items() if route != "/admin/refresh")
    errors = {key: count for key, count in tally.statuses.items() if key[1] >= 500}
    print(
        f"\nsoak: {served} requests in {elapsed_s:.1f} s = {served / elapsed_s:.0f} req/s, "
        f"{tally.refreshes} refreshes, statuses {dict(tally.statuses)}, torn reads {len(tally.torn)}"
    )
    assert errors == {}
    assert tally.torn == []
    assert tally.refreshes >= 3
    assert all(status == 200 for (_, status) in tally.statuses)
