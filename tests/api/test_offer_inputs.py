"""``GET /offers`` inputs: cities (also in Chinese), unknown parameters refused; ``GET /models``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.cli.commands import openapi_document
from service.tools.mcp import tool_definitions

Client = AsyncTestClient[Any]


@pytest.mark.parametrize("city", ["suzhou", "Suzhou", "苏州", "苏州市"])
async def test_city_filters_to_that_city(client: Client, city: str) -> None:
    response = await client.get("/offers", params={"city": city})
    assert response.status_code == 200, response.text
    items = response.json()["items"]
    assert items, "the reference catalog has Suzhou offers"
    assert {item["city"] for item in items} == {"suzhou"}


async def test_an_unknown_city_lists_the_known_ones(client: Client) -> None:
    response = await client.get("/offers", params={"city": "beijing"})
    assert response.status_code == 422
    error = response.json()["errors"][0]
    assert error["field"] == "city"
    assert "suzhou" in error["reason"] and "nanjing" in error["reason"]


@pytest.mark.parametrize("name", ["gpus", "cities", "page"])
async def test_unknown_parameters_are_a_400_naming_them(client: Client, name: str) -> None:
    response = await client.get("/offers", params={name: "h800"})
    assert response.status_code == 400
    body = response.json()
    assert [error["field"] for error in body["errors"]] == [name]
    assert "gpu" in body["errors"][0]["reason"]  # the valid parameters are listed


async def test_models_lists_named_models_with_parameters(client: Client) -> None:
    response = await client.get("/models")
    assert response.status_code == 200
    models = {model["id"]: model for model in response.json()["models"]}
    assert models["qwen2.5-72b"]["params_total_b"] == pytest.approx(72.7)
    deepseek = models["deepseek-v3"]
    assert deepseek["params_active_b"] < deepseek["params_total_b"]
    assert all(model["source"] for model in models.values())


@pytest.mark.parametrize("path", ["/gpus", "/models"])
async def test_catalog_lists_refuse_unknown_parameters(client: Client, path: str) -> None:
    response = await client.get(path, params={"x": "1"})
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "x", "reason": "unknown query parameter; this route takes none", "in": "query"}
    ]


async def test_a_page_size_given_twice_is_refused(client: Client) -> None:
    response = await client.get("/offers?limit=10&limit=20")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"field": "limit", "reason": "given twice: give it once", "in": "query"}
    ]


async def test_an_unknown_pricing_lists_the_accepted_values(client: Client) -> None:
    response = await client.get("/offers", params={"pricing": "foo"})
    assert response.status_code == 422
    (error,) = response.json()["errors"]
    assert error == {
        "field": "pricing",
        "reason": "must be one of bundle, card_hour, node_hour, term; got 'foo'",
        "in": "query",
    }


def test_the_list_offers_tool_says_it_takes_plural_filters_where_http_takes_singular() -> None:
    tools = {tool.name: tool for tool in tool_definitions(json.loads(openapi_document()))}
    description = tools["list_offers"].description or ""
    assert "`cities`" in description and "`city=suzhou&city=nanjing`" in description
    assert "cities" in tools["list_offers"].input_schema["properties"]
