"""A static feed's spot rows, served from the loopback vendor: ``spot`` and the interruption rate the
vendor states (``interruptions_per_month``) reach the offer; a rate on a row that is not spot says
nothing the quotes use; a rate that is no rate fails the feed, naming the field."""

from __future__ import annotations

import json

import httpx
import pytest

from adapters import AdapterContext, build_adapter
from adapters.base import VendorFetchError
from tests.adapters.fake_vendor import FakeVendor
from tests.adapters.feeds import vendor


def _row(sku: str, **fields: object) -> dict[str, object]:
    return {"sku": sku, "gpu": "H800", "pricing": {"kind": "card_hour", "price_cny": 7.2}, **fields}


async def _fetch(rows: list[dict[str, object]], fake_vendor: FakeVendor, client: httpx.AsyncClient,
                 context: AdapterContext) -> dict[str, tuple[bool, float | None]]:  # fmt: skip
    url = fake_vendor.publish("/prices.json", json.dumps({"offers": rows}).encode())
    result = await build_adapter(vendor("static", url=url), client=client, context=context).fetch()
    assert result.rejected == []
    return {offer.sku: (offer.spot, offer.spot_interruptions_per_month) for offer in result.offers}


async def test_spot_rows_carry_the_stated_rate(
    fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    rows = [
        _row("stated", spot=True, interruptions_per_month=2.5),
        _row("unstated", spot=True),
        _row("on-demand", interruptions_per_month=4),
        _row("plain"),
    ]
    offers = await _fetch(rows, fake_vendor, client, context)
    assert offers == {
        "stated": (True, 2.5),
        "unstated": (True, None),
        "on-demand": (False, None),
        "plain": (False, None),
    }


@pytest.mark.parametrize("rate", [-1, 1e9, "often"])
async def test_a_rate_that_is_no_rate_fails_the_feed(
    rate: object, fake_vendor: FakeVendor, client: httpx.AsyncClient, context: AdapterContext
) -> None:
    url = fake_vendor.publish(
        "/prices.json",
        json.dumps({"offers": [_row("bad", spot=True, interruptions_per_month=rate)]}).encode(),
    )
    with pytest.raises(VendorFetchError) as caught:
        await build_adapter(vendor("static", url=url), client=client, context=context).fetch()
    assert caught.value.category == "malformed"
    assert "interruptions_per_month" in str(caught.value)
