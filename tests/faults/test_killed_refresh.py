"""A refresh killed half-way (SIGKILL while one vendor's feed hangs) leaves every vendor's offers whole:
the vendors written before the kill have their new set, the rest keep their previous one, none a mix."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from service.store.redis import RedisPriceStore, connect_redis
from tests.adapters.fake_vendor import FakeVendor
from tests.builders import card_hour_feed
from tests.servers import GPUQUOTE, write_vendors_file

pytestmark = pytest.mark.redis

VENDORS = ["fast-a", "fast-b", "slow-c"]
OLD = {"4090-1": 5.0, "4090-2": 5.1, "4090-3": 5.2}
NEW = {"4090-1": 6.0, "4090-2": 6.1, "4090-3": 6.2}


def _refresh_command(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [GPUQUOTE, "refresh"],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


async def _prices_by_vendor(store: RedisPriceStore) -> dict[str, dict[str, float]]:
    contents = await store.read()
    return {
        vendor: {o.sku: o.pricing.cny_per_card_hour for o in offers}  # type: ignore[union-attr]
        for vendor, offers in contents.offers_by_vendor.items()
    }


def _fast_written(prices: dict[str, dict[str, float]]) -> bool:
    return all(prices.get(vendor) == NEW for vendor in VENDORS if vendor.startswith("fast-"))


async def test_killed_refresh_leaves_every_vendor_whole(
    fake_vendor: FakeVendor, tmp_path: Path, redis_url: str, redis_namespace: str
) -> None:
    vendors_file = write_vendors_file(tmp_path, fake_vendor.base_url, VENDORS)
    env = {
        "GPUQUOTE_REDIS_URL": redis_url,
        "GPUQUOTE_REDIS_NAMESPACE": redis_namespace,
        "GPUQUOTE_VENDORS_FILE": str(vendors_file),
        "GPUQUOTE_REFRESH_LOCK_TTL_S": "3",
    }
    for vendor in VENDORS:
        fake_vendor.publish(f"/{vendor}.json", card_hour_feed(OLD))
    first = _refresh_command(env)
    first_output = first.communicate(timeout=60)[0]
    assert first.returncode == 0, first_output

    for vendor in VENDORS:
        fake_vendor.publish(
            f"/{vendor}.json", card_hour_feed(NEW), delay_s=30.0 if vendor == "slow-c" else 0.0
        )
    second = _refresh_command(env)
    store = RedisPriceStore(connect_redis(redis_url), namespace=redis_namespace)
    try:
        # The fast vendors are written concurrently, in no set order: wait for both before the kill.
        deadline = time.monotonic() + 30
        while not _fast_written(await _prices_by_vendor(store)):
            assert time.monotonic() < deadline, "fast vendors were never written"
            await asyncio.sleep(0.05)
        second.send_signal(signal.SIGKILL)
        second.wait(timeout=10)
        if second.stdout:
            second.stdout.close()

        prices = await _prices_by_vendor(store)
        assert prices == {"fast-a": NEW, "fast-b": NEW, "slow-c": OLD}
        assert (await store.read()).statuses["slow-c"].last_error is None

        # The dead refresher's lock expires; the next run completes.
        fake_vendor.publish("/slow-c.json", card_hour_feed(NEW))
        await asyncio.sleep(3.2)
        third = _refresh_command(env)
        output = third.communicate(timeout=60)[0]
        assert third.returncode == 0, output
        assert await _prices_by_vendor(store) == {vendor: NEW for vendor in VENDORS}
    finally:
        await store.aclose()
