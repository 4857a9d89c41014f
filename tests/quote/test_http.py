"""``POST /quote`` through HTTP on the app over the bundled reference catalog (embedded store)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from tests.examples import JIANGSU_EXAMPLE

Client = AsyncTestClient[Any]


async def test_jiangsu_article_example_end_to_end(client: Client) -> None:
    response = await client.post("/quote", json=JIANGSU_EXAMPLE)
    assert response.status_code == 200
    body = response.json()
    quotes = {quote["cards"]: quote for quote in body["quotes"]}
    assert quotes[1]["cost_cny"]["expected"] == 384.0
    assert quotes[1]["hours"]["expected"] == 48.0
    assert quotes[4]["hours"] == {"low": 15.0, "expected": 16.0, "high": 17.14}
    assert quotes[4]["cost_cny"]["expected"] == 512.0
    assert [quote["cards"] for quote in body["quotes"]] == [1, 4]
    assert body["cheapest"] == "js-suzhou-ref:4090@1"
    assert body["snapshot"]["version"] >= 1
    assert "¥384.00" in body["summary"]

    by_time = (await client.post("/quote", json={**JIANGSU_EXAMPLE, "rank_by": "time"})).json()
    assert [quote["cards"] for quote in by_time["quotes"]] == [4, 1]


async def test_full_catalog_quote_in_chinese(client: Client) -> None:
    response = await client.post(
        "/quote", json={"workload": {"gpu_hours": 100, "reference_gpu": "rtx4090"}, "lang": "zh", "limit": 5}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["summary"].startswith("推荐：")
    assert len(body["quotes"]) >= 5
    ids = {quote["id"] for quote in body["quotes"]}
    assert {body["cheapest"], body["fastest"], body["recommended"]} <= ids


async def test_nothing_fits_is_200_with_counts(client: Client) -> None:
    response = await client.post(
        "/quote", json={"workload": {"gpu_hours": 48}, "gpus": ["h100"], "card_counts": [1]}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["quotes"] == []
    assert body["excluded"]["filters"] > 0


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"workload": {"gpu_hours": 0}}, 422, "workload.gpu_hours"),
        ({"workload": {"gpu_hours": 1}, "card_counts": []}, 422, "card_counts"),
        ({"workload": {"gpu_hours": 1}, "card_counts": [2048]}, 422, "card_counts[0]"),
        ({"workload": {"gpu_hours": 1}, "scaling": {"4": [3.2, 2.8]}}, 422, "scaling"),
        ({"workload": {"gpu_hours": 1, "reference_gpu": "rtx9999"}}, 422, "workload.reference_gpu"),
        ({"workload": {"gpu_hours": 1}, "regions": ["beijing"]}, 422, "regions"),
        ({"workload": {"gpu_hours": 1}, "surprise": True}, 422, "surprise"),
    ],
)
async def test_bad_input_is_a_4xx_naming_the_field(
    client: Client, body: dict[str, object], status: int, field: str
) -> None:
    response = await client.post("/quote", json=body)
    assert response.status_code == status
    problem = response.json()
    assert response.headers["content-type"].startswith("application/problem+json")
    assert any(field in (error.get("field") or "") or field in error["reason"] for error in problem["errors"])


async def test_unknown_gpu_lists_the_valid_ones(client: Client) -> None:
    response = await client.post("/quote", json={"workload": {"gpu_hours": 1, "reference_gpu": "rtx9999"}})
    assert "valid: a100-40g" in response.json()["errors"][0]["reason"]


async def test_infinite_hours_are_rejected(client: Client) -> None:
    response = await client.post(
        "/quote", content=b'{"workload": {"gpu_hours": 1e400}}', headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert "gpu_hours" in json.dumps(response.json())


async def test_malformed_json_is_a_400(client: Client) -> None:
    response = await client.post(
        "/quote", content=b'{"workload": {"gpu_hours": 4', headers={"content-type": "application/json"}
    )
    assert response.status_code == 400
    assert "truncated" in response.json()["detail"]


async def test_a_body_over_64_kib_is_refused(client: Client) -> None:
    padding = ["rtx4090"] * 10_000
    response = await client.post("/quote", json={"workload": {"gpu_hours": 1}, "gpus": padding})
    assert response.status_code == 413
