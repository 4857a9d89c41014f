"""One input contract over HTTP: strict decoding, one status per kind of mistake, sentences for people.

The rule (``service.http.problems``): a field that is wrong — the wrong type, out of range, unknown,
missing, or a name the service does not know — is a 422 ``invalid-request`` naming the field's JSON path
and where it came from (``in``: body or query); a body that cannot be read as one JSON document is a 400
with its own type (malformed JSON has one type, whatever the byte); 415 and 413 keep theirs.

Figures come from the bundled reference catalog: the Suzhou vendor (``js-suzhou-ref``) sells the RTX 4090
at ¥8 per card-hour, Wuxi at ¥5, Nanjing at ¥6.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import AsyncTestClient

Client = AsyncTestClient[Any]
JSON = {"Content-Type": "application/json"}
PROBLEMS = "https://gpuquote.dev/problems/"


@pytest.mark.parametrize("city", ["苏州", "苏州市", "Suzhou", " suzhou "])
async def test_cities_filter_the_quote_to_that_city(client: Client, city: str) -> None:
    body = {
        "workload": {"gpu_hours": 48},
        "gpus": ["rtx4090"],
        "pricing": ["card_hour"],
        "card_counts": [1],
        "cities": [city],
    }
    response = await client.post("/quote", json=body)
    assert response.status_code == 200, response.text
    quotes = response.json()["quotes"]
    # Only Suzhou's RTX 4090 is left: 1 card × 48 h × ¥8 = ¥384.00 (Wuxi's ¥5 would be ¥240.00).
    assert [(q["offer_id"], q["city"], q["cost_cny"]["expected"]) for q in quotes] == [
        ("js-suzhou-ref:4090", "suzhou", 384.0)
    ]


async def test_cities_and_regions_together_and_an_unknown_city(client: Client) -> None:
    body = {"workload": {"gpu_hours": 48}, "gpus": ["rtx4090"], "pricing": ["card_hour"], "card_counts": [1]}
    both = await client.post("/quote", json={**body, "regions": ["江苏"], "cities": ["南京", "苏州"]})
    # Nanjing ¥6 × 48 h = ¥288.00, Suzhou ¥8 × 48 h = ¥384.00; Wuxi (also Jiangsu) is left out.
    assert [(q["city"], q["cost_cny"]["expected"]) for q in both.json()["quotes"]] == [
        ("nanjing", 288.0),
        ("suzhou", 384.0),
    ]

    unknown = await client.post("/quote", json={**body, "cities": ["北京"]})
    assert unknown.status_code == 422
    (error,) = unknown.json()["errors"]
    assert error == {
        "field": "cities",
        "reason": "unknown city '北京'; valid: nanjing, shenzhen, suzhou, wuxi",
        "in": "body",
    }


async def test_a_string_is_not_a_number(client: Client) -> None:
    response = await client.post("/quote", json={"workload": {"gpu_hours": "48"}})
    assert response.status_code == 422
    problem = response.json()
    assert problem["type"] == PROBLEMS + "invalid-request"
    assert problem["detail"] == "workload.gpu_hours: must be a number, got text"
    assert problem["errors"] == [
        {"field": "workload.gpu_hours", "reason": "must be a number, got text", "in": "body"}
    ]
    assert (await client.post("/quote", json={"workload": {"gpu_hours": 48}})).status_code == 200


@pytest.mark.parametrize(
    ("body", "field", "reason"),
    [
        ({"workload": {"gpu_hours": 0}}, "workload.gpu_hours", "must be a number ≥ 0.001"),
        ({"workload": {"gpu_hours": True}}, "workload.gpu_hours", "must be a number, got true/false"),
        ({"workload": {"gpu_hours": 1}, "limit": 1.5}, "limit", "must be a whole number, got a decimal number"),
        ({"workload": {"gpu_hours": 1}, "limit": 0}, "limit", "must be a whole number ≥ 1"),
        ({"workload": {"gpu_hours": 1}, "card_counts": [4, 2048]}, "card_counts[1]", "must be a whole number ≤ 1024"),
        ({"workload": {"gpu_hours": 1}, "card_counts": []}, "card_counts", "must be a list of at least 1 item"),
        ({"workload": {"gpu_hours": 1}, "gpus": "rtx4090"}, "gpus", "must be a list, got text"),
        ({"workload": {"gpu_hours": 1}, "rank_by": "speed"}, "rank_by", "must be one of cost, time, value; got 'speed'"),
        ({"workload": {"gpu_hours": 1}, "lang": "fr"}, "lang", "must be one of en, zh; got 'fr'"),
        ({}, "workload", "is required"),
        ({"workload": {"gpu_hours": 1}, "regions": ["beijing"]}, "regions", "unknown region 'beijing'; valid: jiangsu, shenzhen"),
    ],
)  # fmt: skip
async def test_schema_and_meaning_errors_are_one_422_with_a_sentence(
    client: Client, body: dict[str, Any], field: str, reason: str
) -> None:
    response = await client.post("/quote", json=body)
    assert response.status_code == 422
    problem = response.json()
    assert (problem["status"], problem["title"], problem["type"]) == (
        422,
        "Invalid request",
        PROBLEMS + "invalid-request",
    )
    assert problem["errors"] == [{"field": field, "reason": reason, "in": "body"}]
    assert "Expected" not in response.text and "`" not in response.text  # msgspec's own wording stays out


async def test_an_unknown_field_lists_the_valid_ones(client: Client) -> None:
    response = await client.post("/quote", json={"workload": {"gpu_hours": 1, "hourz": 2}})
    assert response.status_code == 422
    (error,) = response.json()["errors"]
    assert error["field"] == "workload.hourz"
    assert error["reason"].startswith("unknown field; valid fields: gpu_hours, ")
    assert "reference_gpu" in error["reason"] and "model_params_b" in error["reason"]


async def test_a_number_too_large_for_a_float_names_its_field_and_range(client: Client) -> None:
    response = await client.post("/quote", content=b'{"workload": {"gpu_hours": 1e400}}', headers=JSON)
    assert response.status_code == 422
    assert response.json()["errors"] == [
        {"field": "workload.gpu_hours", "reason": "must be a number ≥ 0.001 and ≤ 10000000", "in": "body"}
    ]


async def test_query_errors_say_in_query(client: Client) -> None:
    limit = await client.get("/offers", params={"limit": 0})
    region = await client.get("/offers", params={"region": "beijing"})
    assert (limit.status_code, region.status_code) == (422, 422)
    assert limit.json()["errors"] == [
        {"field": "limit", "reason": "must be a whole number ≥ 1", "in": "query"}
    ]
    assert region.json()["errors"] == [
        {"field": "region", "reason": "unknown region 'beijing'; valid: jiangsu, shenzhen", "in": "query"}
    ]
    assert limit.json()["type"] == region.json()["type"] == PROBLEMS + "invalid-request"


async def test_an_empty_body_says_so(client: Client) -> None:
    for content in (b"", b"  \n"):
        response = await client.post("/quote", content=content, headers=JSON)
        assert response.status_code == 400
        problem = response.json()
        assert problem["type"] == PROBLEMS + "request-body-is-empty"
        assert problem["detail"].startswith("request body is empty")
        assert problem["errors"][0]["field"] == "body"


async def test_malformed_json_has_one_type_and_the_offset_in_the_detail(client: Client) -> None:
    colon = await client.post("/quote", content=b'{"workload" 1}', headers=JSON)
    comma = await client.post("/quote", content=b'{"workload": {"gpu_hours": 48},}', headers=JSON)
    # The fault in each: the missing ':' is byte 12 (after `{"workload" `), the stray '}' byte 31.
    assert (colon.status_code, comma.status_code) == (400, 400)
    assert colon.json()["type"] == comma.json()["type"] == PROBLEMS + "malformed-json"
    assert colon.json()["detail"] == "the body is not valid JSON: JSON is malformed: expected ':' (byte 12)"
    assert comma.json()["detail"].endswith("(byte 31)")


async def test_a_document_fault_wins_over_a_field_fault_before_it(client: Client) -> None:
    # gpu_hours is wrong, but the document is cut short: the caller must fix the JSON first.
    response = await client.post("/quote", content=b'{"workload": {"gpu_hours": "48"}', headers=JSON)
    assert response.status_code == 400
    assert response.json()["type"] == PROBLEMS + "malformed-json"


@pytest.mark.parametrize(
    ("content", "headers", "status", "kind"),
    [
        (b'{"workload": {"gpu_hours": 1}, "limit": 1, "limit": 2}', JSON, 400, "duplicate-key"),
        (b'{"workload": ' + b"[" * 1000 + b"]" * 1000 + b"}", JSON, 400, "body-nested-too-deeply"),
        (b'{"workload": {"gpu_hours": 1}}', {"Content-Type": "text/plain"}, 415, "unsupported-media-type"),
        (b'{"workload": {"gpu_hours": 1}, "gpus": [' + b'"rtx4090",' * 8000 + b'"h800"]}', JSON, 413,
         "request-body-too-large"),
    ],
)  # fmt: skip
async def test_a_body_that_cannot_be_read_keeps_its_own_status(
    client: Client, content: bytes, headers: dict[str, str], status: int, kind: str
) -> None:
    response = await client.post("/quote", content=content, headers=headers)
    assert response.status_code == status
    problem = response.json()
    assert problem["type"] == PROBLEMS + kind
    assert problem["errors"][0]["in"] == "body"


@pytest.mark.parametrize(
    ("ratios", "field", "says"),
    [
        ({"a100-80g": 2.0, "h800": "fast"}, "workload.speed_ratios.h800", "must be a number, got text"),
        ({"h800": 300}, "workload.speed_ratios.h800", "must be a number ≤ 100"),
        ({"RTX 4090": 1.2}, "workload.speed_ratios.RTX 4090", "rtx4090 is workload.reference_gpu"),
    ],
)
async def test_a_speed_ratio_error_names_the_gpu(client: Client, ratios: Any, field: str, says: str) -> None:
    body = {"workload": {"gpu_hours": 48, "reference_gpu": "rtx4090", "speed_ratios": ratios}}
    response = await client.post("/quote", json=body)
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert error["field"] == field and says in error["reason"]


@pytest.mark.parametrize("city", ["shanghai", "上海", "Beijing", "杭州"])
async def test_data_kept_in_a_city_without_offers_is_copied_to_every_offer(client: Client, city: str) -> None:
    body = {
        "workload": {"gpu_hours": 48, "data_city": city, "dataset_gb": 500},
        "gpus": ["rtx4090"],
        "pricing": ["card_hour"],
        "card_counts": [1],
        "vendors": ["js-suzhou-ref"],
    }
    response = await client.post("/quote", json=body)
    assert response.status_code == 200, response.text
    (quote,) = response.json()["quotes"]
    # 500 GB at 500 Mbit/s: 500 × 8,000 / 500 / 3,600 = 2.22 h on top of 48 h.
    assert quote["hours"]["expected"] == 50.22


async def test_a_dataset_size_without_its_city_is_refused(client: Client) -> None:
    response = await client.post("/quote", json={"workload": {"gpu_hours": 48, "dataset_gb": 500}})
    assert response.status_code == 422
    (error,) = response.json()["errors"]
    assert error["field"] == "workload.dataset_gb" and "give data_city too" in error["reason"]
