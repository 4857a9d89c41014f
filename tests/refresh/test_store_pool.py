"""A refresh of more vendors than the Redis pool has connections stores every vendor.

Redis is reached through a link that delays each request (``tests.slow_link``), so a vendor's write holds
its pooled connection for several delays, longer than a caller may wait for one (the store deadline):
vendors all writing at once would leave the last ones with "no free connection in the pool".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from schemas.offer import CardHourPricing
from service.services import build_services, store_write_slots
from service.settings import Settings
from service.store.redis import RedisPriceStore
from tests.adapters.fake_vendor import FakeVendor
from tests.builders import card_hour_feed
from tests.servers import write_vendors_file
from tests.slow_link import slow_link

pytestmark = pytest.mark.redis

VENDORS = [f"js-pool-{index:02d}" for index in range(12)]
POOL_CONNECTIONS = 4
LINK_DELAY_S = 0.05  # each request's trip to Redis
POOL_WAIT_S = 0.02  # the store deadline: the longest a caller waits for a pooled connection


async def test_a_refresh_of_more_vendors_than_pool_connections_stores_every_vendor(
    fake_vendor: FakeVendor,
    tmp_path: Path,
    redis_url: str,
    redis_namespace: str,
    redis_store: RedisPriceStore,
) -> None:
    for index, vendor in enumerate(VENDORS):
        fake_vendor.publish(f"/{vendor}.json", card_hour_feed({"4090": 8.0 + index}))
    vendors_file = write_vendors_file(tmp_path, fake_vendor.base_url, VENDORS, timeout_s=10)
    async with slow_link(redis_url, LINK_DELAY_S) as far_redis:
        settings = Settings(
            redis_url=far_redis,
            redis_namespace=redis_namespace,
            vendors_file=vendors_file,
            redis_max_connections=POOL_CONNECTIONS,
            store_deadline_s=POOL_WAIT_S,
        )
        services = build_services(settings)
        try:
            report = await services.refresher.refresh()
        finally:
            await services.aclose()

    assert [(outcome.vendor, outcome.error) for outcome in report.vendors if not outcome.ok] == []
    stored = await redis_store.read()  # read directly, not through the slow link
    prices = {
        vendor: [
            offer.pricing.cny_per_card_hour for offer in offers if isinstance(offer.pricing, CardHourPricing)
        ]
        for vendor, offers in stored.offers_by_vendor.items()
    }
    assert prices == {vendor: [8.0 + index] for index, vendor in enumerate(VENDORS)}
    assert all(stored.statuses[vendor].last_success_at is not None for vendor in VENDORS)
    assert report.version == stored.version


def test_a_refresh_writes_on_half_the_pool_at_most() -> None:
    assert [store_write_slots(Settings(redis_max_connections=size)) for size in (1, 2, 4, 32)] == [
        1,
        1,
        2,
        16,
    ]
