"""Input that once made the service answer 500: each is a 4xx problem naming what was wrong."""

from __future__ import annotations

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from service.store.base import PriceStore
from service.store.memory import MemoryPriceStore

JSON = {"Content-Type": "application/json"}
Client = AsyncTestClient[Litestar]


@pytest.fixture
def store() -> PriceStore:
    """Only the embedded store: none of these reaches the store."""
    return MemoryPriceStore()


@pytest.mark.parametrize("opener", [b"[", b'{"a":'])
async def test_deeply_nested_body_is_400_naming_the_body(
    client: Client,
    opener: bytes,
) -> None:
    closer = b"]" if opener == b"[" else b"}"
    body = b'{"workload": ' + opener * 1000 + b"1" + closer * 1000 + b"}"
    response = await client.post("/quote", content=body, headers=JSON)
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.json()["errors"][0]["field"] == "body"
    assert "deep" in response.json()["errors"][0]["reason"]


async def test_nul_byte_in_a_static_path_is_404(client: Client) -> None:
    response = await client.get("/static/app.js%00.png")
    assert response.status_code == 404
    assert (await client.get("/static/app.js")).status_code == 200


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "text/json"])
async def test_quote_body_that_is_not_json_is_415(
    client: Client,
    content_type: str,
) -> None:
    response = await client.post(
        "/quote", content=b'{"workload": {"gpu_hours": 1}}', headers={"Content-Type": content_type}
    )
    assert response.status_code == 415
    assert response.json()["errors"][0]["field"] == "body"


async def test_quote_body_without_a_content_type_is_415(client: Client) -> None:
    response = await client.post("/quote", content=b'{"workload": {"gpu_hours": 1}}')
    assert "content-type" not in {name.lower() for name in response.request.headers}
    assert response.status_code == 415
    assert response.json()["errors"][0] == {
        "field": "body",
        "reason": "send the body as application/json; the request has no Content-Type",
        "in": "body",
    }


async def test_json_media_types_are_accepted(client: Client) -> None:
    for content_type in ["application/json", "application/json; charset=utf-8", "application/vnd.x+json"]:
        response = await client.post(
            "/quote", content=b'{"workload": {"gpu_hours": 1}}', headers={"Content-Type": content_type}
        )
        assert response.status_code == 200, (content_type, response.text)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b'{"workload": {"gpu_hours": 1, "gpu_hours": 1000}}', "workload.gpu_hours"),
        (b'{"workload": {"gpu_hours": 1}, "limit": 1, "limit": 2}', "limit"),
        (b'{"workload": {"gpu_hours": 1}, "workload": {"gpu_hours": 2}}', "workload"),
        (b'{"workload": {"gpu_hours": 1}, "scaling": {"4": [2, 3], "4": [3, 4]}}', "scaling.4"),
    ],
)
async def test_duplicate_keys_are_rejected_naming_the_key(
    client: Client,
    body: bytes,
    field: str,
) -> None:
    response = await client.post("/quote", content=body, headers=JSON)
    assert response.status_code == 400
    problem = response.json()
    assert problem["errors"][0]["field"] == field
    assert "duplicate" in problem["errors"][0]["reason"]
