"""The read side over the reference catalog, through HTTP, on both stores."""

from __future__ import annotations

import re
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from tests.api.conftest import ADMIN_KEY

Client = AsyncTestClient[Any]


async def test_offers_carry_every_field_a_caller_needs(client: Client) -> None:
    response = await client.get("/offers")
    assert response.status_code == 200
    page = response.json()
    assert page["total"] == 20
    assert page["limit"] == 100 and page["offset"] == 0
    for offer in page["items"]:
        for field in ("vendor", "region", "city", "gpu", "pricing", "fetched_at", "source", "currency"):
            assert offer[field], field
        assert offer["pricing"]["kind"] in {"card_hour", "node_hour", "bundle", "term"}


async def test_offers_filter_by_gpu_spelling_region_and_pricing(client: Client) -> None:
    response = await client.get(
        "/offers", params={"gpu": "RTX 4090", "region": "jiangsu", "pricing": "bundle"}
    )
    items = response.json()["items"]
    assert [item["id"] for item in items] == ["js-nanjing-ref:4090x4"]
    assert items[0]["pricing"]["cny_per_bundle_hour"] == 22.0


async def test_offers_filters_take_several_values(client: Client) -> None:
    response = await client.get("/offers", params=[("vendor", "js-wuxi-ref"), ("vendor", "sz-cluster-ref")])
    vendors = {item["vendor"] for item in response.json()["items"]}
    assert vendors == {"js-wuxi-ref", "sz-cluster-ref"}
    assert response.json()["total"] == 7


async def test_offers_paginate(client: Client) -> None:
    first = (await client.get("/offers", params={"limit": 3})).json()
    second = (await client.get("/offers", params={"limit": 3, "offset": 3})).json()
    assert len(first["items"]) == 3 and len(second["items"]) == 3
    assert {item["id"] for item in first["items"]}.isdisjoint(item["id"] for item in second["items"])
    beyond = (await client.get("/offers", params={"offset": 500})).json()
    assert beyond["items"] == [] and beyond["total"] == 20


@pytest.mark.parametrize(
    ("params", "field", "reason_part"),
    [
        ({"gpu": "RTX 9090"}, "gpu", "no catalog model"),
        ({"gpu": "A100"}, "gpu", "ambiguous"),
        ({"region": "beijing"}, "region", "valid: jiangsu, shenzhen"),
        ({"vendor": "nobody"}, "vendor", "js-suzhou-ref"),
        ({"pricing": "spot"}, "pricing", "spot"),
        ({"limit": 0}, "limit", "must be a whole number ≥ 1"),
        ({"limit": 1001}, "limit", "must be a whole number ≤ 1000"),
        ({"offset": -1}, "offset", "must be a whole number ≥ 0"),
        ({"limit": "ten"}, "limit", "must be a whole number, got text"),
    ],
)
async def test_bad_filters_get_a_4xx_naming_the_parameter(
    client: Client, params: dict[str, Any], field: str, reason_part: str
) -> None:
    response = await client.get("/offers", params=params)
    assert response.status_code in {400, 422}
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["status"] == response.status_code
    assert problem["errors"][0]["field"] == field
    assert reason_part in problem["errors"][0]["reason"]


async def test_one_offer_and_a_missing_one(client: Client) -> None:
    offer = (await client.get("/offers/js-suzhou-ref:4090")).json()
    assert offer["pricing"] == {
        "kind": "card_hour",
        "cny_per_card_hour": 8.0,
        "max_cards": 8,
        "granularity_s": 3600,
        "min_billed_hours": 0.0,
    }
    assert offer["label"] == "illustrative reference price"
    missing = await client.get("/offers/js-suzhou-ref:9999")
    assert missing.status_code == 404
    assert missing.json()["errors"] == [{"field": "offer_id", "reason": "no offer 'js-suzhou-ref:9999'"}]


async def test_history_lists_the_first_price(client: Client) -> None:
    history = (await client.get("/offers/sz-cluster-ref:h800-ib-node/history")).json()
    assert [entry["change"] for entry in history["changes"]] == ["new"]
    assert history["changes"][0]["pricing"]["cny_per_node_hour"] == 300.0
    # Dated when the reference prices were observed (the file's observed_at), not when the server started.
    assert history["changes"][0]["at"] == "2024-12-31T16:00:00Z"
    assert (await client.get("/offers/nope:nope/history")).status_code == 404


async def test_vendors_report_freshness(client: Client) -> None:
    body = (await client.get("/vendors")).json()
    by_id = {vendor["vendor"]: vendor for vendor in body["vendors"]}
    assert set(by_id) == {
        "js-suzhou-ref",
        "js-nanjing-ref",
        "js-wuxi-ref",
        "sz-nanshan-ref",
        "sz-cluster-ref",
    }
    assert by_id["js-nanjing-ref"]["offer_count"] == 6
    assert by_id["js-nanjing-ref"]["last_success_at"]
    # The reference catalog was observed on 2025-01-01 (its observed_at): every price is past the max age,
    # so every vendor is stale here as in every quote, however recent its last success.
    nanjing = by_id["js-nanjing-ref"]
    assert nanjing["stale"] is True
    assert nanjing["stale_offers"] == 6
    assert nanjing["oldest_price_at"] == "2024-12-31T16:00:00Z"
    assert re.fullmatch(r"\d{1,3}(,\d{3})* days", nanjing["oldest_price_age"]), nanjing["oldest_price_age"]
    assert nanjing["cities"] == ["nanjing"]
    assert all(vendor["stale"] for vendor in body["vendors"])


async def test_gpu_catalog(client: Client) -> None:
    gpus = {gpu["id"]: gpu for gpu in (await client.get("/gpus")).json()["gpus"]}
    assert gpus["rtx4090"]["perf_index"] == 1.0
    assert gpus["h800"]["memory_gb"] == 80 and gpus["h800"]["perf_index"] == 6.0
    assert gpus["a100-80g"]["perf_index"] == 1.9


async def test_health_and_ready(client: Client) -> None:
    assert (await client.get("/health")).json() == {"status": "ok"}
    ready = await client.get("/ready")
    assert ready.status_code == 200
    assert ready.json()["status"] == "ready" and ready.json()["store_reachable"] is True


async def test_admin_refresh_needs_the_right_key(client: Client) -> None:
    assert (await client.post("/admin/refresh")).status_code == 401
    wrong = await client.post("/admin/refresh", headers={"X-API-Key": "guess"})
    assert wrong.status_code == 403
    assert wrong.json()["errors"][0]["field"] == "X-API-Key"
    done = await client.post(
        "/admin/refresh", params={"vendor": "js-wuxi-ref"}, headers={"X-API-Key": ADMIN_KEY}
    )
    assert done.status_code == 200
    assert [(v["vendor"], v["ok"], v["offers"]) for v in done.json()["vendors"]] == [("js-wuxi-ref", True, 5)]
    unknown = await client.post("/admin/refresh", params={"vendor": "x"}, headers={"X-API-Key": ADMIN_KEY})
    assert unknown.status_code == 422
    assert unknown.json()["errors"][0]["field"] == "vendor"


async def test_unknown_route_is_a_problem_not_a_500(client: Client) -> None:
    response = await client.get("/nothing-here")
    assert response.status_code == 404
    assert response.json()["status"] == 404
