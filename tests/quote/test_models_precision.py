"""A model named instead of sized (``workload.model``), and the weights' precision (``workload.precision``)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from schemas.offer import CardHourPricing, Offer
from schemas.quote import QuoteRequest, QuoteResponse, Workload
from service.errors import InvalidRequest
from service.quote import build_quote
from service.quote.model import memory_needed_gb
from tests.quote.factories import offer, options, snapshot

RTX4090 = offer("js-suzhou", "4090", pricing=CardHourPricing(cny_per_card_hour=8.0))
H800 = offer("sz-x", "h800", gpu="h800", pricing=CardHourPricing(cny_per_card_hour=40.0))


def quote(
    card_counts: list[int], *, offers: Sequence[Offer] = (RTX4090,), **workload: object
) -> QuoteResponse:
    request = QuoteRequest(
        workload=Workload(gpu_hours=10.0, **workload),  # type: ignore[arg-type]
        card_counts=card_counts,
    )
    return build_quote(snapshot(offers), request, options=options())


@pytest.mark.parametrize(("model", "params_b"), [(None, 14.8), ("qwen2.5-14b", None)])
def test_a_14b_model_at_int4_fits_one_4090(model: str | None, params_b: float | None) -> None:
    # 14.8 × 0.5 × 1.2 = 8.9 GB ≤ 21.6 GB usable.
    response = quote([1], task="inference", precision="int4", model=model, model_params_b=params_b)
    assert [item.cards for item in response.quotes] == [1]
    assert response.excluded.memory == 0


@pytest.mark.parametrize("precision", [None, "bf16"])
def test_the_same_model_at_bf16_needs_more_than_one_4090(precision: str | None) -> None:
    # 14.8 × 2 × 1.2 = 35.5 GB: two cards.
    response = quote([1, 2], model_params_b=14.8, task="inference", precision=precision)
    assert [item.cards for item in response.quotes] == [2]
    assert response.excluded.memory > 0


def test_a_named_model_quotes_as_its_parameter_count() -> None:
    by_name = quote([1, 2, 4, 8], offers=(RTX4090, H800), model="Qwen/Qwen2.5-72B-Instruct", task="lora")
    by_size = quote([1, 2, 4, 8], offers=(RTX4090, H800), model_params_b=72.7, task="lora")
    assert by_name.excluded == by_size.excluded
    assert by_name.excluded.memory > 0
    assert by_name.quotes == by_size.quotes
    assert by_name.quotes


def test_model_and_size_may_both_be_given_when_they_agree() -> None:
    agreeing = quote([1, 2, 4, 8], offers=(H800,), model="qwen2.5-72b", model_params_b=72.5, task="lora")
    assert agreeing.quotes == quote([1, 2, 4, 8], offers=(H800,), model="qwen2.5-72b", task="lora").quotes
    with pytest.raises(InvalidRequest) as raised:
        quote([1], model="qwen2.5-72b", model_params_b=70, task="lora")
    assert raised.value.field == "workload.model"
    assert "72.7" in raised.value.reason


def test_an_unknown_model_names_the_field_and_close_matches() -> None:
    with pytest.raises(InvalidRequest) as raised:
        quote([1], model="qwen2.5-72", task="inference")
    assert raised.value.field == "workload.model"
    assert "qwen2.5-72b" in raised.value.reason


def test_a_mixture_of_experts_model_is_sized_on_its_total_parameters() -> None:
    # DeepSeek-V3 at int4: 671 × 0.6 = 402.6 GB needs 6 × 80 GB cards; its 37B active would fit one.
    response = quote([1, 4, 8], offers=(H800,), model="deepseek-v3", task="inference", precision="int4")
    assert [item.cards for item in response.quotes] == [8]
    assert response.excluded.memory == 2


@pytest.mark.parametrize(
    ("task", "precision", "bytes_per_param"),
    [
        ("inference", "int8", 1.2),
        ("inference", "fp8", 1.2),
        ("lora", "int4", 0.5 + 0.4),  # the frozen base shrinks; adapters and activations do not
        ("qlora", None, 0.6),  # a 4-bit base by default
        ("qlora", "int4", 0.6),
        ("qlora", "bf16", 2.1),
        ("full_finetune", "int4", 16.0),  # mixed-precision training keeps its bf16/fp32 states
        ("pretrain", "fp8", 16.0),
    ],
)
def test_precision_changes_the_weights_bytes_only(
    task: str, precision: str | None, bytes_per_param: float
) -> None:
    needed = memory_needed_gb(10.0, task, precision=precision)  # type: ignore[arg-type]
    assert needed == pytest.approx(10.0 * bytes_per_param)
