"""Every workload input a caller can bring reads the same over MCP as over HTTP: a job sized by its tokens,
independent runs, serving by throughput, growth, and their mistakes."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from tests.mcp.test_mcp_server import server, texts

pytestmark = pytest.mark.slow

Client = AsyncTestClient[Any]

BODIES: list[dict[str, Any]] = [
    {"workload": {"tokens": 5e7, "model": "qwen2.5-72b", "task": "lora"}, "gpus": ["h800"], "card_counts": [8]},
    {"workload": {"tokens": 2e8, "model": "qwen2.5-7b", "task": "full_finetune", "mfu": 0.4}, "lang": "zh"},
    {"workload": {"kind": "independent", "gpu_hours": 400, "runs": 200, "reference_gpu": "rtx4090"}, "card_counts": [8]},
    {"workload": {"kind": "independent", "gpu_hours": 556, "cards_per_run": 2}, "deadline_hours": 72},
    {"workload": {"kind": "serving", "hours": 720, "model": "llama-3.1-70b", "precision": "int8", "target_tokens_per_s": 3000}},
    {"workload": {"kind": "serving", "hours": 24, "model": "qwen2.5-7b", "target_tokens_per_s": 500, "concurrent_requests": 4}},
    {"workload": {"gpu_hours": 200, "reference_gpu": "rtx4090", "growth_factor": 2.5}, "card_counts": [8, 16]},
    {"workload": {"kind": "serving", "hours": 200, "model": "qwen2.5-32b"}, "budget_cny": 1100},
]  # fmt: skip

MISTAKES: list[tuple[dict[str, Any], str]] = [
    ({"workload": {"tokens": 1e8, "model": "qwen2.5-7b"}}, "workload.task"),
    ({"workload": {"gpu_hours": 10, "runs": 3}}, "workload.runs"),
    (
        {"workload": {"kind": "serving", "hours": 10, "target_tokens_per_s": 100}},
        "workload.target_tokens_per_s",
    ),
    ({"workload": {"gpu_hours": 10, "growth_factor": 0.5}}, "workload.growth_factor"),
]


async def test_new_workload_inputs_answer_alike_over_mcp_and_http(http: Client) -> None:
    async with server() as mcp:
        answers = [await mcp.call_tool("quote", body) for body in BODIES]
        mistakes = [await mcp.call_tool("quote", body) for body, _ in MISTAKES]

    for body, result in zip(BODIES, answers, strict=True):
        assert not result.is_error, texts(result)
        response = await http.post("/quote", json=body)
        assert response.status_code == 200, response.text
        over_http, over_mcp = response.json(), result.structured_content
        assert over_mcp is not None
        # The same quotes and paragraph (the snapshot is each process's own: leave its version out).
        assert [q["id"] for q in over_mcp["quotes"]] == [q["id"] for q in over_http["quotes"]]
        assert over_mcp["summary"] == over_http["summary"]
        for key in ("sizing", "alternatives"):
            assert over_mcp.get(key) == over_http.get(key), key

    for (body, field), result in zip(MISTAKES, mistakes, strict=True):
        assert result.is_error
        (message,) = texts(result)
        response = await http.post("/quote", json=body)
        assert response.status_code == 422
        assert response.json()["errors"][0]["field"] == field
        assert message.startswith(f"{field}: ")
