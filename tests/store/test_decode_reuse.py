"""A Redis read decodes only the vendors whose stored bytes changed since the last read; the others keep
the offers decoded then. Whatever changed is decoded and checked anew, garbage included."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from schemas.offer import CardHourPricing, Offer
from service.store.redis import RedisPriceStore, connect_redis
from tests.builders import make_offer, ok_status

pytestmark = pytest.mark.redis


def _offers(vendor: str, rate_cny: float) -> list[Offer]:
    return [
        make_offer(vendor, f"sku-{index}", pricing=CardHourPricing(cny_per_card_hour=rate_cny + index))
        for index in range(3)
    ]


def _same_objects(first: Sequence[Offer], second: Sequence[Offer]) -> bool:
    return len(first) == len(second) and all(a is b for a, b in zip(first, second, strict=True))


async def test_unchanged_vendors_keep_their_decoded_offers_and_changed_ones_are_decoded_anew(
    redis_store: RedisPriceStore, redis_url: str, redis_namespace: str
) -> None:
    for vendor, rate_cny in (("js-a", 2.0), ("js-b", 3.0)):
        await redis_store.write_vendor(vendor, _offers(vendor, rate_cny), ok_status(vendor, 3))
    first = await redis_store.read()
    second = await redis_store.read()
    for vendor in ("js-a", "js-b"):
        assert _same_objects(first.offers_by_vendor[vendor], second.offers_by_vendor[vendor])
    assert second.offers_by_vendor["js-b"] is not first.offers_by_vendor["js-b"]  # a list of its own
    returned = second.offers_by_vendor["js-b"]
    assert isinstance(returned, list)
    returned.clear()  # the caller's to change: the next read's offers are whole

    await redis_store.write_vendor("js-a", _offers("js-a", 2.5), ok_status("js-a", 3))
    third = await redis_store.read()
    assert third.offers_by_vendor["js-a"] == _offers("js-a", 2.5)
    assert _same_objects(third.offers_by_vendor["js-b"], first.offers_by_vendor["js-b"])

    raw = connect_redis(redis_url)
    key = f"{redis_namespace}:{{prices}}:vendor:js-b"
    try:
        stored = await raw.get(key)
        assert isinstance(stored, bytes)
        await raw.set(key, b"\x93garbage")  # another writer's bytes: not the ones decoded before
        broken = await redis_store.read()
        assert "js-b" in broken.unreadable_vendors and "js-b" not in broken.offers_by_vendor
        assert broken.faults
        await raw.set(key, stored)
    finally:
        await raw.aclose()
    restored = await redis_store.read()
    assert restored.offers_by_vendor["js-b"] == first.offers_by_vendor["js-b"]
    assert not restored.faults
