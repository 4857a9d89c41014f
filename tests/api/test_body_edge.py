"""The quote body's edge reads a body once and still finds what msgspec lets pass: a key given twice
(however it is written), nesting deeper than any request needs, numbers no parser should convert. The
same rules hold for a command-line flag's JSON and for MCP arguments."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from schemas.quote import QuoteRequest
from service.app import create_app
from service.documents import MAX_DEPTH, UnreadableDocument, find_duplicate, repeated_key
from service.errors import InvalidRequest
from service.inputs import convert_input, decode_json_value
from service.services import build_services
from service.settings import Settings

JSON = {"Content-Type": "application/json"}
PROBLEMS = "https://gpuquote.dev/problems/"
Client = AsyncTestClient[Litestar]


@pytest.fixture
async def app_client() -> AsyncIterator[tuple[Client, Any]]:
    services = build_services(Settings())
    async with AsyncTestClient(create_app(services=services)) as client:
        yield client, services


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (rb'{"workload": {"gpu_hours": 1}, "\u006cimit": 1, "limit": 2}', "limit"),
        (rb'{"workload": {"gpu_hours": 1, "data_city": "a\"b", "data_city": "c"}}', "workload.data_city"),
        (
            rb'{"workload": {"gpu_hours": 1, "speed_ratios": {"h800": 2, "h800": 3}}}',
            "workload.speed_ratios.h800",
        ),
        (b'{"workload": {"gpu_hours": 1}, "cities": ["\xe8\x8b\x8f\xe5\xb7\x9e"], "cities": []}', "cities"),
    ],
)
async def test_a_key_given_twice_is_found_however_it_is_written(
    app_client: tuple[Client, Any], body: bytes, field: str
) -> None:
    client, _ = app_client
    response = await client.post("/quote", content=body, headers=JSON)
    assert response.status_code == 400, response.text
    assert response.json()["type"] == PROBLEMS + "duplicate-key"
    assert response.json()["errors"][0]["field"] == field


async def test_nesting_deeper_than_a_request_needs_is_refused(app_client: tuple[Client, Any]) -> None:
    client, _ = app_client
    deep = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    response = await client.post(
        "/quote", content=b'{"workload": {"gpu_hours": 1}, "x": ' + deep + b"}", headers=JSON
    )
    assert response.status_code == 400 and response.json()["type"] == PROBLEMS + "body-nested-too-deeply"
    shallow = b"[" * 8 + b"]" * 8
    field_fault = await client.post(
        "/quote", content=b'{"workload": {"gpu_hours": 1}, "x": ' + shallow + b"}", headers=JSON
    )
    assert field_fault.status_code == 422 and field_fault.json()["errors"][0]["field"] == "x"


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        (b'{"workload": {"gpu_hours": ' + b"9" * 5000 + b"}}", 422, "workload.gpu_hours"),
        (b'{"workload": {"gpu_hours": 1}, "limit": ' + b"9" * 5000 + b"}", 422, "limit"),
        (b'{"workload": {"gpu_hours": 1}, "limit": 1, "limit": ' + b"9" * 5000 + b"}", 400, "limit"),
    ],
)
async def test_a_5000_digit_integer_is_no_500(
    app_client: tuple[Client, Any], body: bytes, status: int, field: str
) -> None:
    client, _ = app_client
    response = await client.post("/quote", content=body, headers=JSON)
    assert response.status_code == status, response.text
    assert response.json()["errors"][0]["field"] == field


async def test_the_same_bytes_are_answered_from_the_cache(app_client: tuple[Client, Any]) -> None:
    client, services = app_client
    body = b'{"workload": {"gpu_hours": 48}, "gpus": ["rtx4090"], "card_counts": [1, 4]}'
    first = await client.post("/quote", content=body, headers=JSON)
    second = await client.post("/quote", content=body, headers=JSON)
    assert first.json() == second.json()
    assert (services.quote_cache.misses, services.quote_cache.hits) == (1, 1)


@pytest.mark.parametrize(
    ("document", "found"),
    [
        (b'{"a": {"x": 1}, "b": {"x": 2}}', None),  # one key text in two objects: no repeat
        (b'{"a": {"x": 1, "x": 2}}', ("x", "a.x")),
        (b'{"a": [{"x": 1}, {"y": 1, "y": 2}]}', ("y", "a[1].y")),
        (rb'{"a\"b": 1, "a\"b": 2}', ('a"b', 'a"b')),
        # é escaped, then the two bytes of its UTF-8 escaped one by one (another key), then é itself
        ('{"\\u00e9": 1, "\\u00c3\\u00a9": 2, "é": 3}'.encode(), ("é", "é")),
    ],
)
def test_the_key_scan_tells_a_repeat_from_two_objects(document: bytes, found: tuple[str, str] | None) -> None:
    assert find_duplicate(document) == found
    assert repeated_key(document) == found


def test_a_flag_value_and_tool_arguments_read_by_the_same_rules() -> None:
    with pytest.raises(UnreadableDocument) as repeated:
        decode_json_value('{"4": [2.8, 3.2], "4": [3, 4]}')
    assert (repeated.value.kind, repeated.value.field) == ("duplicate_key", "4")
    nested: Any = {"gpu_hours": 1}
    for _ in range(MAX_DEPTH + 1):
        nested = {"deeper": nested}
    with pytest.raises(InvalidRequest) as deep:
        convert_input({"workload": nested}, QuoteRequest)
    assert (deep.value.field, deep.value.reason) == ("arguments", "nested too deeply")
