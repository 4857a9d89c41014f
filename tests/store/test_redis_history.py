"""Redis history layout: one list per offer; an older release's per-offer stream is still read."""

from __future__ import annotations

from datetime import UTC, datetime

from schemas.offer import CardHourPricing
from schemas.vendor import PriceChange
from service.store.base import offers_encoder
from service.store.redis import RedisPriceStore
from tests.builders import make_offer, ok_status


async def test_a_stream_from_an_older_release_is_read_before_the_new_entries(
    redis_store: RedisPriceStore, redis_namespace: str
) -> None:
    # An older release left the 7.00 listing in a stream; this release appends the 8.00 change to a list.
    old = PriceChange(
        offer_id="js-test:4090",
        at=datetime(2024, 1, 1, tzinfo=UTC),
        pricing=CardHourPricing(cny_per_card_hour=7.0),
        change="new",
    )
    legacy_key = f"{redis_namespace}:{{prices}}:history:js-test:4090"
    await redis_store.client.xadd(legacy_key, {"e": offers_encoder.encode(old)})
    offer = make_offer(pricing=CardHourPricing(cny_per_card_hour=8.0))
    await redis_store.write_vendor("js-test", [offer], ok_status("js-test"))
    history = await redis_store.history("js-test:4090")
    assert [(entry.change, entry.pricing) for entry in history] == [
        ("new", CardHourPricing(cny_per_card_hour=7.0)),
        ("new", CardHourPricing(cny_per_card_hour=8.0)),
    ]
    assert [entry.change for entry in await redis_store.history("js-test:4090", limit=1)] == ["new"]


async def test_a_history_key_of_the_wrong_type_is_replaced_on_the_next_change(
    redis_store: RedisPriceStore, redis_namespace: str
) -> None:
    key = f"{redis_namespace}:{{prices}}:changes:js-test:4090"
    await redis_store.client.set(key, b"garbage")
    assert await redis_store.history("js-test:4090") == []  # WRONGTYPE: a fault, not an error
    offer = make_offer(pricing=CardHourPricing(cny_per_card_hour=8.0))
    await redis_store.write_vendor("js-test", [offer], ok_status("js-test"))
    history = await redis_store.history("js-test:4090")
    assert [(entry.change, entry.pricing) for entry in history] == [("new", offer.pricing)]
