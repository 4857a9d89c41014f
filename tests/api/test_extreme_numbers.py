"""Numbers at and past the ends of what a person could mean: past them a 422 naming the field (the
engine never sees 5e-324 or 1e-300), at them a 200 whose every figure is a finite number."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.settings import Settings

Client = AsyncTestClient[Litestar]
REF: dict[str, Any] = {"reference_gpu": "rtx4090"}


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    async with AsyncTestClient(create_app(Settings())) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"workload": {"gpu_hours": 48, "cross_node_factor": 5e-324}, "card_counts": [16]}, "workload.cross_node_factor"),
        ({"workload": {"gpu_hours": 48, **REF, "speed_ratios": {"h800": 1e-300}}}, "workload.speed_ratios.h800"),
        ({"workload": {"gpu_hours": 48, **REF, "speed_ratios": {"h800": 1e300}}}, "workload.speed_ratios.h800"),
        ({"workload": {"gpu_hours": 48}, "deadline_hours": 1e-9}, "deadline_hours"),
        ({"workload": {"gpu_hours": 48}, "budget_cny": 5e-324}, "budget_cny"),
        ({"workload": {"gpu_hours": 48, "data_city": "suzhou", "dataset_gb": 1e-300}}, "workload.dataset_gb"),
        ({"workload": {"gpu_hours": 48, "model_params_b": 1e-300, "task": "lora"}}, "workload.model_params_b"),
        ({"workload": {"gpu_hours": 48}, "min_gpu_memory_gb": 1e-300}, "min_gpu_memory_gb"),
        ({"workload": {"gpu_hours": 1e308}}, "workload.gpu_hours"),
        ({"workload": {"gpu_hours": 48}, "time_value_cny_per_hour": 1e308}, "time_value_cny_per_hour"),
    ],
)  # fmt: skip
async def test_a_number_past_its_range_is_a_422_naming_the_field(
    client: Client, body: dict[str, Any], field: str
) -> None:
    response = await client.post("/quote", json=body)
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert error["field"] == field and error["reason"].startswith("must be a number")


def _figures(quote: dict[str, Any]) -> list[float]:
    ranges = (quote[name] for name in ("speedup", "hours", "cost_cny"))
    return [value for r in ranges for value in r.values()] + [quote["billed_hours"], quote["hourly_rate_cny"]]


@pytest.mark.parametrize(
    "body",
    [
        {"workload": {"gpu_hours": 1e7, "reference_gpu": "rtx4090", "speed_ratios": {"h800": 0.01}, "cross_node_factor": 0.1}, "card_counts": [1, 1024]},
        {"workload": {"gpu_hours": 0.001, "reference_gpu": "rtx4090", "speed_ratios": {"h800": 100}}, "card_counts": [1, 16]},
        {"workload": {"gpu_hours": 1e7, "communication": "heavy", "data_city": "shanghai", "dataset_gb": 1e7}, "deadline_hours": 0.01, "rank_by": "time"},
        {"workload": {"gpu_hours": 1e7}, "budget_cny": 0.01, "rank_by": "value", "time_value_cny_per_hour": 1e9},
        {"workload": {"kind": "serving", "hours": 1e7, "replicas": 1024, "model_params_b": 100_000, "task": "inference"}},
        {"workload": {"gpu_hours": 1e7, "model_params_b": 0.001, "task": "full_finetune"}, "min_gpu_memory_gb": 10_000},
        {"workload": {"gpu_hours": 1e7}, "scaling": {"2": [1, 1], "1024": [1, 1024]}, "card_counts": [2, 1024]},
    ],
)  # fmt: skip
async def test_numbers_at_the_ends_of_their_ranges_give_finite_answers(
    client: Client, body: dict[str, Any]
) -> None:
    response = await client.post("/quote", json=body)
    assert response.status_code == 200, response.text
    for quote in response.json()["quotes"]:
        assert all(math.isfinite(value) and value >= 0 for value in _figures(quote)), quote["id"]
