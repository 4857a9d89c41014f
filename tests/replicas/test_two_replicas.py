"""Two server processes on one Redis: a refresh through one is served by the other once it has rebuilt its
snapshot (the first request after the store moved starts the rebuild and is answered from the held one)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from tests.adapters.fake_vendor import FakeVendor
from tests.builders import card_hour_feed
from tests.servers import gpuquote_server, write_vendors_file

pytestmark = pytest.mark.redis

ADMIN_KEY = "replica-admin-key"
_REBUILD_WAIT_S = 10.0


def _price_served(base_url: str, offer_id: str, expected_cny: float) -> float:
    """The offer's card-hour price as ``base_url`` serves it, asked until it is ``expected_cny`` (a
    rebuild of a few offers takes milliseconds) or the wait runs out."""
    deadline = time.monotonic() + _REBUILD_WAIT_S
    while True:
        price: float = httpx.get(f"{base_url}/offers/{offer_id}").json()["pricing"]["cny_per_card_hour"]
        if price == expected_cny or time.monotonic() > deadline:
            return price
        time.sleep(0.02)


def test_a_refresh_through_one_replica_is_served_by_the_other(
    fake_vendor: FakeVendor, tmp_path: Path, redis_url: str, redis_namespace: str
) -> None:
    fake_vendor.publish("/js-shared.json", card_hour_feed({"4090": 8.0}))
    env = {
        "GPUQUOTE_REDIS_URL": redis_url,
        "GPUQUOTE_REDIS_NAMESPACE": redis_namespace,
        "GPUQUOTE_VENDORS_FILE": str(write_vendors_file(tmp_path, fake_vendor.base_url, ["js-shared"])),
        "GPUQUOTE_ADMIN_API_KEYS": ADMIN_KEY,
    }
    with gpuquote_server(env) as first, gpuquote_server(env) as second:
        assert httpx.get(f"{second}/offers/js-shared:4090").json()["pricing"]["cny_per_card_hour"] == 8.0

        fake_vendor.publish("/js-shared.json", card_hour_feed({"4090": 7.5}))
        refreshed = httpx.post(f"{first}/admin/refresh", headers={"X-API-Key": ADMIN_KEY}, timeout=30)
        assert refreshed.status_code == 200
        assert refreshed.json()["ok"] is True

        assert _price_served(second, "js-shared:4090", 7.5) == 7.5
        history = httpx.get(f"{second}/offers/js-shared:4090/history").json()
        assert [entry["pricing"]["cny_per_card_hour"] for entry in history["changes"]] == [8.0, 7.5]
