"""A vendor taken out of the vendors file is gone: a server started on the new file neither lists nor
quotes it (even while the store still holds it), and a refresh removes it from the store, on both stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.services import build_services
from service.settings import Settings
from service.store.base import PriceStore
from service.store.redis import RedisPriceStore, connect_redis
from tests.builders import card_hour_feed

ADMIN_KEY = "removal-admin-key"
QUOTE = {"workload": {"gpu_hours": 10}, "card_counts": [1]}


def _vendors_file(folder: Path, vendors: list[str]) -> Path:
    for vendor in vendors:
        (folder / f"{vendor}.json").write_bytes(card_hour_feed({f"{vendor}-1": 5.0, f"{vendor}-2": 6.0}))
    path = folder / f"vendors-{'-'.join(vendors)}.toml"
    path.write_text(
        "".join(
            f'[[vendors]]\nid = "{vendor}"\nname = "{vendor}"\nregion = "jiangsu"\ncity = "suzhou"\n'
            f'format = "static"\npath = "{vendor}.json"\n\n'
            for vendor in vendors
        ),
        encoding="utf-8",
    )
    return path


def _server(store: PriceStore, vendors_file: Path, request: pytest.FixtureRequest) -> Any:
    """A server over ``store``'s data: the same memory store (one process), or its own Redis client on
    the same namespace (a server closes its store when it stops)."""
    settings = Settings(vendors_file=vendors_file, admin_api_keys=(ADMIN_KEY,))
    if isinstance(store, RedisPriceStore):
        store = RedisPriceStore(
            connect_redis(request.getfixturevalue("redis_url")), namespace=store.namespace
        )
    return create_app(services=build_services(settings, store=store))


async def test_a_vendor_out_of_the_file_is_neither_served_nor_kept(
    store: PriceStore, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    both = _vendors_file(tmp_path, ["keep", "gone"])
    async with AsyncTestClient(_server(store, both, request)) as old:  # loads both into the empty store
        assert {o["vendor"] for o in (await old.get("/offers")).json()["items"]} == {"keep", "gone"}

    only_keep = _vendors_file(tmp_path, ["keep"])
    async with AsyncTestClient(_server(store, only_keep, request)) as fresh:
        assert set((await store.read()).offers_by_vendor) == {"keep", "gone"}  # not refreshed yet
        offers = (await fresh.get("/offers")).json()["items"]
        vendors = [v["vendor"] for v in (await fresh.get("/vendors")).json()["vendors"]]
        quoted = {q["vendor"] for q in (await fresh.post("/quote", json=QUOTE)).json()["quotes"]}
        unknown = await fresh.post("/quote", json={**QUOTE, "vendors": ["gone"]})
        assert (await fresh.get("/ready")).json()["status"] == "ready"
        refresh = (await fresh.post("/admin/refresh", headers={"X-API-Key": ADMIN_KEY})).json()

    assert {offer["vendor"] for offer in offers} == {"keep"}
    assert vendors == ["keep"]
    assert quoted == {"keep"}
    assert unknown.status_code == 422 and "gone" in unknown.json()["errors"][0]["reason"]
    assert refresh["ok"] is True and refresh["removed"] == ["gone"]
    contents = await store.read()
    assert (set(contents.offers_by_vendor), set(contents.statuses)) == ({"keep"}, {"keep"})
    assert [entry.change for entry in await store.history("gone:gone-1")] == ["new", "removed"]
