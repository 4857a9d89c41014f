"""``GET /offers`` inputs: cities (also in Chinese), unknown parameters refused; ``GET /models``."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import AsyncTestClient

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
