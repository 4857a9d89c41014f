"""A job given by its model and data: FLOPs from the tokens, hours on each GPU model from its peak and the MFU.

And memory always checked for a named model: without a task, at the least any task needs, said first.
"""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from schemas.quote import Quote
from tests.summary.reference import quote_reference

Client = AsyncTestClient[Any]

LORA_72B: dict[str, Any] = {"tokens": 5e7, "model": "qwen2.5-72b", "task": "lora"}


def _quote(body: dict[str, Any], offer_id: str, cards: int) -> Quote:
    response = quote_reference(body)
    return next(quote for quote in response.quotes if quote.offer_id == offer_id and quote.cards == cards)


def test_lora_on_a_72b_model_over_50m_tokens_is_11_7_h100_class_card_hours() -> None:
    response = quote_reference({"workload": LORA_72B, "gpus": ["h800"], "card_counts": [8]})
    assert response.sizing is not None
    # 4 × 72.7e9 × 5e7 = 1.454e19 FLOPs; at 0.35 of 989 TFLOPS: 42,006 s = 11.67 h on one H800.
    assert response.sizing.flops == pytest.approx(1.454e19)
    assert response.sizing.mfu_source == "default"
    quote = next(quote for quote in response.quotes if quote.offer_id == "js-nanjing-ref:h800")
    estimate = next(warning for warning in quote.warnings if warning.startswith("hours estimated"))
    assert "11.67 h on one card (8.17–20.42 h)" in estimate
    # 8 cards at 5× (4.5–5.5): 11.67 / 5 = 2.33 h.
    assert quote.hours.expected == 2.33
    assert "estimated from the job's FLOPs" in response.summary


def test_each_gpu_model_is_sized_by_its_own_peak_not_converted() -> None:
    response = quote_reference({"workload": LORA_72B, "card_counts": [8]})
    h800 = _quote({"workload": LORA_72B, "card_counts": [8]}, "js-nanjing-ref:h800", 8)
    a100 = _quote({"workload": LORA_72B, "card_counts": [8]}, "js-nanjing-ref:a100-80g", 8)
    # Same FLOPs, peaks 989 and 312 TFLOPS: the A100 takes 989 / 312 as long.
    assert a100.hours.expected == pytest.approx(h800.hours.expected * 989 / 312, abs=0.03)  # shown to 0.01 h
    assert not any("not comparable" in warning for warning in response.warnings)


def test_a_measured_mfu_replaces_the_range() -> None:
    body = {"workload": {**LORA_72B, "mfu": 0.5}, "gpus": ["h800"], "card_counts": [1, 8]}
    response = quote_reference(body)
    assert response.sizing is not None and response.sizing.mfu_source == "caller"
    quote = next(q for q in response.quotes if q.offer_id == "js-nanjing-ref:h800" and q.cards == 8)
    estimate = next(warning for warning in quote.warnings if warning.startswith("hours estimated"))
    assert "your measured utilization 0.5" in estimate
    assert "8.17 h on one card" in estimate and "–" not in estimate.split("on one card")[1]


def test_a_mixture_of_experts_model_is_sized_on_its_active_parameters() -> None:
    body = {"workload": {"tokens": 1e9, "model": "mixtral-8x7b", "task": "full_finetune"}, "card_counts": [8]}
    response = quote_reference(body)
    assert response.sizing is not None
    assert response.sizing.active_params_b == 12.9
    assert response.sizing.flops == pytest.approx(6 * 12.9e9 * 1e9)


@pytest.mark.parametrize(
    ("workload", "field", "says"),
    [
        ({"tokens": 1e8, "model": "qwen2.5-7b"}, "workload.task", "needs the task"),
        ({"tokens": 1e8, "task": "lora"}, "workload.tokens", "needs the model"),
        (
            {"tokens": 1e8, "gpu_hours": 10, "model": "qwen2.5-7b", "task": "lora"},
            "workload.tokens",
            "not both",
        ),
        (
            {"tokens": 1e8, "model": "qwen2.5-7b", "task": "lora", "reference_gpu": "rtx4090"},
            "workload.reference_gpu",
            "nothing to convert",
        ),
        ({"gpu_hours": 10, "mfu": 0.4}, "workload.mfu", "workload.tokens"),
        ({"kind": "serving", "hours": 10, "tokens": 1e8}, "workload.tokens", "not a serving one"),
        ({"model": "qwen2.5-7b"}, "workload.gpu_hours", "or give workload.tokens"),
    ],
)
async def test_a_sizing_mistake_is_a_422_naming_the_field(
    client: Client, workload: dict[str, Any], field: str, says: str
) -> None:
    response = await client.post("/quote", json={"workload": workload})
    assert response.status_code == 422, response.text
    error = response.json()["errors"][0]
    assert error["field"] == field
    assert says in error["reason"]


async def test_tokens_over_http_give_the_sizing_and_the_estimate(client: Client) -> None:
    body = {"workload": LORA_72B, "gpus": ["h800"], "card_counts": [8], "lang": "zh"}
    response = await client.post("/quote", json=body)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["sizing"]["flops_per_param_token"] == 4.0
    assert answer["sizing"]["mfu"] == {"low": 0.2, "expected": 0.35, "high": 0.5}
    assert "浮点运算量" in answer["summary"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_named_model_without_a_task_is_checked_at_the_memory_floor_said_first(lang: str) -> None:
    response = quote_reference({"workload": {"gpu_hours": 48, "model": "qwen2.5-72b"}, "lang": lang})
    # 72.7B × 0.6 bytes (4-bit QLoRA / int4 inference): 43.62 GB, so never one 24 GB card.
    assert response.memory is not None and response.memory.needed_gb == 43.62
    assert response.memory.min_cards["rtx4090"] == 3
    opening = response.summary.split("。" if lang == "zh" else ". ", 1)[0]
    assert ("Memory checked only at the least any task needs" if lang == "en" else "显存只按") in opening
    assert "43.62 GB" in opening
    assert all(not (quote.gpu == "rtx4090" and quote.cards < 3) for quote in response.quotes)


def test_with_its_task_the_model_is_checked_at_its_own_figure() -> None:
    response = quote_reference({"workload": {"gpu_hours": 48, "model": "qwen2.5-72b", "task": "lora"}})
    assert response.memory is not None and response.memory.needed_gb == 174.48
    assert "least any task needs" not in response.summary
